// announced.json and driver-indexes.json from the reference's cuda-2026-12-supplement.json:
// the CUDA releases NVIDIA published whose index is not known (`cuda_13_5`, `cuda_13_4_0`: what
// is known of each, every value with its basis), and NVIDIA's per-driver indexes with the
// cuda_compat archives they carry (`nvidia_driver_redist_index.entries_seen`). Part of
// `generate_manifests`.
#pragma once

#include "../error.hpp"
#include "generate.hpp"
#include "model.hpp"

#include <filesystem>
#include <optional>
#include <vector>

namespace cudaenv::manifest {

struct CudaSupplement {
    /// Announced releases, less those `cuda` describes (a release known in full wins); none
    /// without the file.
    std::optional<std::vector<AnnouncedRelease>> announced;
    /// The per-driver indexes with a cuda_compat archive whose sha256 and size the reference
    /// has (an archive without them is left out: not known); none without the section.
    std::optional<std::vector<DriverIndex>> driver_indexes;
};

/// Reads `reference_dir`/cuda-2026-12-supplement.json when it is there. `cuda` is the CUDA
/// releases generated from the same reference (a preview's GA release must be one of them).
Result<CudaSupplement> cuda_supplement_from_reference(const std::filesystem::path& reference_dir,
                                                      const std::vector<CudaRelease>& cuda,
                                                      GenerateReport& report);

} // namespace cudaenv::manifest
