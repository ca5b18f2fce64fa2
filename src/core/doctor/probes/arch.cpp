// Probe 5: each GPU's compute capability (NVML, else the manifests' GPU table by name, else the
// chip family its PCI device id belongs to) against the selected CUDA's SM range.
#include "../pci_chips.hpp"
#include "probes.hpp"

namespace cudaenv::doctor::checks {

Finding arch(Host& h) {
    const auto* rel = h.facts().toolkit_release();
    if (!rel || !rel->sm) {
        return skip("the manifests know no SM range for the selected CUDA");
    }
    const auto& pci = h.facts().pci_gpus();
    const auto& nvml = h.facts().driver().gpus;
    std::size_t n = std::max(pci.size(), nvml.size());
    // a Jetson's iGPU is not on the PCI bus, and older L4T has no NVML: its SoC says it
    const auto& machine = h.files().machine();
    bool igpu = machine.kind == sys::HostKind::jetson && pci.empty();
    if (igpu) {
        n = std::max<std::size_t>(n, 1);
    }
    std::vector<std::string> details, too_old, too_new, unknown, fine;
    std::string range = sm(rel->sm->min) + " to " + sm(rel->sm->max);
    for (std::size_t i = 0; i < n; ++i) {
        std::string name = i < nvml.size() && !nvml[i].name.empty() ? nvml[i].name
                           : i < pci.size()                         ? pci[i].name
                           : igpu                                   ? jetson_gpu_name(machine)
                                                                    : std::string();
        unsigned cc = 0; // 0: unknown
        if (i < nvml.size() && nvml[i].compute_capability) {
            cc = *nvml[i].compute_capability;
        }
        std::string from = "NVML";
        if (cc == 0 && igpu) {
            cc = jetson_compute_capability(machine);
            from = "the SoC, " + (machine.jetson ? machine.jetson->compatible : std::string());
        }
        if (cc == 0 && !name.empty()) {
            const auto* model = gpu_model(h, name);
            cc = model ? model->compute_capability : 0;
            from = "the GPU table";
        }
        // no NVML and no name the table knows: the PCI device id's chip family still says it
        if (cc == 0 && i < pci.size()) {
            if (auto chip = chip_of_device(pci[i].device_id)) {
                cc = chip->compute_capability;
                from = "PCI device " + pci[i].device_id + ": " + std::string(chip->chip) + ", " +
                       std::string(chip->architecture);
            }
        }
        std::string label = gpu_label(i, name);
        if (cc == 0) {
            unknown.push_back(label);
            details.push_back(label + ": compute capability unknown");
            continue;
        }
        details.push_back(label + ": compute capability " + cc_dotted(cc) + " (from " + from + ")");
        if (cc < rel->sm->min) {
            too_old.push_back(label + " " + sm(cc));
        } else if (cc > rel->sm->max) {
            too_new.push_back(label + " " + sm(cc));
        } else {
            fine.push_back(label + " " + sm(cc));
        }
    }
    std::string cuda = "CUDA " + rel->version.truncated(2).str();
    if (!too_old.empty()) {
        return fail(join(too_old) + " is older than " + cuda + " supports (" + range + ")",
                    "select a CUDA that still builds for it (an older major: cudaenv list "
                    "--available), or use a newer GPU",
                    details);
    }
    if (!too_new.empty()) {
        return warn(join(too_new) + " is newer than " + cuda + "'s newest target (" +
                        sm(rel->sm->max) +
                        "): kernels run only if the program carries PTX the driver can JIT",
                    "select a newer CUDA that builds for it natively (cudaenv list --available)",
                    details);
    }
    if (fine.empty()) {
        return skip("compute capability unknown for " + join(unknown), details);
    }
    return ok(join(fine) + " within " + cuda + "'s " + range, details);
}

} // namespace cudaenv::doctor::checks
