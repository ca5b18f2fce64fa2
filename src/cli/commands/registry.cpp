#include "registry.hpp"

namespace cudaenv::cli {

namespace {

const CommandSpec k_commands[] = {
    {"resolve",
     "Show what a SPEC means: CUDA + cuDNN, archives, sizes, driver, verdict",
     &setup_resolve},
    {"list", "List releases the manifests offer (--available)", &setup_list},
    {"__generate-manifests",
     "Regenerate manifests/ from the reference data",
     &setup_generate_manifests,
     true},
};

} // namespace

std::span<const CommandSpec> commands() {
    return k_commands;
}

} // namespace cudaenv::cli
