// cuDNN releases known from the opening of NVIDIA's index pages alone
// (data/reference/cudnn-redist-excerpts-2026.json: 9.21.0, 9.23.0-9.28.1): the release date, the
// full version and the archives the excerpt shows (linux-x86_64 for CUDA 12 and 13, linux-sbsa for
// CUDA 12), each with NVIDIA's sha256 and size. The rest of each index is not known, and the
// manifest says so (`known_in_part`) instead of guessing. Part of `generate_manifests`.
#pragma once

#include "../error.hpp"
#include "model.hpp"

#include <filesystem>
#include <vector>

namespace cudaenv::manifest {

/// Adds the excerpts' releases to `releases` (a release already described in full by a saved
/// index must agree with its excerpt; one known from facts.json by its hashes alone is completed:
/// sizes, date, paths); nothing when the file is absent (an older reference tree). A sha256 that
/// disagrees with what is already known stops the generator. Returns how many releases were
/// added or completed.
Result<std::size_t> apply_cudnn_excerpts(const std::filesystem::path& reference_dir,
                                         std::vector<CudnnRelease>& releases);

} // namespace cudaenv::manifest
