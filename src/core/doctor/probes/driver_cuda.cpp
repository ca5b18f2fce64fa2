// Probe 4: the driver against the selected CUDA: the full-support minimum, the minor-version-
// compatibility floor of the CUDA major, or too old.
#include "probes.hpp"

namespace cudaenv::doctor::checks {

Finding driver_cuda(Host& h) {
    if (auto why = h.files().jetson_cannot(
            "the CUDA a Jetson runs is set by its JetPack release, not by a driver version in "
            "NVIDIA's tables (see the driver probe for L4T and JetPack)");
        !why.empty()) {
        return skip(why);
    }
    const auto& t = h.facts().toolkit();
    if (t.prefix.empty() || !t.cuda) {
        return skip("no CUDA toolkit selected");
    }
    auto driver = h.facts().driver().version();
    if (!driver) {
        return skip("the driver's version is unknown (no /proc/driver/nvidia/version, no NVML)");
    }
    const auto* rel = h.facts().toolkit_release();
    std::string cuda = t.cuda->truncated(std::min<std::size_t>(2, t.cuda->size())).str();
    if (!rel || !rel->driver_min) {
        return skip("the manifests know no driver minimum for CUDA " + cuda);
    }
    std::string d = driver->str();
    std::vector<std::string> details{
        "CUDA " + rel->version.str() + ": full support from driver " + rel->driver_min->str() +
        " (" + rel->driver_min_source + ")" +
        (rel->driver_compat_min
             ? ", minor-version compatibility from " + rel->driver_compat_min->str()
             : std::string())};
    auto cmp = [](const Version& a, const Version& b) { return Version::compare_numeric(a, b); };
    if (cmp(*driver, *rel->driver_min) >= 0) {
        return ok("driver " + d + " fully supports CUDA " + cuda +
                      " (needs >= " + rel->driver_min->str() + ")",
                  details);
    }
    std::string fix = "install driver >= " + rel->driver_min->str() +
                      " (Debian/Ubuntu: sudo apt install nvidia-driver-<newer>), or select a CUDA "
                      "this driver supports: cudaenv list --available, then cudaenv global <older>";
    if (rel->driver_compat_min && cmp(*driver, *rel->driver_compat_min) >= 0) {
        return warn("driver " + d + " runs CUDA " + cuda +
                        " only through minor-version compatibility (full support needs " +
                        rel->driver_min->str() + "): no JIT of newer PTX, some APIs unavailable",
                    fix,
                    details);
    }
    return fail("driver " + d + " is too old for CUDA " + cuda +
                    " (needs >= " + rel->driver_min->str() +
                    (rel->driver_compat_min
                         ? ", or >= " + rel->driver_compat_min->str() + " with compatibility"
                         : std::string()) +
                    "): programs fail with CUDA_ERROR_INSUFFICIENT_DRIVER or fall back to the CPU",
                fix,
                details);
}

} // namespace cudaenv::doctor::checks
