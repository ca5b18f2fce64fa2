#include "registry.hpp"

namespace cudaenv::cli {

namespace {

const CommandSpec k_commands[] = {
    {"install", "Download, verify and lay out CUDA and cuDNN for a SPEC", &setup_install},
    {"uninstall", "Remove an installed version", &setup_uninstall},
    {"resolve",
     "Show what a SPEC means: CUDA + cuDNN, archives, sizes, driver, verdict",
     &setup_resolve},
    {"list", "List installed versions, or what the manifests offer (--available)", &setup_list},
    {"__generate-manifests",
     "Regenerate manifests/ from the reference data",
     &setup_generate_manifests,
     true},
    {"__check-libs",
     "dlopen libraries (the child install runs to verify)",
     &setup_check_libs,
     true},
};

} // namespace

std::span<const CommandSpec> commands() {
    return k_commands;
}

} // namespace cudaenv::cli
