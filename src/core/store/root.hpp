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
//   manifests/                 sets of manifests from the update channel, current.json naming the
//                              one in use (channel/sets.hpp)
//   state.json                 the global choice and the journal of `global` (store/state.hpp)
//
// A directory in store/ or versions/ without its record is never listed and is removed by the
// next run that holds the lock.
#pragma once

#include "../error.hpp"
#include "../fs.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::store {

inline constexpr const char* k_complete_record = ".cudaenv-complete.json";
inline constexpr const char* k_version_record = ".cudaenv-version.json";

struct Root {
    std::filesystem::path dir;

    /// Read-only layers below this root, searched after it (a user's view of the machine-wide
    /// root, like Spack's upstreams): their versions can be selected, never changed from here.
    std::vector<std::filesystem::path> upstreams = {};

    /// This root's versions/ followed by each upstream's.
    std::vector<std::filesystem::path> version_dirs() const;

    /// Where version `name` lives: this root's versions/<name> when it has its record there,
    /// else the first upstream's that has it, else this root's (not installed anywhere).
    std::filesystem::path version_dir(const std::string& name) const;

    /// The upstream root holding `name`, when this root does not have it and an upstream does.
    std::optional<std::filesystem::path> upstream_of(const std::string& name) const;

    std::filesystem::path downloads() const { return dir / "cache" / "downloads"; }

    std::filesystem::path store() const { return dir / "store"; }

    std::filesystem::path versions() const { return dir / "versions"; }

    std::filesystem::path staging() const { return dir / ".staging"; }

    std::filesystem::path trash() const { return dir / ".trash"; }

    std::filesystem::path state_file() const { return dir / "state.json"; }

    std::filesystem::path shims() const { return dir / "shims"; }

    /// Manifests sets from the update channel and current.json (channel/sets.hpp).
    std::filesystem::path manifests() const { return dir / "manifests"; }

    /// Creates the layout; refuses a root that others may write (P2) or that we cannot.
    Status prepare() const;

    /// Under the lock: removes staging and trash leftovers, store/versions entries without
    /// their record (a symlink planted there is unlinked, never followed), state.json's
    /// temporary copies, and downloads a killed run left (already extracted, or untouched for
    /// two weeks).
    void sweep() const;

    /// A new private (0700) directory under .staging/, removed unless published (released).
    Result<TempDir> make_stage(const std::string& hint) const;
};

/// Installed versions (those with a record) of the root and its upstreams, sorted by name, each
/// once.
std::vector<std::string> installed_versions(const Root& root);

/// The installed versions in one `versions` folder (of this root or of an upstream), sorted.
std::vector<std::string> installed_versions_in(const std::filesystem::path& versions_dir);

/// The global version from state.json, if one is set; a damaged state.json is an error.
Result<std::optional<std::string>> global_version(const Root& root);

/// The global choice that applies to `root`: its own; else, for a user's root, the machine-wide
/// root's (that root owns /usr/local/cuda). `owner` is the root whose state.json holds it -- or,
/// when no layer has one, the root that owns the machine's link (the first upstream, else
/// `root`). A damaged state.json of `root` is an error; an upstream's is its administrator's to
/// fix and is passed over.
struct GlobalChoice {
    std::optional<std::string> version;
    Root owner;
};

Result<GlobalChoice> effective_global(const Root& root);

/// fsync of a directory (after a rename in it). Errors are returned.
Status sync_dir(const std::filesystem::path& dir);

/// fsync of every regular file and folder under `dir` (not following links): what cudaenv wrote
/// there is on disk before it is published. Errors are returned.
Status sync_tree(const std::filesystem::path& dir);

/// Makes a staged tree readable by every user whatever the umask, before it is published:
/// folders 0755, regular files 0755 when any execute bit is set and 0644 otherwise. Links are
/// not followed. A version behind /usr/local/cuda is loaded by every user of the machine.
Status make_world_readable(const std::filesystem::path& dir);

/// make_world_readable, but no file is writable, by its owner either (0555 with an execute bit,
/// else 0444); folders stay 0755, so that what removes or replaces an entry (gc, uninstall,
/// sweep, a repair) needs no chmod. Store entries and versions are published this way: a file
/// of a version is a hard link to a store object, and one write through it would change every
/// version that shares it. Root ignores mode bits: the per-file hashes (`cudaenv verify`) are
/// what catches its writes.
Status make_read_only(const std::filesystem::path& dir);

/// The first thing under `prefix` (or a folder above it) that a user other than its owner
/// cannot read or pass through, with what is missing; none when everyone can load it.
std::optional<std::string> unreadable_by_others(const std::filesystem::path& prefix);

/// Renames `from` to `to` (same filesystem), then syncs to's parent.
Status publish_dir(const std::filesystem::path& from, const std::filesystem::path& to);

/// publish_dir, or when `to` exists, exchanges the two (renameat2 RENAME_EXCHANGE: readers see
/// the old folder or the new one, never neither), syncs to's parent and removes the old one
/// (then at `from`). The caller holds the lock.
Status replace_dir(const std::filesystem::path& from, const std::filesystem::path& to);

} // namespace cudaenv::store
