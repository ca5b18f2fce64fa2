// A cuBLAS patch release from NVIDIA's own cuBLAS index (compute/cublas/redist/
// redistrib_<label>.json: release_product "cublas", one component libcublas with archives nested
// by cuda_variant) turned into an entry of the reference's advisories.json cublas_patches.
// Which toolkit line a patch replaces is not in NVIDIA's index: it is inferred, and marked
// INFERRED, from the CUDA indexes saved in the reference -- the line one of whose releases
// bundles a libcublas of the patch's major.minor. Where none does, or several lines do, it is not
// known and the patch is refused (docs/refresh.md).
#pragma once

#include "../error.hpp"
#include "../version.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>

namespace cudaenv::refresh {

/// CUDA release -> the libcublas version its saved index bundles.
using BundledCublas = std::map<std::string, std::string>;

/// The libcublas version bundled by each CUDA index (cuda-redistrib_<v>.json) in `reference`.
Result<BundledCublas> bundled_cublas(const std::filesystem::path& reference);

/// The cublas_patches entry for the index `text` (its file named for `label`). `source` is written
/// as the entry's source. Errors: integrity (not a cuBLAS index, a field missing), not_found
/// (which toolkit line it replaces is not known).
Result<nlohmann::ordered_json> cublas_patch_from_index(std::string_view text,
                                                       const std::string& label,
                                                       const BundledCublas& bundled,
                                                       const std::string& source);

} // namespace cudaenv::refresh
