// The manifest generator: turns the reference data (NVIDIA's redistrib files and facts.json,
// data/reference in the repository) into cudaenv's own manifests. Run as `cudaenv
// __generate-manifests`; the output is committed under manifests/ and a test checks that it is up
// to date.
//
// What it takes from where (docs/manifests.md has the whole list):
//   cuda/<v>.json     redistrib_<v>.json (components, pinned sha256 of the file itself) +
//                     facts: min driver (Table 3), compat floor, SM range, gcc/clang max;
//                     releases before 11.4.2 from facts' runfile list
//   cudnn/<v>.json    cudnn redistrib files where saved, else facts' cudnn_releases (7.6 on)
//   frameworks/tensorflow.json, gpus.json, rules.json   from facts
//   gpu-support.json  gpus/: GPUs by PCI id, architectures' last branches, branch end of life
//   advisories.json   advisories.json (NVIDIA's bulletins) + cudaenv-advisories.json (ours)
//   cublas.json       advisories.json's cublas_patches: NVIDIA's cuBLAS patch releases
//   announced.json, driver-indexes.json   cuda-2026-12-supplement.json: releases whose index
//                     is not known (13.5, 13.4.0), per-driver indexes with their cuda_compat
//   cudaenv-supplement.json beside facts.json adds Table 3 rows, driver branches, compilers
// profiles.json is the project's own choice and is not generated.
#pragma once

#include "../error.hpp"

#include <filesystem>
#include <map>

namespace cudaenv::manifest {

struct GenerateReport {
    std::size_t cuda_redist = 0;
    std::size_t cuda_runfile = 0;
    std::size_t cudnn = 0;
    /// cuDNN releases known in part (the opening of NVIDIA's index page): added, or completed
    std::size_t cudnn_in_part = 0;
    std::size_t framework_rows = 0; ///< TensorFlow's

    /// PyTorch's and JAX's: release rows, the values they carry (a variant's CUDA, cuDNN and
    /// pin set; a release's default variant) and how many of those a primary source gives
    struct FrameworkCount {
        std::size_t rows = 0;
        std::size_t variants = 0;
        std::size_t values = 0;
        std::size_t primary = 0;
    };

    std::map<std::string, FrameworkCount> frameworks;
    std::size_t gpus = 0;
    std::size_t gpu_listings = 0; ///< PCI ids (with subsystem where it matters) in gpu-support.json
    std::size_t cublas_patches = 0;   ///< NVIDIA's cuBLAS patch releases in cublas.json
    std::size_t registry_checked = 0; ///< redistrib files whose sha256 matched the registry
    std::size_t index_pinned = 0;     ///< releases known by their index's sha256 alone
    std::size_t advisories = 0;       ///< in advisories.json
    std::size_t announced = 0;        ///< releases NVIDIA published whose index is not known
    std::size_t driver_indexes = 0;   ///< NVIDIA's per-driver indexes with cuda_compat known
    /// Components NVIDIA publishes that no profile names or excludes (new, or renamed -- as
    /// cuda_cccl became cccl in 13.3): only `full` would install them. Said out loud by the
    /// generator, and kept empty for the built-in profiles by a test.
    std::vector<std::string> unplaced;
};

/// Writes cuda/, cudnn/, frameworks/, gpus.json and rules.json under `out_dir` from
/// `reference_dir`; removes release files that are no longer generated.
Result<GenerateReport> generate_manifests(const std::filesystem::path& reference_dir,
                                          const std::filesystem::path& out_dir);

} // namespace cudaenv::manifest
