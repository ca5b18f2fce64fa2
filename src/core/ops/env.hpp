// `env --for TOOL`: what a Python package manager needs to fetch the framework build that fits
// the selected CUDA -- the version's CUDA from its record, the project's framework pin, and the
// target (.cuda-version's `sm =`/`driver =` lines, else the GPUs and driver present). The front
// end prints the variables.
#pragma once

#include "core/activate/bridges.hpp"
#include "core/ops/session.hpp"
#include "core/version.hpp"

#include <string>

namespace cudaenv::ops {

/// The machine's target: .cuda-version's `sm =` / `driver =` lines, else the GPUs and driver
/// present (read from sysfs and /proc under the sysroot).
Result<activate::Target> target_here(Session& session);

struct BridgeOutcome {
    Version cuda; ///< the selected version's CUDA
    activate::Bridge bridge;
};

/// The variables for `tool` ("uv", "pip", "conda", "pixi") and the version `spec` names (empty:
/// the selected one). not_found for a version without a cudaenv record; usage for another tool.
Result<BridgeOutcome>
bridge_env(Session& session, const std::string& tool, const std::string& spec);

} // namespace cudaenv::ops
