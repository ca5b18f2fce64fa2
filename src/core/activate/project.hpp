// Project policy shared by `use`, `global`, `shell`, `install` (no SPEC), `gc` and the
// Ansible-facing
// --json: whether the project's framework can use a version, and the project pins `use` writes.
// A pin is the project's .cuda-version; `use` also records it in <root>/pins/ (like rustup's
// overrides) so that `gc` knows which versions some project still needs.
#pragma once

#include "../error.hpp"
#include "../manifest/model.hpp"
#include "../store/root.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::activate {

/// The project's framework (the SPEC itself when one is given and names one, else the project's
/// files or the active Python environment) must be able to use installed `version`: the error
/// (incompatible, exit 8) naming the framework and where it was found when it cannot; none when
/// it can, when no framework is pinned, or when the version's record cannot say. `global` passes
/// no SPEC: the question there is the project's framework, not the one the SPEC names.
std::optional<Error> project_framework_conflict(const manifest::Catalog& catalog,
                                                const store::Root& root,
                                                const std::string& version,
                                                const std::optional<std::string>& spec,
                                                const std::filesystem::path& cwd,
                                                const std::map<std::string, std::string>& env);

struct PinWrite {
    bool changed = false;
    std::filesystem::path file; ///< the .cuda-version
};

/// Writes `spec` to dir/.cuda-version (atomically; unchanged when it already says so) and records
/// the pin in the root. A record that cannot be written is not an error (gc then keeps less).
Result<PinWrite> write_project_pin(const store::Root& root,
                                   const std::filesystem::path& dir,
                                   const std::string& spec);

/// Removes dir/.cuda-version and its record; false when there was none.
Result<bool> remove_project_pin(const store::Root& root, const std::filesystem::path& dir);

struct RecordedPin {
    std::filesystem::path dir; ///< the project
    std::string written;       ///< what its .cuda-version says now
    std::filesystem::path record;
};

/// The recorded pins whose .cuda-version still exists, with what it says now. Records of projects
/// whose file is gone are returned in `stale` (gc removes them).
std::vector<RecordedPin> recorded_pins(const store::Root& root,
                                       std::vector<std::filesystem::path>* stale = nullptr);

struct ProjectRequest {
    std::string spec;   ///< "tf-2.13", "12.4+cudnn-9.1": what to install
    std::string source; ///< "/proj/.cuda-version", "requirements.txt:3"
};

/// What the project in `cwd` asks for (`install` with no SPEC, like `rustup install`): the
/// nearest .cuda-version's SPEC, else the framework release its files (or the active Python
/// environment) pin. A .cuda-version that names no valid SPEC is its error (exit 2).
Result<std::optional<ProjectRequest>>
project_request(const manifest::Catalog& catalog,
                const std::filesystem::path& cwd,
                const std::map<std::string, std::string>& env);

/// The versions of `root` something still needs, each with why: a recorded project pin, the
/// global choice, the journal (rollback's target, a pending switch), and what is selected for
/// `cwd` and `env` now. An unreadable state.json is an error (then nothing is known to be free).
Result<std::map<std::string, std::string>>
needed_versions(const store::Root& root,
                const std::vector<manifest::Framework>& frameworks,
                const std::map<std::string, std::string>& env,
                const std::filesystem::path& cwd);

} // namespace cudaenv::activate
