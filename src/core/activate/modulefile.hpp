// Environment-module files for HPC sites (Lmod's Lua, and Tcl for Lmod and Environment Modules):
// the same variables `cudaenv exec` sets, from the same function (version_environment), so that
// `module load cuda/11.8` and `cudaenv exec` agree; `family("cuda")` (Lua) and `conflict cuda`
// (Tcl) keep two CUDA modules from being loaded at once, and unload restores the environment.
#pragma once

#include <filesystem>
#include <string>

namespace cudaenv::activate {

enum class ModuleFormat { lua, tcl };

struct ModuleInfo {
    std::string version; ///< the cudaenv version's name
    std::string cuda;
    std::string cudnn; ///< empty: none
    /// The cudaenv-shim a modulefile of a version with forward-compatibility libraries asks at
    /// load time (`cudaenv-shim __compat PREFIX`) whether to put compat/ first: the answer
    /// depends on the machine that loads it, not the one that wrote it.
    std::filesystem::path shim;
};

/// The modulefile for the version installed at `prefix`.
std::string
modulefile(const std::filesystem::path& prefix, const ModuleInfo& info, ModuleFormat format);

} // namespace cudaenv::activate
