// The layout of CUDAENV_ROOT (docs/store.md):
//
//   (the root directory itself is the lock: flock(2), see store/lock.hpp)
//   cache/downloads/<sha256>   verified downloads (deleted once extracted); <sha256>.partial
//   resumes store/<entry>/             one extracted archive each, immutable once published, with
//                              .cudaenv-complete.json listing every file
//   versions/<platform>/<name>/  selectable versions
//   ("versions/linux-x86_64/11.8.0+cudnn8.6.0.163"),
//                              composed from store entries by hard links, cuDNN flattened into
//                              lib64/, with .cudaenv-version.json; one folder per NVIDIA platform,
//                              so one root serves x86_64 and Arm hosts side by side
//   versions/<name> -> <platform>/<name>  left by the migration from the layout before platforms
//                              (versions/<name>/), so that paths written then keep working
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
#include "../sys/platform.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::store {

inline constexpr const char* k_complete_record = ".cudaenv-complete.json";
inline constexpr const char* k_version_record = ".cudaenv-version.json";

/// A folder of versions/ that holds one platform's versions ("linux-x86_64", "linux-sbsa",
/// "linux-aarch64"): version names begin with a digit, NVIDIA's platform keys with "linux-".
bool is_platform_folder(std::string_view name);

/// Which platform's versions this host sees (docs/store.md, Platforms): the forced one
/// (--platform, CUDAENV_PLATFORM, the config's `platform`: ops::Session::forced_platform), else
/// what the host takes for the version's CUDA release (sys::platform_for: a Jetson Orin takes
/// linux-aarch64 for CUDA 12 and linux-sbsa from 13.2).
struct HostPlatforms {
    std::string forced;
    /// The machine; by default what this build runs on (x86_64, or an Arm server on aarch64).
    sys::HostMachine host = native_host();

    /// The platform this host takes for version `name` ("11.8.0+cudnn8.6.0.163": CUDA 11.8);
    /// "" when it takes none (the name is no version, or NVIDIA ships nothing for this host).
    std::string of(std::string_view name) const;

    static sys::HostMachine native_host();
};

struct Root {
    std::filesystem::path dir;

    /// Read-only layers below this root, searched after it (a user's view of the machine-wide
    /// root, like Spack's upstreams): their versions can be selected, never changed from here.
    std::vector<std::filesystem::path> upstreams = {};

    /// Which platform of a version name this host sees (ops::Session::root fills it).
    HostPlatforms platforms = {};

    /// This root's versions/ followed by each upstream's (every platform is below each).
    std::vector<std::filesystem::path> version_dirs() const;

    /// Where version `name` of this host's platform lives: this root's versions/<platform>/<name>
    /// when it has its record there, else the first upstream's that has it, else this root's
    /// (not installed anywhere). A layer not yet migrated (versions/<name>/ whose record names
    /// the platform) is read as it is.
    std::filesystem::path version_dir(const std::string& name) const;

    /// The same for one platform's copy of `name`.
    std::filesystem::path version_dir(const std::string& name, const std::string& platform) const;

    /// The upstream root holding `name` (this host's platform), when this root does not have it
    /// and an upstream does.
    std::optional<std::filesystem::path> upstream_of(const std::string& name) const;
    std::optional<std::filesystem::path> upstream_of(const std::string& name,
                                                     const std::string& platform) const;

    /// versions/<platform>/ of this root.
    std::filesystem::path versions(const std::string& platform) const {
        return versions() / platform;
    }

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
    /// two weeks); then migrate_layout().
    void sweep() const;

    /// Under the lock, this root only (never an upstream): each versions/<name>/ of the layout
    /// before platforms moves to versions/<its recorded platform>/<name>, leaving versions/<name>
    /// as a relative link to <platform>/<name>. One RENAME_EXCHANGE per version, so a kill at any
    /// point leaves either layout, which every reader reads and the next run finishes. A version
    /// whose record cannot be read stays where it is (never listed, never lost).
    Status migrate_layout() const;

    /// A new private (0700) directory under .staging/, removed unless published (released).
    Result<TempDir> make_stage(const std::string& hint) const;
};

/// Installed versions (those with a record) of this host's platforms (root.platforms) in the
/// root and its upstreams, sorted by name, each once.
std::vector<std::string> installed_versions(const Root& root);

/// One installed version of any platform, in the root or an upstream.
struct PlacedVersion {
    std::string name;
    std::string platform;
    std::filesystem::path dir; ///< versions/<platform>/<name> (or versions/<name>: not migrated)
    std::size_t layer = 0;     ///< 0: the root itself; i: upstreams[i - 1]
    bool this_host = false;    ///< the platform root.platforms takes for it
};

/// Every installed version of every platform, layer by layer (the root, then each upstream),
/// sorted by name then platform within a layer. A not yet migrated version's platform is read
/// from its record.
std::vector<PlacedVersion> placed_versions(const Root& root);

/// The same for one layer: a root's `versions` folder.
std::vector<PlacedVersion> placed_versions_in(const std::filesystem::path& versions_dir,
                                              const HostPlatforms& platforms,
                                              std::size_t layer = 0);

/// Under the lock, after a version was removed from `platform_dir` (versions/<platform>): the
/// folder goes when it is empty, so that a root with no version has nothing in versions/.
void drop_if_empty(const std::filesystem::path& platform_dir);

/// The root a version folder belongs to: <root> of <root>/versions/<platform>/<name> (or of
/// <root>/versions/<name>, a root not migrated yet).
std::filesystem::path root_of_version(const std::filesystem::path& version_dir);

/// The platforms other than this host's that hold `name` (any layer), sorted, each once.
std::vector<std::string> other_platforms_of(const Root& root, const std::string& name);

/// When `name` is installed for other platforms only: what every command that takes a version
/// name says (exit 9, as for a version not installed), naming those platforms and this host's;
/// none otherwise.
std::optional<Error> other_platform_error(const Root& root, const std::string& name);

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
