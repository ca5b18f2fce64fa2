// Which version a process uses (docs/design.md §2.3): CUDAENV_VERSION, else the nearest
// .cuda-version in the directory or a parent, else the global choice (state.json), else the
// system's own CUDA. And which framework the project runs, so that incompatible choices can be
// refused: a .cuda-version naming one (tf-2.13), else a pin in the project's requirement files,
// else the tensorflow installed in the active Python environment.
#pragma once

#include "../error.hpp"
#include "../manifest/model.hpp"
#include "../store/root.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace cudaenv::activate {

inline constexpr const char* k_version_file = ".cuda-version";

struct Selection {
    enum class Origin { environment, file, global, system };
    Origin origin = Origin::system;
    std::string written;                ///< as CUDAENV_VERSION, the file or state.json says it
    std::filesystem::path source;       ///< the .cuda-version or state.json it came from
    std::optional<std::string> version; ///< the installed version; none for system

    /// "CUDAENV_VERSION", "/path/.cuda-version", "/root/state.json (global)", "system"
    std::string origin_text() const;
};

/// The nearest .cuda-version from `dir` upwards, if any.
std::optional<std::filesystem::path> find_version_file(const std::filesystem::path& dir);

/// What a .cuda-version's text names: its first word that is not a comment, which must be plain
/// version text (letters, digits, "._+-=@:~"). `where` names the file in errors (exit 2).
Result<std::string> parse_version_file(std::string_view text, const std::string& where);

/// The most of a .cuda-version anyone reads: the shim reads it at every call, so a huge or
/// endless file (a sparse 1 GiB one) must cost nothing.
inline constexpr std::size_t k_max_version_file = 64 * 1024;

/// A .cuda-version's text: at most k_max_version_file bytes are read; a larger file is a usage
/// error naming it (exit 2), as is any other .cuda-version cudaenv cannot read.
Result<std::string> read_version_file(const std::filesystem::path& file);

/// Maps what a user wrote to an installed version, reading only the installed versions' records
/// and the framework tables (fast enough for shims): an installed version's exact name; a CUDA
/// (`11.8`), a pair (`11.8+cudnn-8.6`) or a framework (`tf-2.13`, through its tested pair) matched
/// as prefixes against what is installed, the newest match winning (a bare CUDA version first for
/// a SPEC without cuDNN). not_found (exit 9) says it is not installed and how to install it.
Result<std::string> match_installed(const store::Root& root,
                                    const std::vector<manifest::Framework>& frameworks,
                                    const std::string& written);

/// The framework name a SPEC selected here names (CUDAENV_VERSION, else the nearest
/// .cuda-version: "tf" for `tf-2.13`), or empty: which framework table the shim must read.
std::string selected_framework_name(const std::map<std::string, std::string>& env,
                                    const std::filesystem::path& cwd);

/// The selection for a process with `env` in directory `cwd`.
Result<Selection> select(const store::Root& root,
                         const std::vector<manifest::Framework>& frameworks,
                         const std::map<std::string, std::string>& env,
                         const std::filesystem::path& cwd);

/// select() as the hot paths (the shim, the shell hook) call it: first without the framework
/// tables (an exact version name needs none); when a SPEC here needs them, again with only the
/// framework it names read from the manifests folder `manifests()` returns. That folder is asked
/// for only then: choosing it reads the channel's sets, which the common case never needs.
Result<Selection> select_lazily(const store::Root& root,
                                const std::function<std::filesystem::path()>& manifests,
                                const std::map<std::string, std::string>& env,
                                const std::filesystem::path& cwd);

/// Finds a tensorflow pin in one requirement-file text ("tensorflow==2.13.1",
/// "tensorflow[and-cuda]~=2.15", "tensorflow-gpu = \"==2.10\"", "- tensorflow=2.13").
std::optional<Version> parse_tensorflow_pin(std::string_view text, std::size_t* line_out = nullptr);

/// The same for any distribution `name` ("torch==2.5.1+cu121" -> 2.5.1, "jax[cuda12]==0.4.30").
std::optional<Version> parse_requirement_pin(std::string_view text,
                                             std::string_view name,
                                             std::size_t* line_out = nullptr);

} // namespace cudaenv::activate
