// The options every command that takes a SPEC shares: --cuda, --cudnn, --profile, --platform.
#pragma once

#include "core/manifest/model.hpp"
#include "core/resolve/resolve.hpp"

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cudaenv::cli {

struct SpecOptions {
    std::string cuda;
    std::string cudnn;
    std::string profile = "runtime";
    std::string platform;
};

/// Adds --cuda, --cudnn, --profile and --platform to a subcommand.
void add_spec_options(CLI::App& sub, SpecOptions& o);

/// Checks them and turns them into ResolveOptions (usage errors name the option).
Result<ResolveOptions> to_resolve_options(const SpecOptions& o);

/// Framework names and aliases the manifests know, for SPEC parsing's "did you mean".
std::vector<std::string> framework_names(const manifest::Catalog& catalog);

} // namespace cudaenv::cli
