// What this machine's GPUs and driver say about a CUDA release, for resolve (shown) and install
// (warned): the facts come from core/sys/gpus, the verdicts from core/resolve/gpu_driver.
#pragma once

#include "context.hpp"
#include "core/manifest/model.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cudaenv::cli {

struct MachineCheck {
    std::vector<std::string> warnings;
    /// {"driver": "535.104.05"|null, "gpus": [{"pci", "subsystem"}], "warnings": [...]}
    nlohmann::json json;
};

MachineCheck machine_check(Context& ctx, const manifest::CudaRelease& release);

} // namespace cudaenv::cli
