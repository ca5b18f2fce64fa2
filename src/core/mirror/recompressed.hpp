// A fleet mirror's recompressed archives (docs/fleet.md, "Recompressed mirrors").
//
// xz decoding is the floor of every install from NVIDIA's archives. `cudaenv mirror --recompress
// zstd --sign-key FILE` gives a mirror a zstd copy of each of NVIDIA's .tar.xz archives, beside
// the originals, and an index signed by the site's key (the update channel's keys,
// docs/channel.md):
//
//   <mirror>/cudaenv-recompressed/index
//   <mirror>/cudaenv-recompressed/cuda/redist/cuda_cudart/linux-x86_64/cuda_cudart-...-archive.tar.zst
//
// Each index entry binds NVIDIA's original (path, sha256, size) -- the hash the manifests pin --
// to the recompressed file's sha256 and size. A host installing from the mirror fetches the index,
// accepts it only when a signature by a key it trusts verifies (the shipped keys and
// /etc/cudaenv/keys/*.pub), and then downloads the zstd copy of an archive the manifests pin,
// verified against the index's sha256. So the trust chain runs from NVIDIA's hash (the manifests)
// through the site's signature (the index) to the bytes. A mirror without an index is an ordinary
// mirror (NVIDIA's archives); an index that does not verify, or a copy that does not match it, is
// refused (exit 4) like any tampered file.
//
// The index is the update channel's envelope (channel/envelope.hpp) in its own format:
//
//   cudaenv-recompressed/1
//   signature <key id> <Ed25519 signature>
//
//   {"schema": "cudaenv.recompressed/1", "created": "2026-12-07T10:00:00Z",
//    "archives": [{"original": {"path": "cuda/redist/...tar.xz", "sha256": ..., "size": ...},
//                  "path": "cudaenv-recompressed/cuda/redist/...tar.zst", "sha256": ...,
//                  "size": ..., "codec": "zstd"}, ...]}
#pragma once

#include "../channel/envelope.hpp"
#include "../channel/signing.hpp"
#include "../error.hpp"
#include "../fetch/download.hpp"
#include "mirror.hpp"

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

inline constexpr const char* k_recompressed_dir = "cudaenv-recompressed";
inline constexpr const char* k_recompressed_index = "cudaenv-recompressed/index";
/// zstd -19: about the size of NVIDIA's xz -6 archives (within ~10%), an 8 MiB window, and
/// decoding ~8x faster than xz. Slow to make (minutes per GiB on two cores), made once.
inline constexpr int k_default_zstd_level = 19;
/// Bounds on what a mirror's index may make a host read.
inline constexpr std::size_t k_max_index_bytes = std::size_t{16} << 20;
inline constexpr std::size_t k_max_index_archives = 100000;
/// How deep its payload may nest (4 levels in format 1).
inline constexpr std::size_t k_max_index_depth = 8;

struct RecompressedArchive {
    std::string original_path; ///< NVIDIA's: "cuda/redist/cuda_cudart/...-archive.tar.xz"
    std::string original_sha256;
    std::uint64_t original_size = 0;
    std::string path; ///< below the mirror's base: "cudaenv-recompressed/cuda/redist/....tar.zst"
    std::string sha256;
    std::uint64_t size = 0;
};

struct RecompressedIndex {
    std::string created;
    std::string key_id; ///< the trusted key whose signature verified
    /// By NVIDIA's sha256 (what the manifests pin).
    std::map<std::string, RecompressedArchive> by_original;
};

/// The signed index of `archives`. Errors: usage (no keys), failure (libcrypto).
Result<std::string> make_index(const std::vector<RecompressedArchive>& archives,
                               const std::string& created,
                               const std::vector<channel::SecretKey>& keys);

/// Reads an index, accepting it only when a signature by one of `keys` verifies; every entry is
/// checked (paths below cudaenv-recompressed/, hashes, no original twice). Entries in a codec
/// this cudaenv does not know are left out. Errors: integrity (exit 4), incompatible (a later
/// format or schema: exit 8).
Result<RecompressedIndex>
open_index(std::string_view bytes, const channel::KeyRing& keys, std::string_view origin);

/// The index the mirror at `base_url` serves, verified with `keys`; none when the mirror has
/// none (HTTP 404 or 410). Errors: network (exit 3), and open_index's.
Result<std::optional<RecompressedIndex>>
fetch_index(const std::string& base_url, const fetch::Policy& policy, const channel::KeyRing& keys);

struct RecompressOptions {
    int level = k_default_zstd_level;
    unsigned threads = 0; ///< zstd's workers; 0: one per core
    std::vector<channel::SecretKey> keys;
    std::chrono::milliseconds lock_timeout{std::chrono::seconds(600)};
    /// Tests and benchmarks: the index's creation time (RFC 3339 UTC); empty: now.
    std::string created;
};

struct RecompressOutcome {
    std::vector<RecompressedArchive> archives; ///< every archive of the mirror, by path
    std::size_t made = 0;                      ///< recompressed by this run (the rest reused)
    std::uint64_t original_bytes = 0;
    std::uint64_t recompressed_bytes = 0;
    std::string index_path; ///< "cudaenv-recompressed/index"
};

/// Called before each archive is recompressed (from the calling thread).
using RecompressObserver = std::function<void(const RecompressedArchive& archive)>;

/// Gives every .tar.xz the mirror in `dir` records a zstd copy (reusing a copy a previous index
/// signed by one of these keys lists, when its file still verifies) and writes the signed index;
/// both are added to the mirror's record, so `mirror --verify` checks them. An original is
/// decoded with the install's xz memory limit. Atomic per file: a copy appears at its path only
/// complete, and the index only after every copy it lists. Errors: usage (no keys), integrity
/// (an original that does not verify, or is not xz), filesystem (6), lock timeout (75).
Result<RecompressOutcome> recompress(const std::filesystem::path& dir,
                                     const RecompressOptions& options,
                                     const RecompressObserver& observer = {});

} // namespace cudaenv::mirror
