// Probe (doctor --deep): a real kernel on every GPU through the driver API alone -- cuInit, each
// device's primary context, a tiny PTX kernel the driver compiles for the GPU it has, launched,
// its 4096 results copied back and checked, and the time it took. No nvcc and no CUDA runtime
// are needed. Run in the query child: a driver that crashes or hangs costs a finding.
#include "probes.hpp"

namespace cudaenv::doctor::checks {

Finding smoke(Host& h) {
    if (!h.config().deep) {
        return skip("not run: cudaenv doctor --deep launches a small kernel on every GPU");
    }
    auto lib = h.loader().pick("libcuda.so.1");
    if (lib.path.empty()) {
        return skip("no libcuda.so.1 to run a kernel with (see the libcuda probe)");
    }
    const auto& a = h.facts().query("smoke", lib.path);
    if (!a.loaded || !a.error.empty() || !a.number("init_rc")) {
        return fail("the smoke test could not run: " +
                        (a.error.empty() ? std::string("no answer from the driver") : a.error),
                    "check the driver (the driver and libcuda probes say what is wrong)");
    }
    if (*a.number("init_rc") != 0) {
        return fail("cuInit fails: " + a.get("init_error").value_or("") + " (" +
                        a.get("init_rc").value_or("") + "): no CUDA program can run",
                    "see the libcuda probe's finding (the driver's state, a stub library, "
                    "the fabric manager on NVSwitch systems: 802)");
    }
    auto devices = a.number("device_count").value_or(0);
    if (devices <= 0) {
        return fail("cuInit works but CUDA sees no device",
                    "check CUDA_VISIBLE_DEVICES, MIG instances and the container's GPU access");
    }
    std::vector<Issue> issues;
    std::vector<std::string> details;
    for (long long i = 0; i < devices; ++i) {
        auto k = [&](const char* f) { return "dev." + std::to_string(i) + "." + f; };
        std::string label = gpu_label(static_cast<std::size_t>(i), a.get(k("name")).value_or("?"));
        std::string ms = a.get(k("ms")).value_or("?");
        if (auto step = a.get(k("step"))) {
            issues.push_back({Status::fail,
                              label + ": " + *step + " failed: " + a.get(k("error")).value_or("") +
                                  " (" + a.get(k("rc")).value_or("") + ")",
                              "reset the GPU (sudo nvidia-smi -r -i " + std::to_string(i) +
                                  ") or reboot; if it recurs, check the kernel log (the xid "
                                  "probe) and the GPU's health"});
            continue;
        }
        auto wrong = a.number(k("wrong")).value_or(-1);
        auto checked = a.get(k("checked")).value_or("?");
        if (wrong != 0) {
            issues.push_back(
                {Status::fail,
                 label + ": the kernel ran but " +
                     (wrong < 0 ? std::string("its results were not read")
                                : std::to_string(wrong) + " of " + checked + " results are wrong") +
                     ": the GPU computes wrong values",
                 "take it out of service: dcgmi diag -r 3, then contact your "
                 "hardware vendor"});
            continue;
        }
        details.push_back(label + ": kernel compiled, launched and checked (" + checked +
                          " values) in " + ms + " ms");
    }
    return verdict(std::move(issues),
                   ok("a kernel ran and computed right on " + std::to_string(devices) + " GPU" +
                          (devices == 1 ? "" : "s"),
                      details));
}

} // namespace cudaenv::doctor::checks
