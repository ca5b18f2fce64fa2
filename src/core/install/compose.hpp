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
#include "install.hpp"

#include <filesystem>
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
};

/// Builds the version in `stage` (an empty private directory), verifies it and writes its
/// record. Verification failures are integrity errors that say exactly what is wrong.
Status compose_version(const std::filesystem::path& stage,
                       const Resolution& res,
                       const std::vector<StoreEntry>& entries,
                       const LibraryChecker& check_libraries);

/// NVIDIA's name for a platform's target folder: linux-x86_64 -> x86_64-linux (the
/// `targets/<triple>` that nvcc.profile names); empty for a platform it does not know.
std::string target_triple(const std::string& platform);

/// CUDNN_MAJOR.MINOR.PATCHLEVEL from a cudnn_version.h / cudnn.h text, if all three are there.
std::optional<Version> parse_cudnn_header(std::string_view text);

} // namespace cudaenv::install
