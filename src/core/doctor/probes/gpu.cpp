// Probe 1: NVIDIA GPUs on the PCI bus (vendor 0x10de, display class), named from pci.ids or NVML.
#include "../../manifest/gpu_support.hpp"
#include "probes.hpp"

namespace cudaenv::doctor::checks {

Finding gpu(Host& h) {
    const auto& gpus = h.facts().pci_gpus();
    const auto& machine = h.files().machine();
    if (gpus.empty() && machine.kind == sys::HostKind::jetson) {
        // the iGPU is a platform device of the SoC, never on the PCI bus
        std::vector<std::string> details = {"not on the PCI bus: an integrated GPU of the SoC"};
        for (const auto& n : h.facts().driver().gpus) {
            details.push_back("NVML: " + n.name);
        }
        if (machine.jetson && !machine.jetson->l4t.empty()) {
            details.push_back("L4T " + machine.jetson->l4t +
                              (machine.jetson->jetpack.empty()
                                   ? std::string()
                                   : " (JetPack " + machine.jetson->jetpack + ")"));
        }
        return ok(jetson_gpu_name(machine), details);
    }
    if (gpus.empty()) {
        if (h.facts().in_wsl() && h.files().exists("/dev/dxg")) {
            return ok("WSL2: the GPU is provided by the Windows host (/dev/dxg)");
        }
        std::string fix = h.facts().container().empty()
                              ? "check that the card is seated and powered and shows in "
                                "`lspci -d 10de:`; in a virtual machine, pass the GPU through"
                              : "start the container with GPU access: `docker run --gpus all …` "
                                "(NVIDIA Container Toolkit)";
        return fail("no NVIDIA GPU: no PCI device with vendor 0x10de under /sys/bus/pci/devices",
                    fix);
    }
    std::vector<std::string> names, details;
    const auto& nvml = h.facts().driver().gpus;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        std::string name = gpus[i].name;
        for (const auto& n : nvml) {
            // NVML's bus id is "00000000:1E:00.0" (upper-case hex, as nvidia-smi prints it);
            // sysfs says "0000:1e:00.0"
            std::string bus = lower(n.bus_id);
            std::string addr = lower(gpus[i].address);
            if (name.empty() && !bus.empty() && bus.size() >= addr.size() &&
                bus.compare(bus.size() - addr.size(), addr.size(), addr) == 0) {
                name = n.name;
            }
        }
        if (name.empty()) {
            // NVIDIA's own name for the PCI id (the GPU table is read only when needed)
            if (const auto* l = h.manifests().gpu_support().find(
                    manifest::normalize_pci_id(gpus[i].device_id), gpus[i].subsystem)) {
                name = l->name;
            }
        }
        if (name.empty()) {
            name = "NVIDIA device " + gpus[i].device_id;
        }
        names.push_back(name);
        details.push_back(gpus[i].address + ": " + name + " (device " + gpus[i].device_id + ")");
    }
    std::string summary = std::to_string(gpus.size()) + " NVIDIA GPU" +
                          (gpus.size() == 1 ? "" : "s") + ": " + join(names);
    return ok(summary, details);
}

} // namespace cudaenv::doctor::checks
