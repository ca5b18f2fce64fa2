// Probe: each GPU's health as NVML reports it -- uncorrected ECC errors since the driver loaded
// and over the card's life, a row remapping (Ampere on) or page retirement (Volta and older)
// waiting for a reset or one that failed; persistence mode (said in the details, not flagged). Read
// once by the NVML query child, with the other GPU facts: no child of its own.
#include "probes.hpp"

namespace cudaenv::doctor::checks {

Finding health(Host& h) {
    if (auto why = h.files().jetson_cannot("NVML reports no ECC, row remapping or persistence "
                                           "mode for the integrated GPU");
        !why.empty()) {
        return skip(why);
    }
    const auto& d = h.facts().driver();
    if (!d.nvml_ok) {
        return skip("NVML is not available" + (d.nvml_error.empty() ? "" : ": " + d.nvml_error));
    }
    std::vector<Issue> issues;
    std::vector<std::string> details, no_persistence;
    bool ecc_read = false, repair_read = false, persistence_read = false;
    std::string off_indices;
    for (std::size_t i = 0; i < d.gpus.size(); ++i) {
        const auto& g = d.gpus[i];
        std::string label = gpu_label(i, g.name);
        std::string index = std::to_string(i);
        std::vector<std::string> said;
        ecc_read = ecc_read || g.ecc_uncorrected.has_value();
        repair_read = repair_read || g.remap_pending.has_value() || g.retired_pending.has_value();
        persistence_read = persistence_read || g.persistence.has_value();
        if (g.persistence) {
            said.push_back(std::string("persistence ") + (*g.persistence ? "on" : "off"));
            if (!*g.persistence) {
                no_persistence.push_back(label);
                off_indices += (off_indices.empty() ? "" : ",") + index;
            }
        }
        if (g.ecc_uncorrected) {
            said.push_back("uncorrected ECC errors: " + std::to_string(*g.ecc_uncorrected) +
                           " since the driver loaded, " +
                           (g.ecc_uncorrected_all ? std::to_string(*g.ecc_uncorrected_all)
                                                  : std::string("?")) +
                           " in all");
        }
        if (g.ecc_uncorrected && *g.ecc_uncorrected > 0) {
            issues.push_back(
                {Status::fail,
                 label + " has " + std::to_string(*g.ecc_uncorrected) +
                     " uncorrected ECC memory error" + (*g.ecc_uncorrected == 1 ? "" : "s") +
                     " since the driver loaded: results computed on it may be wrong",
                 "stop its jobs and reset it (sudo nvidia-smi -r -i " + index +
                     "); if errors come back, run dcgmi diag -r 3 and contact your hardware "
                     "vendor"});
        } else if (g.ecc_uncorrected_all && *g.ecc_uncorrected_all > 0) {
            issues.push_back({Status::warn,
                              label + " has had " + std::to_string(*g.ecc_uncorrected_all) +
                                  " uncorrected ECC memory error" +
                                  (*g.ecc_uncorrected_all == 1 ? "" : "s") + " over its life",
                              "watch it (nvidia-smi -q -d ECC,ROW_REMAPPER -i " + index +
                                  "); plan service if the count grows"});
        }
        if (g.remap_failed == true) {
            issues.push_back({Status::fail,
                              label + " could not remap a failing memory row: it is out of "
                                      "spare rows",
                              "take it out of service and contact your hardware vendor (RMA)"});
        }
        if (g.remap_pending == true || g.retired_pending == true) {
            bool remap = g.remap_pending == true;
            issues.push_back(
                {Status::warn,
                 label + (remap ? " has a memory row remapping" : " has a page retirement") +
                     " waiting for a GPU reset: the bad memory is still in use until then",
                 "when it is idle: sudo nvidia-smi -r -i " + index + " (or reboot)"});
        }
        details.push_back(label +
                          (said.empty() ? ": NVML reports no health counters" : ": " + join(said)));
    }
    if (!no_persistence.empty()) {
        // NVIDIA's default on most installs, and no fault: said, not flagged (healthy cloud VMs
        // of the field corpus print "Persistence-M Off")
        details.push_back("persistence mode off on " + join(no_persistence) +
                          ": each CUDA start initialises the GPU again (sudo systemctl enable "
                          "--now nvidia-persistenced keeps it; or sudo nvidia-smi -pm 1 -i " +
                          off_indices + ")");
    }
    std::vector<std::string> fine;
    if (ecc_read) {
        fine.push_back("no uncorrected ECC errors");
    }
    if (repair_read) {
        fine.push_back("no memory repair pending");
    }
    if (persistence_read) {
        fine.push_back("persistence mode on");
    }
    std::string gpus = std::to_string(d.gpus.size()) + " GPU" + (d.gpus.size() == 1 ? "" : "s");
    return verdict(std::move(issues),
                   ok(fine.empty() ? gpus + ": NVML reports no ECC, memory repair or persistence "
                                            "state for them"
                                   : gpus + ": " + join(fine),
                      details));
}

} // namespace cudaenv::doctor::checks
