#pragma once

#include "context.hpp"

namespace cudaenv::cli {

/// Parses argv, runs the command, returns the process exit code. Never calls exit().
int run(Context& ctx, int argc, char** argv);

} // namespace cudaenv::cli
