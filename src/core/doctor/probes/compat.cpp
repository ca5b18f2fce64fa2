// Probe: CUDA forward compatibility (cuda_compat) of the selected toolkit (docs/compat.md):
// whether this machine uses the version's compat libraries, why not, and whether they answer;
// a compat libcuda on the machine-wide loader path (error 803 on a newer kernel module, 804 on
// a GPU forward compatibility does not support); a driver too old that --compat would fix.
#include "../../activate/compat.hpp"

#include "../../manifest/driver_indexes.hpp"
#include "../../manifest/gpu_support.hpp"
#include "probes.hpp"

namespace cudaenv::doctor::checks {

namespace {

using CompatKind = activate::CompatState::Kind;

sys::MachineGpus machine_of(Host& h) {
    sys::MachineGpus m;
    m.driver = h.facts().driver().version();
    for (const auto& g : h.facts().pci_gpus()) {
        m.gpus.push_back({g.address, manifest::normalize_pci_id(g.device_id), g.subsystem});
    }
    return m;
}

/// A compat libcuda where every program finds it: the loader's libcuda.so.1 is in a compat/
/// folder other than the kernel module's own version.
std::optional<Finding> machine_wide_compat(Host& h) {
    auto pick = h.loader().pick("libcuda.so.1");
    if (pick.path.find("/compat/") == std::string::npos || pick.via == "LD_LIBRARY_PATH") {
        return std::nullopt;
    }
    auto driver = h.facts().driver().version();
    std::string d = driver ? driver->str() : "unknown";
    return fail("libcuda.so.1 resolves machine-wide (" + pick.via +
                    ") to a forward-compatibility "
                    "libcuda, " +
                    pick.path + ", beside kernel module " + d +
                    ": CUDA fails with error 803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) once the "
                    "driver is upgraded past it, and with 804 on GPUs that are not data-center "
                    "parts",
                "take the compat folder out of /etc/ld.so.conf.d (then sudo ldconfig): cudaenv "
                "puts a version's compat/ on LD_LIBRARY_PATH per process, only where it is needed",
                {"libcuda.so.1: " + pick.path});
}

/// The version has no compat libraries: say whether they would help here.
Finding not_installed(Host& h, const Toolkit& t) {
    const auto* rel = h.facts().toolkit_release();
    auto driver = h.facts().driver().version();
    if (!rel || !rel->driver_min || !driver) {
        return skip("the version has no forward-compatibility libraries");
    }
    if (!(*driver < *rel->driver_min)) {
        return ok("not needed: driver " + driver->str() + " runs CUDA " + rel->version.str());
    }
    auto bad = gpus_without_forward_compat(h);
    const auto* comp = rel->component("cuda_compat");
    // Jetson's cuda_compat (linux-aarch64 only: 11.8, 12.x) is not the data-center forward
    // compatibility this probe is about
    if (comp && !comp->platforms.count("linux-x86_64") && !comp->platforms.count("linux-sbsa")) {
        comp = nullptr;
    }
    // from CUDA 13.4 NVIDIA ships it with the driver: a per-driver index the manifests know
    bool shipped = comp != nullptr;
    for (const char* p : {"linux-x86_64", "linux-sbsa"}) {
        shipped = shipped || manifest::driver_compat_for(h.manifests().driver_indexes(), *rel, p);
    }
    bool per_driver =
        Version::compare_numeric(rel->version, manifest::compat_per_driver_from()) >= 0;
    if (!bad.empty() || h.facts().pci_gpus().empty() || !shipped) {
        return skip("driver " + driver->str() + " is older than CUDA " + rel->version.str() +
                    " needs, and forward compatibility cannot help: " +
                    (!shipped && per_driver
                         ? "from CUDA 13.4 NVIDIA ships cuda_compat with the driver, and the "
                           "manifests know no driver index with cuda_compat for it"
                     : !shipped    ? "NVIDIA ships no cuda_compat for it"
                     : bad.empty() ? "no NVIDIA GPU is on the PCI bus"
                                   : bad.front() + " is not a data-center GPU (error 804)"));
    }
    std::string spec = t.cudaenv_version ? *t.cudaenv_version : rel->version.str();
    return warn("driver " + driver->str() + " is older than the " + rel->driver_min->str() +
                    " CUDA " + rel->version.str() +
                    " needs, and this machine's GPUs support forward compatibility",
                "cudaenv install " + spec +
                    " --compat (its compat libraries are then used by "
                    "exec, env, shims and modulefiles on this driver), or install driver >= " +
                    rel->driver_min->str());
}

/// compat/ is used: does its libcuda answer?
Finding used(Host& h, const activate::CompatState& s, const std::string& prefix) {
    std::string lib = prefix + "/compat/libcuda.so.1";
    std::vector<std::string> details{s.why, "compat libcuda: " + lib};
    const auto& a = h.facts().query("cuda", lib);
    auto init = a.number("init_rc");
    if (a.loaded && init && *init == 0) {
        return ok("CUDA runs on driver " + s.driver->str() +
                      " through the version's forward-compatibility libraries (driver " +
                      s.file->compat.str() + ")",
                  details);
    }
    if (init && *init == 803) {
        return fail("the compat libcuda (driver " + s.file->compat.str() +
                        ") refuses kernel module " + s.driver->str() +
                        ": error 803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH); NVIDIA's forward "
                        "compatibility runs only on the driver branches it supports",
                    "install driver >= " + s.file->needs.str() +
                        " (the compat libraries are then left alone), or a driver branch this "
                        "cuda_compat supports (docs.nvidia.com/deploy/cuda-compatibility)",
                    details);
    }
    if (init && *init == 804) {
        return fail("the GPU refuses forward compatibility: error 804 "
                    "(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)",
                    "install driver >= " + s.file->needs.str() +
                        "; forward compatibility runs on data-center GPUs only",
                    details);
    }
    return fail(
        "the compat libcuda does not work: " +
            (a.error.empty() ? "cuInit returned " + std::to_string(init.value_or(-1)) : a.error),
        "reinstall the version with --compat (cudaenv install " +
            std::filesystem::path(prefix).filename().string() + " --compat)",
        details);
}

} // namespace

Finding compat(Host& h) {
    if (auto why = h.files().jetson_cannot(
            "forward compatibility on Jetson is L4T's own (cuda-compat for JetPack, "
            "cuda_compat_orin from CUDA 13.2), not the data-center cuda_compat this probe judges");
        !why.empty()) {
        return skip(why);
    }
    if (auto f = machine_wide_compat(h)) {
        return *f;
    }
    const auto& t = h.facts().toolkit();
    if (t.prefix.empty()) {
        return skip("no CUDA toolkit selected");
    }
    auto s = activate::compat_state(h.files().at(t.prefix), machine_of(h));
    switch (s.kind) {
    case CompatKind::not_installed:
        return not_installed(h, t);
    case CompatKind::damaged:
        return fail(s.why,
                    "cudaenv install " + std::filesystem::path(t.prefix).filename().string() +
                        " --compat (composes the version again)");
    case CompatKind::no_driver:
    case CompatKind::no_gpu:
        return skip(s.why);
    case CompatKind::driver_suffices:
        return ok("installed, not used: " + s.why);
    case CompatKind::gpu_unsupported: {
        auto bad = gpus_without_forward_compat(h);
        return warn(
            s.why,
            "install driver >= " + s.file->needs.str() +
                (bad.empty() ? "" : ": forward compatibility does not run on " + bad.front()));
    }
    case CompatKind::used:
        return used(h, s, t.prefix);
    }
    return skip(s.why);
}

} // namespace cudaenv::doctor::checks
