// The options every command that takes a SPEC shares: --cuda, --cudnn, --profile, --platform.
#pragma once

#include "core/ops/resolve_spec.hpp"

namespace CLI {
class App;
}

namespace cudaenv::cli {

using ops::SpecOptions;

/// Adds --cuda, --cudnn, --profile and --platform to a subcommand.
void add_spec_options(CLI::App& sub, SpecOptions& o);

} // namespace cudaenv::cli
