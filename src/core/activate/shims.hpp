// Shims (docs/design.md §3.3): <root>/shims/<tool> is a symlink to the cudaenv binary, which,
// started under a tool's name, picks the version and execs the real tool (cli/proxy.cpp). No shell
// script is on this path. `rehash` makes one shim per executable in any installed version's bin/.
#pragma once

#include "../error.hpp"
#include "../store/root.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace cudaenv::activate {

inline std::filesystem::path shims_dir(const store::Root& root) {
    return root.dir / "shims";
}

struct Rehashed {
    bool changed = false;
    std::vector<std::string> tools;
};

/// The executables in installed versions' bin/, sorted and unique.
std::vector<std::string> shimmable_tools(const store::Root& root);

/// Rebuilds <root>/shims (in a stage, swapped in by one rename) so it holds exactly one symlink
/// to `exe` per tool. Writes nothing when the shims are already right.
Result<Rehashed> rehash(const store::Root& root,
                        const std::filesystem::path& exe,
                        std::chrono::milliseconds lock_timeout);

} // namespace cudaenv::activate
