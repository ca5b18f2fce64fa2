// Probe 2: the kernel driver: module loaded, /proc/driver/nvidia/version, device nodes, and the
// kernel module agreeing with the user-space libraries.
#include "probes.hpp"

namespace cudaenv::doctor::checks {

namespace {

bool module_installed(Host& h) {
    auto rel = h.read("/proc/sys/kernel/osrelease", 256);
    if (!rel) {
        return false;
    }
    std::string r = rel->substr(0, rel->find('\n'));
    for (const char* sub : {"updates/dkms", "kernel/drivers/video", "extra", "updates", "misc"}) {
        std::string dir = "/lib/modules/" + r + "/" + sub;
        for (const auto& name : h.list(dir)) {
            if (name.rfind("nvidia.ko", 0) == 0) {
                return true;
            }
        }
    }
    return false;
}

} // namespace

Finding driver(Host& h) {
    if (h.in_wsl()) {
        return skip("WSL2: the Windows driver serves the GPU (see the wsl probe)");
    }
    const auto& d = h.driver();
    if (!d.module_loaded) {
        if (module_installed(h)) {
            return fail("the NVIDIA kernel module is installed but not loaded",
                        "sudo modprobe nvidia && sudo modprobe nvidia-uvm (if it fails, check "
                        "`dmesg | grep -i nvidia`; Secure Boot may block an unsigned module)");
        }
        if (!h.container().empty()) {
            return fail("no NVIDIA kernel driver visible in this " + h.container() + " container",
                        "start the container with the GPUs (docker run --gpus all …, with the "
                        "NVIDIA Container Toolkit on the host): the host's driver is passed in; "
                        "never install a driver inside the image");
        }
        return fail("no NVIDIA kernel driver: the nvidia module is not loaded",
                    "install the driver (Debian/Ubuntu: sudo apt install nvidia-driver; or "
                    "NVIDIA's .run installer), then reboot; \"Module nvidia not found\" from "
                    "modprobe means the install is broken: reinstall it");
    }
    std::vector<std::string> details;
    std::string version = d.module_version.value_or(d.nvml_version.value_or("unknown"));
    details.push_back("kernel module: " +
                      d.module_version.value_or("(no /proc/driver/nvidia/version)"));
    if (d.nvml_version) {
        details.push_back("user-space (NVML " + d.nvml_path + "): " + *d.nvml_version);
    } else if (!d.nvml_error.empty()) {
        details.push_back("NVML: " + d.nvml_error);
    }
    if (d.module_version && d.nvml_version && *d.module_version != *d.nvml_version) {
        return fail("driver/library version mismatch: kernel module " + *d.module_version +
                        ", user-space libraries " + *d.nvml_version,
                    "reboot (or unload and reload the module: sudo rmmod nvidia_uvm nvidia_drm "
                    "nvidia_modeset nvidia && sudo modprobe nvidia nvidia-uvm)",
                    details);
    }
    if (!d.nvml_path.empty() && !d.nvml_ok && !d.nvml_error.empty()) {
        details.push_back("NVML could not report: " + d.nvml_error);
    }
    if (d.nvml_ok && d.gpus.size() < h.pci_gpus().size()) {
        return fail("driver " + version + " sees " + std::to_string(d.gpus.size()) + " of the " +
                        std::to_string(h.pci_gpus().size()) +
                        " NVIDIA GPUs on the PCI bus: a driver older than the GPU does not "
                        "recognise it",
                    "install a driver that supports this GPU (NVIDIA's driver search names the "
                    "minimum), then reboot; `dmesg | grep -i nvrm` shows what it rejected",
                    details);
    }
    std::vector<std::string> missing;
    if (!h.exists("/dev/nvidiactl")) {
        missing.push_back("/dev/nvidiactl");
    }
    if (!h.exists("/dev/nvidia-uvm")) {
        missing.push_back("/dev/nvidia-uvm");
    }
    std::size_t gpus = h.pci_gpus().size();
    for (std::size_t i = 0; i < std::max<std::size_t>(gpus, 1); ++i) {
        std::string node = "/dev/nvidia" + std::to_string(i);
        if (!h.exists(node)) {
            missing.push_back(node);
        }
    }
    if (!missing.empty()) {
        bool uvm_only = missing.size() == 1 && missing[0] == "/dev/nvidia-uvm";
        std::string fix = !h.container().empty()
                              ? "start the container with GPU access: `docker run --gpus all …`"
                          : uvm_only
                              ? "sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0"
                              : "sudo nvidia-modprobe -c=0 -u (or reboot so udev creates them)";
        return fail("driver " + version + " loaded, but device nodes are missing: " + join(missing),
                    fix,
                    details);
    }
    return ok("driver " + version + " loaded; /dev/nvidiactl, /dev/nvidia-uvm and " +
                  std::to_string(std::max<std::size_t>(gpus, 1)) + " device node" +
                  (gpus > 1 ? "s" : "") + " present",
              details);
}

} // namespace cudaenv::doctor::checks
