// Probe 3: libcuda.so.1, the driver's user-space half: found through the loader, not the
// link-time stub, and answering cuDriverGetVersion and cuInit (asked in a child process).
#include "probes.hpp"

namespace cudaenv::doctor::checks {

namespace {

std::string cu_error(long long rc) {
    switch (rc) {
    case 3:
        return "CUDA_ERROR_NOT_INITIALIZED";
    case 34:
        return "CUDA_ERROR_STUB_LIBRARY";
    case 35:
        return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 46:
        return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case 100:
        return "CUDA_ERROR_NO_DEVICE";
    case 304:
        return "CUDA_ERROR_OPERATING_SYSTEM";
    case 803:
        return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case 804:
        return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    case 999:
        return "CUDA_ERROR_UNKNOWN";
    default:
        return "CUresult " + std::to_string(rc);
    }
}

/// The link-time stub of the selected toolkit, or one the loader would find as libcuda.so.
std::string find_stub(Host& h) {
    const auto& t = h.facts().toolkit();
    if (!t.prefix.empty()) {
        std::vector<std::string> subs = {"/lib64/stubs/libcuda.so", "/lib/stubs/libcuda.so"};
        // the machine's own targets folder: x86_64-linux, sbsa-linux, a Jetson's aarch64-linux
        for (const auto& target : sys::cuda_targets(h.files().machine())) {
            subs.push_back("/targets/" + target + "/lib/stubs/libcuda.so");
        }
        for (const auto& sub : subs) {
            std::string p = (t.prefix == "/" ? "" : t.prefix) + sub;
            if (h.files().exists(p)) {
                return p;
            }
        }
    }
    auto p = h.loader().pick("libcuda.so");
    if (p.path.find("/stubs/") != std::string::npos) {
        return p.path;
    }
    return {};
}

/// Inside a container the driver's libraries come from the host, through the runtime.
std::string host_fix(const std::string& container) {
    return "start the " + container +
           " container with the host's GPUs and driver libraries (docker run --gpus all …, "
           "or --runtime=nvidia with NVIDIA_DRIVER_CAPABILITIES=compute,utility; NVIDIA "
           "Container Toolkit on the host); never install libcuda or a driver package in the "
           "image, and fix the driver on the host";
}

} // namespace

Finding libcuda(Host& h) {
    auto pick = h.loader().pick("libcuda.so.1");
    std::vector<std::string> details;
    for (const auto& s : pick.shadowed) {
        details.push_back("also present (not loaded): " + s);
    }
    if (pick.path.empty()) {
        std::string stub = find_stub(h);
        if (!stub.empty()) {
            details.push_back("link-time stub: " + stub +
                              " (for linking only; it cannot run programs)");
        }
        std::string summary =
            "libcuda.so.1 is not installed" +
            (stub.empty() ? std::string() : "; only the link-time stub " + stub + " is present");
        if (!h.facts().driver().module_loaded && !h.facts().in_wsl()) {
            return skip("no driver: " + summary, details);
        }
        if (!h.facts().container().empty()) {
            // The NVIDIA Container Toolkit mounts the host's driver libraries into the
            // container; installing them in the image breaks it when the host driver changes.
            return fail("libcuda.so.1 is not installed in this " + h.facts().container() +
                            " container" +
                            (stub.empty() ? std::string()
                                          : "; only the link-time stub " + stub + " is present"),
                        host_fix(h.facts().container()),
                        details);
        }
        return fail(summary,
                    "install the driver's user-space libraries to match the kernel module "
                    "(Debian: sudo apt install libcuda1; Ubuntu: sudo apt install "
                    "libnvidia-compute-<driver major>), then sudo ldconfig",
                    details);
    }
    details.insert(details.begin(), "libcuda.so.1 -> " + pick.path + " (" + pick.via + ")");
    if (pick.path.find("/stubs/") != std::string::npos) {
        return fail("libcuda.so.1 resolves to the link-time stub " + pick.path +
                        ": every CUDA program fails with CUDA_ERROR_STUB_LIBRARY",
                    "take the stubs folder out of " +
                        std::string(pick.via == "LD_LIBRARY_PATH" ? "LD_LIBRARY_PATH"
                                                                  : "/etc/ld.so.conf.d") +
                        " (then sudo ldconfig)",
                    details);
    }
    const auto& a = h.facts().query("cuda", pick.path);
    bool contained = !h.facts().container().empty();
    if (!a.loaded || (!a.error.empty() && !a.number("init_rc"))) {
        return fail("libcuda.so.1 (" + pick.path + ") does not load: " + a.error,
                    contained ? host_fix(h.facts().container())
                              : "reinstall the driver so that its libraries match the kernel "
                                "module",
                    details);
    }
    auto version = a.number("version").value_or(0);
    auto init = a.number("init_rc").value_or(-1);
    std::string supports = version > 0 ? "the driver supports CUDA up to " + cuda_from_int(version)
                                       : "the driver reports no CUDA version";
    details.push_back("cuDriverGetVersion: " + std::to_string(version) +
                      "; cuInit: " + (init == 0 ? std::string("CUDA_SUCCESS") : cu_error(init)));
    if (init == 34) {
        return fail("libcuda.so.1 (" + pick.path + ") is a stub library (CUDA_ERROR_STUB_LIBRARY)",
                    "remove that file's folder from the loader path and install the driver's "
                    "libcuda (then sudo ldconfig)",
                    details);
    }
    if (init == 0) {
        return ok("libcuda.so.1 from " + pick.path + ": " + supports, details);
    }
    if (!h.facts().driver().module_loaded && !h.facts().in_wsl()) {
        return skip("no driver: libcuda.so.1 is present (" + pick.path + ") but cuInit says " +
                        cu_error(init),
                    details);
    }
    bool compat_lib = pick.path.find("/compat/") != std::string::npos;
    std::string fix = init == 100 ? "check the driver probe and `nvidia-smi`; in a container, "
                                    "start it with --gpus all"
                      : init == 804
                          ? "libcuda.so.1 is a forward-compatibility libcuda and this GPU is not "
                            "a data-center part, which forward compatibility requires: take the "
                            "compat folder off the loader path and install a newer driver instead"
                      : init == 803 && compat_lib
                          ? "a forward-compatibility libcuda (" + pick.path +
                                ") runs only on the older driver branches it supports, not on "
                                "this kernel module: take the compat folder off the loader path"
                      : (init == 35 || init == 803) && contained
                          ? "the image brings its own libcuda.so.1, which does not match the "
                            "host's kernel module: remove the driver libraries from the image "
                            "and let the NVIDIA Container Toolkit mount the host's (--gpus all)"
                      : init == 35 || init == 803
                          ? "the user-space driver is older than the kernel module or the "
                            "runtime: reinstall the driver, then reboot"
                          : "check `dmesg | grep -i nvrm`; load nvidia-uvm (sudo modprobe "
                            "nvidia-uvm) and retry";
    return fail("cuInit fails: " + cu_error(init) + " (" + supports + ")", fix, details);
}

} // namespace cudaenv::doctor::checks
