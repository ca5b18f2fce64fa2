#include "registry.hpp"

#include <sstream>

namespace cudaenv::cli {

namespace {

const CommandSpec k_commands[] = {
    {"install",
     "Download, verify and lay out CUDA and cuDNN for a SPEC (default: the project's)",
     &setup_install},
    {"uninstall", "Remove installed versions", &setup_uninstall, false, "rm remove"},
    {"gc",
     "Remove what no project, global choice or rollback needs (dry run by default)",
     &setup_gc},
    {"verify",
     "Re-hash installed versions and name every file changed since install, with the fix",
     &setup_verify},
    {"mirror",
     "Download what SPECs need into a directory laid out like NVIDIA's host",
     &setup_mirror},
    {"update",
     "Fetch the newest signed manifests from the update channel (--check: only say)",
     &setup_update},
    {"resolve",
     "Show what a SPEC means: CUDA + cuDNN, archives, sizes, driver, verdict",
     &setup_resolve},
    {"list",
     "List installed versions (and what selects one here), or what the manifests offer",
     &setup_list,
     false,
     "versions"},
    {"use", "Pin this project to a version (writes .cuda-version)", &setup_use},
    {"global",
     "Make a version the machine's: /usr/local/cuda, ld.so.conf.d, ldconfig",
     &setup_global},
    {"rollback", "Return the machine to its previous global version", &setup_rollback},
    {"shell", "Set this shell's version (needs `cudaenv init`)", &setup_shell},
    {"version", "Show the selected version and what selected it", &setup_version},
    {"prefix", "Print a version's directory", &setup_prefix},
    {"which", "Where a tool is, or which file the loader picks for a library", &setup_which},
    {"exec", "Run a command with the selected version's environment", &setup_exec},
    {"env", "Print the selected version's environment as shell exports", &setup_env},
    {"modulefile", "An Lmod (Lua) or Tcl modulefile for a version", &setup_modulefile},
    {"doctor",
     "Diagnose the GPU stack layer by layer, with the fix for each finding",
     &setup_doctor},
    {"audit",
     "List the advisories (security bulletins, cuBLAS fixes) that apply here, with the fix",
     &setup_audit},
    {"report", "One fleet table from per-host doctor reports (DIR/<host>.json)", &setup_report},
    {"rehash", "Make a shim for every tool in the installed versions", &setup_rehash},
    {"init",
     "Shell integration: shims on PATH, the shell function, the hook, completions",
     &setup_init},
    {"completions", "Print the completion script for bash, zsh or fish", &setup_completions},
    {"__shell", "what `cudaenv shell` evaluates", &setup_shell_helper, true},
    {"__hook", "what the shell hook evaluates at each prompt", &setup_hook, true},
    {"__complete", "completion candidates", &setup_complete, true},
    {"__completion-script", "the files in completions/", &setup_completions, true},
    {"__generate-manifests",
     "Regenerate manifests/ from the reference data",
     &setup_generate_manifests,
     true},
    {"__bundle", "signing keys and manifests bundles for the channel", &setup_bundle, true},
    {"__refresh",
     "NVIDIA's newer indexes and bulletins into a new reference and manifests to sign",
     &setup_refresh,
     true},
    {"__check-libs",
     "dlopen libraries (the child install runs to verify)",
     &setup_check_libs,
     true},
    {"__doctor-query",
     "load one library and print what it says (the child doctor runs)",
     &setup_doctor_query,
     true},
};

} // namespace

std::span<const CommandSpec> commands() {
    return k_commands;
}

std::vector<std::string> names_of(const CommandSpec& c) {
    std::vector<std::string> out{c.name};
    std::istringstream in(c.aliases ? c.aliases : "");
    for (std::string a; in >> a;) {
        out.push_back(a);
    }
    return out;
}

} // namespace cudaenv::cli
