#pragma once

#include "context.hpp"

namespace cudaenv::cli {

/// Shim mode: cudaenv started as `tool` (a link in <root>/shims). Picks the version, then execs
/// the version's bin/<tool> with CUDA_HOME and CUDA_PATH set. Returns only on failure (127).
int run_proxy(Context& ctx, const std::string& tool, int argc, char** argv);

} // namespace cudaenv::cli
