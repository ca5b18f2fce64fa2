// Probe 13: WSL2: libcuda must come from the Windows host through /usr/lib/wsl/lib; a Linux driver
// installed inside WSL breaks it.
#include "probes.hpp"

namespace cudaenv::doctor::checks {

Finding wsl(Host& h) {
    if (!h.facts().in_wsl()) {
        return skip("not WSL2");
    }
    std::vector<std::string> details;
    std::string remove = "remove the Linux driver inside WSL (sudo apt remove --purge "
                         "'nvidia-driver-*' 'libnvidia-compute-*'; sudo ldconfig): the Windows "
                         "driver provides the GPU";
    if (!h.files().exists("/dev/dxg")) {
        return fail("WSL without /dev/dxg: the Windows GPU driver is not exposed",
                    "install a current NVIDIA driver on Windows, then `wsl --update` and "
                    "`wsl --shutdown`");
    }
    if (h.files().is_dir("/proc/driver/nvidia") || h.files().is_dir("/sys/module/nvidia")) {
        return fail("a Linux NVIDIA kernel driver is loaded inside WSL2", remove);
    }
    auto p = h.loader().pick("libcuda.so.1");
    details.push_back("libcuda.so.1 -> " + (p.path.empty() ? "(not found)" : p.path));
    if (p.path.empty()) {
        return fail(
            "libcuda.so.1 is not found: /usr/lib/wsl/lib is not on the loader path",
            "echo /usr/lib/wsl/lib | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig",
            details);
    }
    if (p.path.rfind("/usr/lib/wsl/", 0) != 0) {
        return fail(
            "libcuda.so.1 loads from " + p.path + ", not from /usr/lib/wsl/lib", remove, details);
    }
    // a Linux driver's user-space libraries installed inside WSL (libnvidia-compute-*: files named
    // by the driver's version), even while the loader still picks WSL's: libcuda.so, the name
    // build tools and some frameworks open, or a later ldconfig order, reaches them
    for (const auto& dir : h.loader().default_lib_dirs()) {
        for (const auto& name : h.files().list(dir)) {
            if (name.starts_with("libcuda.so.") && name != "libcuda.so.1") {
                auto v = Version::try_parse(std::string_view(name).substr(11));
                if (v && v->size() >= 2 && v->major() >= 100) {
                    details.push_back("Linux driver library: " + dir + "/" + name);
                    return fail("a Linux NVIDIA driver's libraries are installed inside WSL2 (" +
                                    dir + "/" + name +
                                    "): programs that open libcuda.so get it instead of the "
                                    "Windows driver's",
                                remove,
                                details);
                }
            }
        }
    }
    return ok("WSL2: libcuda from /usr/lib/wsl/lib (the Windows driver); expect lower "
              "host-to-device throughput than native Linux",
              details);
}

} // namespace cudaenv::doctor::checks
