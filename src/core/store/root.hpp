// The layout of CUDAENV_ROOT (docs/store.md):
//
//   (the root directory itself is the lock: flock(2), see store/lock.hpp)
//   cache/downloads/<sha256>   verified downloads (deleted once extracted); <sha256>.partial
//   resumes store/<entry>/             one extracted archive each, immutable once published, with
//                              .cudaenv-complete.json listing every file
//   versions/<name>/           selectable versions ("11.8.0+cudnn8.6.0.163"), composed from store
//                              entries by hard links, cuDNN flattened into lib64/, with
//                              .cudaenv-version.json
//   .staging/, .trash/         private work areas on the same filesystem; emptied under the lock
//   state.json                 the global choice and the journal of `global` (store/state.hpp)
//
// A directory in store/ or versions/ without its record is never listed and is removed by the
// next run that holds the lock.
#pragma once

#include "../error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::store {

inline constexpr const char* k_complete_record = ".cudaenv-complete.json";
inline constexpr const char* k_version_record = ".cudaenv-version.json";

struct Root {
    std::filesystem::path dir;

    std::filesystem::path downloads() const { return dir / "cache" / "downloads"; }

    std::filesystem::path store() const { return dir / "store"; }

    std::filesystem::path versions() const { return dir / "versions"; }

    std::filesystem::path staging() const { return dir / ".staging"; }

    std::filesystem::path trash() const { return dir / ".trash"; }

    std::filesystem::path state_file() const { return dir / "state.json"; }

    std::filesystem::path shims() const { return dir / "shims"; }

    /// Creates the layout; refuses a root that others may write (P2) or that we cannot.
    Status prepare() const;

    /// Under the lock: removes staging and trash leftovers, store/versions entries without
    /// their record (a symlink planted there is unlinked, never followed), state.json's
    /// temporary copies, and downloads a killed run left (already extracted, or untouched for
    /// two weeks).
    void sweep() const;

    /// A new private (0700) directory under .staging/.
    Result<std::filesystem::path> make_stage(const std::string& hint) const;
};

/// Installed versions (those with a record), sorted by name.
std::vector<std::string> installed_versions(const Root& root);

/// The global version from state.json, if one is set; a damaged state.json is an error.
Result<std::optional<std::string>> global_version(const Root& root);

/// Removes a directory tree without following symlinks; errors are ignored (best effort).
void remove_tree(const std::filesystem::path& p);

/// fsync of a directory (after a rename in it). Errors are returned.
Status sync_dir(const std::filesystem::path& dir);

/// fsync of every regular file and folder under `dir` (not following links): what cudaenv wrote
/// there is on disk before it is published. Errors are returned.
Status sync_tree(const std::filesystem::path& dir);

/// Renames `from` to `to` (same filesystem), then syncs to's parent.
Status publish_dir(const std::filesystem::path& from, const std::filesystem::path& to);

} // namespace cudaenv::store
