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

struct FrameworkPin {
    std::string framework; ///< "tensorflow", "pytorch", "jax"
    Version version;
    std::string source;  ///< where it was found ("requirements.txt:3", ".../dist-info")
    std::string variant; ///< "cu121" where known (a SPEC's +cu121, an installed wheel)
};

/// The framework a project runs: a .cuda-version naming one (tf-2.13, torch-2.5+cu121), else a
/// pin in the project's requirement files (requirements*.txt, pyproject.toml, Pipfile,
/// environment.yml; tensorflow, torch, jax), else the one installed in the active Python
/// environment (VIRTUAL_ENV, CONDA_PREFIX). `project_dir` is where requirement files are looked
/// for (the .cuda-version's folder, or the working directory).
std::optional<FrameworkPin> framework_pin(const manifest::Catalog& catalog,
                                          const std::optional<std::string>& version_file_text,
                                          const std::filesystem::path& project_dir,
                                          const std::map<std::string, std::string>& env);

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

/// `use --match` / `install --match`: the GPU framework installed in the active Python
/// environment, the CUDA whose nvcc matches it, and the installed version that has it.
struct EnvironmentMatch {
    std::string framework; ///< "pytorch", "jax", "tensorflow"
    std::string found;     ///< "torch 2.5.1+cu121 in /venv/lib/python3.11/site-packages"
    std::string found_by;  ///< "VIRTUAL_ENV", "CONDA_PREFIX", "python3 on PATH (/usr/bin/python3)"
    Version cuda;          ///< what it was built for: 12.1 (JAX: its nvcc wheel's, or 12)
    std::string cuda_from; ///< "torch/version.py"
    std::string spec;      ///< what `install --match` installs: "pytorch-2.5+cu121", "12.6"
    std::optional<std::string> installed; ///< the installed version chosen; none: install it
    std::vector<std::string> why;         ///< how it was chosen, a line each
};

/// Reads the environment without importing anything (core/pyenv) and picks, among installed
/// versions, the one whose CUDA has the framework's major.minor (the newest such), else -- with
/// a line in `why` -- the newest of the same major (PyTorch: minor-version compatibility, its
/// extension build warns; JAX: any later minor). not_found (exit 9) when there is no Python
/// environment or no CUDA build of TensorFlow, PyTorch or JAX in it; several frameworks: PyTorch,
/// then JAX, then TensorFlow, and `why` says which were passed over.
Result<EnvironmentMatch> match_environment(const manifest::Catalog& catalog,
                                           const store::Root& root,
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
