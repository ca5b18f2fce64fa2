#include "registry.hpp"

namespace cudaenv::cli {

namespace {

const CommandSpec k_commands[] = {
    {"install", "Download, verify and lay out CUDA and cuDNN for a SPEC", &setup_install},
    {"uninstall", "Remove an installed version", &setup_uninstall},
    {"mirror",
     "Download what SPECs need into a directory laid out like NVIDIA's host",
     &setup_mirror},
    {"resolve",
     "Show what a SPEC means: CUDA + cuDNN, archives, sizes, driver, verdict",
     &setup_resolve},
    {"list", "List installed versions, or what the manifests offer (--available)", &setup_list},
    {"use", "Pin this project to a version (writes .cuda-version)", &setup_select},
    {"global",
     "Make a version the machine's: /usr/local/cuda, ld.so.conf.d, ldconfig",
     &setup_select},
    {"rollback", "Return the machine to its previous global version", &setup_select},
    {"version", "Show the selected version and what selected it", &setup_select},
    {"prefix", "Print a version's directory", &setup_select},
    {"which", "Print the path of a tool in the selected version", &setup_select},
    {"exec", "Run a command with the selected version's environment", &setup_select},
    {"env", "Print the selected version's environment as shell exports", &setup_select},
    {"doctor",
     "Diagnose the GPU stack layer by layer, with the fix for each finding",
     &setup_doctor},
    {"report", "One fleet table from per-host doctor reports (DIR/<host>.json)", &setup_report},
    {"rehash", "Make a shim for every tool in the installed versions", &setup_shell},
    {"init",
     "Shell integration: shims on PATH, the shell function, the hook, completions",
     &setup_shell},
    {"__shell", "what `cudaenv shell` evaluates", &setup_shell, true},
    {"__hook", "what the shell hook evaluates at each prompt", &setup_shell, true},
    {"__complete", "completion candidates", &setup_shell, true},
    {"__completion-script", "the files in completions/", &setup_shell, true},
    {"__generate-manifests",
     "Regenerate manifests/ from the reference data",
     &setup_generate_manifests,
     true},
    {"__check-libs",
     "dlopen libraries (the child install runs to verify)",
     &setup_check_libs,
     true},
    {"__doctor-query",
     "load one library and print what it says (the child doctor runs)",
     &setup_doctor,
     true},
};

} // namespace

std::span<const CommandSpec> commands() {
    return k_commands;
}

} // namespace cudaenv::cli
