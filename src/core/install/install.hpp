// The install pipeline (docs/reliability.md §1): resolve -> lock -> download (parallel, verified,
// resumable) -> extract each archive as soon as it is verified into a private stage -> publish it
// into store/ with one rename -> compose the version (hard links; cuDNN flattened into lib64/) in
// another stage -> verify it (cuDNN header = manifest, every sublibrary, every library loads in a
// child process) -> publish with one rename. Nothing half-done is ever visible: a failure or a
// kill leaves the previous state, and the next run sweeps the stages and resumes downloads.
#pragma once

#include "../archive/extract.hpp"
#include "../error.hpp"
#include "../fetch/download.hpp"
#include "../manifest/model.hpp"
#include "../resolve/resolve.hpp"
#include "../store/root.hpp"
#include "verify.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace cudaenv::install {

/// What happens to each archive, reported from worker threads (the observer must be
/// thread-safe).
struct Event {
    enum class Kind { reused, downloading, progress, extracting, done, failed };
    Kind kind = Kind::progress;
    std::string component;
    std::string version;
    std::uint64_t bytes = 0;
    std::optional<std::uint64_t> total;
    bool cached = false; ///< done without downloading (verified file already in the cache)
    std::string note;    ///< something the user should hear about (a restarted download)
};

using Observer = std::function<void(const Event&)>;

/// Runs `<exe> __check-libs DIR FILE...` style checks: returns, per library that failed to
/// load, "file: reason". Supplied by the CLI (it knows its own executable).
using LibraryChecker = std::function<Result<std::vector<std::string>>(
    const std::filesystem::path& lib_dir, const std::vector<std::string>& files)>;

/// Another copy of an archive the manifests pin, in another encoding: a fleet mirror's
/// recompressed one, vouched for by the mirror's signed index (mirror/recompressed.hpp). It is
/// downloaded and verified against this sha256 instead of NVIDIA's file; the store entry keeps
/// NVIDIA's hash, so either way the same entry results.
struct Alternate {
    std::string url;
    std::string sha256;
    std::uint64_t size = 0;
    archive::Compression compression = archive::Compression::zstd;
};

/// The alternates on offer, by NVIDIA's sha256. Asked at most once per install, and only when
/// an archive is to be downloaded; its error stops the install.
using Alternates = std::function<Result<std::map<std::string, Alternate>>()>;

struct Options {
    std::string base_url{manifest::k_nvidia_base};
    Alternates alternates; ///< none: NVIDIA's archives only
    fetch::Policy policy;
    unsigned jobs = 4;
    bool dry_run = false;
    std::chrono::milliseconds lock_timeout{std::chrono::seconds(600)};
    LibraryChecker check_libraries;
    /// Caps for each archive's extraction (decompression bombs, entry floods).
    archive::Limits limits;
    /// An installed version is re-hashed (Depth::content), not only checked by its files'
    /// metadata, and whatever fails is repaired: store entries extracted again (also those an
    /// older cudaenv recorded without per-file hashes), the version composed again.
    bool repair = false;
};

struct PlannedArchive {
    std::string component;
    std::string version;
    std::string url;
    std::optional<std::uint64_t> size;
    std::string store_entry;
    bool present = false;      ///< already in the store (its record holds the pinned sha256)
    bool recompressed = false; ///< downloaded as the mirror's recompressed copy
};

struct Outcome {
    std::string version; ///< "11.8.0+cudnn8.6.0.163"
    std::filesystem::path prefix;
    bool changed = false;
    std::vector<PlannedArchive> archives;
    std::uint64_t downloaded_bytes = 0;
    /// The version was installed, but not as it was installed: what was found, now repaired.
    std::vector<Damage> repaired;
    /// Other versions of this root composed from a store entry that was extracted again: they
    /// still hold the damaged files (`cudaenv install --repair` each).
    std::vector<std::string> still_damaged;
    /// The framework's pins the resolution could not meet (Resolution::pins_not_met).
    std::vector<PinNotMet> pins_not_met;
};

/// Installs a resolution into `root`. Idempotent: an installed version returns changed=false
/// and writes nothing -- once it passed check_version (Depth::metadata; with options.repair,
/// content): a version that fails it is repaired (the damaged store entries extracted again and
/// replaced, the version composed again and swapped in), changed=true and `repaired` says what
/// was wrong. A version in an upstream root is checked and not repaired (exit 4 with the fix).
Result<Outcome> install(const store::Root& root,
                        const Resolution& res,
                        const Options& options,
                        const Observer& observer = {});

struct Removed {
    bool changed = false;
    std::vector<std::string> store_entries_removed;
};

/// Removes an installed version (moved aside, then deleted) and the store entries no other
/// version uses. The global version is refused (conflict, exit 7) unless `force`.
Result<Removed> uninstall(const store::Root& root,
                          const std::string& version,
                          bool force,
                          std::chrono::milliseconds lock_timeout);

struct InstalledVersion {
    std::string name;
    std::string cuda;
    std::string cudnn; ///< empty when none
    /// Its libcublas comes from a cuBLAS patch release (install --patch cublas): the patch's
    /// label and the libcublas version; both empty for the release's own.
    std::string cublas_patch;
    std::string cublas_version;
    std::string profile;
    std::string platform;
    std::uint64_t bytes = 0;
    std::filesystem::path prefix;
    std::filesystem::path root; ///< the root it lives in: the given one, or one of its upstreams
    bool upstream = false;      ///< read-only here: it lives in an upstream (machine-wide) root
    std::string problem;        ///< the record cannot be read: why (only with include_damaged)
    /// Another copy of the same name, in a root searched before this one, is the one every
    /// command uses (a user's own root before the machine-wide one): its prefix. Empty: this
    /// copy wins.
    std::filesystem::path shadowed_by;
};

/// Reads the record of every installed version, in every root (this one, then its upstreams): a
/// name installed in two roots is listed twice, the winner first and the other with
/// `shadowed_by` set. Sorted by name. A version whose record cannot be read (damaged, another
/// schema) is left out, or listed with `problem` set when `include_damaged`.
std::vector<InstalledVersion> list_installed(const store::Root& root, bool include_damaged = false);

/// Installed versions (this root's and its upstreams') holding `relative`: "bin/nvcc" (an
/// executable), "lib64/libcudnn.so.8". The one "which versions have it" loop of which, the shim
/// and doctor.
std::vector<std::string> versions_having(const store::Root& root,
                                         const std::filesystem::path& relative);

/// dlopen()s each file (RTLD_NOW) in this process; returns "file: dlerror" for failures.
/// Used by the `__check-libs` child that LibraryChecker runs.
std::vector<std::string> check_libraries_here(const std::filesystem::path& dir,
                                              const std::vector<std::string>& files);

/// Runs `exe __check-libs DIR FILES...` with LD_LIBRARY_PATH=DIR and collects its answer.
Result<std::vector<std::string>> check_libraries_in_child(const std::filesystem::path& exe,
                                                          const std::filesystem::path& dir,
                                                          const std::vector<std::string>& files);

} // namespace cudaenv::install
