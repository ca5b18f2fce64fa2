// `cudaenv mirror` (docs/design.md §4, §6): everything some resolutions need -- NVIDIA's archives
// and the redistrib index files -- downloaded and verified into a directory laid out exactly like
// NVIDIA's host, so any static HTTP server can serve it and CUDAENV_MIRROR works unchanged.
//
//   <dir>/cuda/redist/redistrib_11.8.0.json
//   <dir>/cuda/redist/cuda_cudart/linux-x86_64/cuda_cudart-linux-x86_64-11.8.89-archive.tar.xz
//   <dir>/.cudaenv-mirror.json           every file the mirror holds, with its sha256 and size
//   <dir>/.cudaenv-mirror.partial/       downloads in progress (resumed by the next run)
//
// A file appears at its path only complete and verified (downloaded under the partial folder,
// then renamed); a rerun re-hashes what is there and downloads nothing that is right. The
// directory itself is the lock, as a root is.
#pragma once

#include "../error.hpp"
#include "../fetch/download.hpp"
#include "../fs.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::mirror {

inline constexpr const char* k_record = ".cudaenv-mirror.json";
inline constexpr const char* k_partial_dir = ".cudaenv-mirror.partial";

struct File {
    std::string path; ///< relative to the mirror's base: "cuda/redist/redistrib_11.8.0.json"
    std::string sha256;
    std::optional<std::uint64_t> size;
    std::string what; ///< "cuda_cudart 11.8.89", "NVIDIA's CUDA 11.8.0 index"
    /// Bytes already in hand to write instead of downloading (the update channel's bundle in
    /// use, read and verified once); checked against sha256 as a download is.
    std::optional<std::string> content = {};
};

struct Options {
    std::string base_url; ///< where to download from (NVIDIA's host, or another mirror)
    fetch::Policy policy;
    unsigned jobs = 4;
    bool dry_run = false;
    std::chrono::milliseconds lock_timeout{std::chrono::seconds(600)};
};

struct Event {
    enum class Kind { present, downloading, progress, done };
    Kind kind = Kind::progress;
    const File* file = nullptr;
    std::uint64_t bytes = 0;
    std::optional<std::uint64_t> total;
};

/// Called from worker threads; must be thread-safe.
using Observer = std::function<void(const Event&)>;

struct FileOutcome {
    File file;
    bool present = false;    ///< already there and verified: nothing downloaded
    bool downloaded = false; ///< verified and renamed into place by this run
    std::uint64_t bytes = 0; ///< downloaded now (0 when a complete partial file was reused)
};

struct Outcome {
    bool changed = false;
    std::vector<FileOutcome> files; ///< in the order asked
    std::uint64_t downloaded_bytes = 0;
};

/// Makes `dir` hold every file, verified. The same path asked twice with different hashes is an
/// integrity error (two manifests disagree). Errors: network (3), integrity (4; nothing is left
/// at the file's path), filesystem (6), lock timeout (75).
Result<Outcome> mirror(const std::filesystem::path& dir,
                       const std::vector<File>& files,
                       const Options& options,
                       const Observer& observer = {});

struct Problem {
    std::string path;
    std::string what; ///< "missing", "sha256 ..., expected ...", "size ..., expected ..."
};

/// Re-hashes every file the mirror's record lists (jobs at a time) and returns every one that is
/// missing or wrong. Errors: a missing or unreadable record (integrity, 4).
Result<std::vector<Problem>> verify(const std::filesystem::path& dir, unsigned jobs);

/// Why `path` is no path a mirror holds (absolute; an empty, "." or ".." part; a control
/// character or backslash; a part naming the mirror's own files); none when it is one.
std::optional<std::string> path_problem(std::string_view path);

/// The file at `f.path` below the base is the one wanted: a regular file (never a link) of
/// f.size, when known, with f.sha256.
bool holds(const Contained& base, const File& f);

/// The files the mirror's record lists, by path (empty when it has none yet). For the mirror's
/// own later passes (recompressed.hpp), which hold its lock.
Result<std::map<std::string, File>> recorded_files(const Contained& base);

/// Adds (or replaces, by path) `files` in the mirror's record. The caller holds the lock.
Status record_files(const Contained& base, const std::vector<File>& files);

} // namespace cudaenv::mirror
