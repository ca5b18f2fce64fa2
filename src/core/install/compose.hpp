// Composing a selectable version from store entries, and verifying it before it is published.
//
// CUDA component trees keep their layout with lib/ renamed lib64/ (top-level LICENSE files
// stay in the store). Every cuDNN library, wherever its archive put it (lib/, lib64/,
// cuda/lib64/, a nested folder), lands in lib64/ with its symlinks (the SONAME chain) rewritten
// to point next to it; its headers land in include/. Files are hard links to the store, so a
// version costs no extra space and the store stays the single copy.
#pragma once

#include "../error.hpp"
#include "../resolve/resolve.hpp"
#include "../store/records.hpp"
#include "install.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace cudaenv::install {

struct StoreEntry {
    std::string name;
    std::filesystem::path dir;
    std::string component;
    std::string version;
    std::string sha256;
    bool cudnn = false;
    bool runfile = false; ///< a runfile's selection: one folder per component
    std::string patch;    ///< the patch release it comes from (VersionComponent::patch)
};

/// Builds the version in `stage` (an empty private directory), verifies it and writes its
/// record. Verification failures are integrity errors that say exactly what is wrong.
Status compose_version(const std::filesystem::path& stage,
                       const Resolution& res,
                       const std::vector<StoreEntry>& entries,
                       const LibraryChecker& check_libraries);

/// One path of a composed version, as compose_version puts it there.
struct VersionFile {
    store::FileRecord::Type type = store::FileRecord::Type::file;
    std::string entry;  ///< the store entry it comes from; empty: cudaenv's own (lib -> lib64)
    std::string source; ///< files: its path in the entry
    std::uint64_t size = 0;
    bool executable = false;
    std::string sha256; ///< empty when the entry's record predates per-file hashes
    std::string target; ///< symlinks
};

/// What compose_version puts at each path of a version composed from `entries` (their records
/// in the same order), computed from the records alone, nothing read or written: every file,
/// link and folder by its path in the version. What `cudaenv verify` compares a version with.
/// The files compose_version writes itself (version.json, the records) are not in it.
Result<std::map<std::string, VersionFile>>
version_tree(const std::vector<StoreEntry>& entries,
             const std::vector<store::StoreRecord>& records,
             const std::string& platform);

/// CUDNN_MAJOR.MINOR.PATCHLEVEL from a cudnn_version.h / cudnn.h text, if all three are there.
std::optional<Version> parse_cudnn_header(std::string_view text);

} // namespace cudaenv::install
