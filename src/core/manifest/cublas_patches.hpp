// cublas.json: the cuBLAS patch releases NVIDIA ships apart from the CUDA Toolkit (from March
// 2026, compute/cublas/redist/redistrib_<label>.json), each with the toolkit line it replaces
// (stated or inferred, and the source), its archives and what it fixes where known
// (docs/manifests.md). The model is in model.hpp (CublasPatch); this is its codec, and the one
// rule of which patch applies to which release.
#pragma once

#include "../error.hpp"
#include "model.hpp"

#include <nlohmann/json_fwd.hpp>

#include <string_view>
#include <vector>

namespace cudaenv::manifest {

inline constexpr const char* k_cublas_file = "cublas.json";
inline constexpr const char* k_cublas_kind = "cublas-patches";

/// Every field checked: label and version (the version's major.minor.patch is the label), the
/// line it replaces (major.minor, of the archives' CUDA major), the basis ("inferred" or
/// "stated") with its source, each archive's safe relative path, sha256 and size. Sorted by
/// version; a label twice is refused.
Result<std::vector<CublasPatch>> parse_cublas_patches(const nlohmann::json& doc,
                                                      std::string_view origin);
nlohmann::ordered_json cublas_patches_to_json(const std::vector<CublasPatch>& patches);

/// The patches NVIDIA published for `release`'s cuBLAS, newest first: of its line
/// (major.minor), for its CUDA major, and newer than the libcublas the release itself ships
/// (a patch older than or equal to the release's own is not one for it). Empty for a release
/// without a libcublas component (a runfile, a release known by its index alone).
std::vector<const CublasPatch*> applicable_cublas_patches(const Catalog& catalog,
                                                          const CudaRelease& release);

/// The patch named by its label ("13.4.1") or its full version ("13.4.1.2"); null if none.
const CublasPatch* find_cublas_patch(const Catalog& catalog, std::string_view name);

} // namespace cudaenv::manifest
