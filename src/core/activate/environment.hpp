// The environment a process gets for a version: CUDA_HOME and CUDA_PATH, the version's bin/ first
// on PATH, and its lib64/ (and CUPTI's folder, when there) first on LD_LIBRARY_PATH. Entries of
// other cudaenv versions are dropped so two versions never mix in one process. Its compat/
// (forward compatibility) goes first only where compat_state says so.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace cudaenv::activate {

/// The entries of a ':'-separated list (PATH, LD_LIBRARY_PATH), empty ones dropped.
std::vector<std::string> split_path_list(const std::string& list);

/// The variables to set (not the whole environment): CUDA_HOME, CUDA_PATH, PATH,
/// LD_LIBRARY_PATH. `versions_dir` is <root>/versions, whose other entries are dropped.
std::map<std::string, std::string>
version_environment(const std::filesystem::path& prefix,
                    const std::vector<std::filesystem::path>& versions_dirs,
                    const std::map<std::string, std::string>& env);

/// The same, with <prefix>/compat first on LD_LIBRARY_PATH when this machine (under `sysroot`)
/// needs the version's forward-compatibility libraries (compat_state, compat.hpp): what exec,
/// env, the prompt hook and which set. A version without them costs one failed open.
std::map<std::string, std::string>
version_environment(const std::filesystem::path& prefix,
                    const std::vector<std::filesystem::path>& versions_dirs,
                    const std::map<std::string, std::string>& env,
                    const std::filesystem::path& sysroot);

} // namespace cudaenv::activate
