// Probe 14: MIG mode per GPU and its instances (NVML): frameworks see slices, not the card.
#include "probes.hpp"

namespace cudaenv::doctor::checks {

Finding mig(Host& h) {
    if (h.files().machine().kind == sys::HostKind::jetson) {
        return skip("no MIG on Jetson's integrated GPU");
    }
    const auto& d = h.facts().driver();
    if (!d.nvml_ok) {
        return skip("NVML is not available" + (d.nvml_error.empty() ? "" : ": " + d.nvml_error));
    }
    std::vector<std::string> details, on, pending, empty;
    std::string empty_indices;
    std::string indices; // "0,2": nvidia-smi -i takes a list
    for (std::size_t i = 0; i < d.gpus.size(); ++i) {
        const auto& g = d.gpus[i];
        std::string label = gpu_label(i, g.name);
        if (!g.mig_enabled) {
            details.push_back(label + ": MIG not supported");
            continue;
        }
        details.push_back(label + ": MIG " + (*g.mig_enabled ? "on" : "off") +
                          (g.mig_instances.empty() ? "" : ", instances: " + join(g.mig_instances)));
        if (*g.mig_enabled || (g.mig_pending && *g.mig_pending != *g.mig_enabled)) {
            indices += (indices.empty() ? "" : ",") + std::to_string(i);
        }
        if (*g.mig_enabled && g.mig_instances.empty()) {
            empty.push_back(label);
            empty_indices += (empty_indices.empty() ? "" : ",") + std::to_string(i);
        } else if (*g.mig_enabled) {
            on.push_back(label + " is in MIG mode with " + std::to_string(g.mig_instances.size()) +
                         " instance" + (g.mig_instances.size() == 1 ? "" : "s"));
        }
        if (g.mig_pending && *g.mig_pending != *g.mig_enabled) {
            pending.push_back(label + " has a MIG change pending a GPU reset");
        }
    }
    if (!empty.empty()) {
        // MIG on hands CUDA the instances only: with none, CUDA sees no device on that card
        return fail(join(empty) + " is in MIG mode with no instances: CUDA sees no device on " +
                        (empty.size() == 1 ? "it" : "them") +
                        " (\"no CUDA-capable device is detected\")",
                    "create instances (sudo nvidia-smi mig -i " + empty_indices +
                        " -cgi <profile> -C; nvidia-smi mig -lgip lists the profiles), or turn "
                        "MIG off (sudo nvidia-smi -i " +
                        empty_indices + " -mig 0, then reset the GPU)",
                    details);
    }
    if (!on.empty()) {
        return warn(join(on) + ": frameworks see slices, not the whole card (a batch size meant "
                               "for the card thrashes one slice)",
                    "if the whole card is wanted: sudo nvidia-smi -i " + indices +
                        " -mig 0, then reset the GPU (sudo nvidia-smi -i " + indices +
                        " -r); otherwise size jobs for one slice",
                    details);
    }
    if (!pending.empty()) {
        return warn(
            join(pending), "reset the GPU (sudo nvidia-smi -i <index> -r) or reboot", details);
    }
    return ok(d.gpus.empty() ? "no GPUs reported by NVML" : "MIG off on every GPU", details);
}

} // namespace cudaenv::doctor::checks
