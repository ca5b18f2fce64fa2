// Safe extraction (docs/reliability.md R3, R4): libarchive reads, our own filter decides, and our
// own code writes every entry with openat/O_NOFOLLOW/O_EXCL under a private directory.
//
// The filter sees the raw entry name and link target and refuses the whole archive (exit 5) on:
// an absolute name, any "..", an empty or "." segment, a backslash or control character, a
// duplicate name, a name under an earlier symlink, anything outside the one expected top
// directory, a type other than file/directory/symlink/hard link, a symlink whose target is
// absolute or leaves the top directory, a hard link to anything but an earlier regular file of the
// same archive, two names that are one on a case-insensitive or normalising filesystem (names.hpp),
// and archives beyond the caps on entries, bytes per entry, total bytes and path length. After the
// last entry every symlink is resolved the way the kernel follows it (links.hpp): one that leaves
// the tree through other links, or loops, refuses the archive too. Modes are normalised (0755 for
// directories and executables, 0644 otherwise; no setuid/setgid/sticky, no world-write) and owners
// are ignored. Only the expected compression is accepted (xz for .tar.xz, gzip for .tgz), and only
// tar.
#pragma once

#include "../error.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::archive {

struct Limits {
    std::uint64_t max_total_bytes = std::uint64_t{32} << 30;
    std::uint64_t max_entry_bytes = std::uint64_t{8} << 30;
    std::uint64_t max_entries = 200000;
    std::size_t max_path = 1024;
};

/// xz for .tar.xz, gzip for .tgz; none is a plain tar (never chosen from a download's name: the
/// fuzz targets feed the filter raw tar bytes, and a payload already decompressed may use it).
/// xz is decoded here, not by libarchive: libarchive's decoder accepts any dictionary up to its
/// fixed 1 GiB memory limit, so an archive could make each extraction (one per core) allocate up
/// to that much. Ours stops a stream that needs more than k_xz_memlimit (xz -9's 64 MiB
/// dictionary fits; NVIDIA's archives need about 9 MiB), and libarchive reads the tar it yields.
inline constexpr std::uint64_t k_xz_memlimit = 72u << 20;

/// The largest zstd window cudaenv decodes with: 2^26 bytes (64 MiB). zstd's own default limit is
/// 128 MiB; `zstd -19`, which `mirror --recompress` uses, needs 8 MiB. A frame that declares more
/// is refused before its window is allocated.
inline constexpr int k_zstd_window_log_max = 26;

/// zstd: only a fleet mirror's recompressed copy of an xz archive (mirror/recompressed.hpp).
enum class Compression { xz, gzip, none, zstd };

struct Entry {
    enum class Type { file, directory, symlink };
    Type type = Type::file;
    std::string path;       ///< relative to the top directory ("lib/libcudart.so.11.8.89")
    std::string target;     ///< symlinks: the target as written
    std::uint64_t size = 0; ///< files; a hard link: its target's
    bool executable = false;
    /// files: SHA-256 of the content, computed from the bytes as they were written (holes of a
    /// sparse file as the zeros they read as); a hard link: its target's.
    std::string sha256;
};

struct Extracted {
    std::string top;            ///< the archive's single top directory
    std::vector<Entry> entries; ///< in archive order, top directory stripped
    std::uint64_t bytes = 0;
};

/// Extracts `archive` into `dest` (an existing, empty, private directory): the archive's top
/// directory's contents land directly in `dest`. When `expected_top` is non-empty the top
/// directory must have that name. Errors: unsafe_archive (exit 5) naming the entry; filesystem.
/// On error, `dest` may hold a partial tree: the caller owns and removes it.
Result<Extracted> extract(const std::filesystem::path& archive,
                          const std::filesystem::path& dest,
                          Compression compression,
                          const std::string& expected_top,
                          const Limits& limits = {});

/// Which members of a payload to take and where each goes: a member's name (any leading "./"
/// removed) in; its path below the destination out, or nothing to skip it (its data is read past,
/// never written). The raw name is judged by the filter first, so a traversal is refused even in
/// a member that would be skipped.
using MemberMap = std::function<std::optional<std::string>(std::string_view name)>;

/// A byte range of a file: a runfile's payload.
struct Slice {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::string name; ///< the archive's name in errors; the file's own name when empty
    /// Sees every byte of the slice once, in order, as it is read (a runfile's own checksums):
    /// after a successful extraction the rest of the slice, if the archive ended before it, is
    /// read for it too.
    std::function<void(const void*, std::size_t)> tap = {};
};

/// Extracts the members `map` selects from the tar stored in `slice` of `file` into `dest`,
/// through the same filter as extract(): the raw name, then the mapped path (which must itself be
/// a plain relative path), with every cap, twin, link and type rule. A hard link to a member not
/// taken is not taken either. Bytes outside the slice are never read. `Extracted::top` is empty;
/// entry paths are the mapped ones.
Result<Extracted> extract_selected(const std::filesystem::path& file,
                                   Slice slice,
                                   const std::filesystem::path& dest,
                                   Compression compression,
                                   const MemberMap& map,
                                   const Limits& limits = {});

/// A runfile whose payload nests a second runfile (CUDA 10.x: run_files/cuda-linux.*.run): the
/// first member of the tar in `slice` of `file` that `pick` accepts is read as a makeself archive
/// -- its header parsed as data from the stream, checked against the member's size -- and the
/// members `map` selects from its payload are extracted as by extract_selected(). Nothing of
/// the outer payload is written. Errors: no member picked, or a picked member that is not a
/// regular file or not an intact makeself archive: unsafe_archive (exit 5; truncated: 4).
Result<Extracted> extract_nested(const std::filesystem::path& file,
                                 Slice slice,
                                 const std::filesystem::path& dest,
                                 Compression compression,
                                 const std::function<bool(std::string_view)>& pick,
                                 const MemberMap& map,
                                 const Limits& limits = {});

/// The compression an artifact path implies, if it is one we accept.
std::optional<Compression> compression_for(const std::string& path);

} // namespace cudaenv::archive
