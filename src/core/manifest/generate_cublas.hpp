// cublas.json from the reference's advisories.json (`cublas_patches`: NVIDIA's cuBLAS patch
// releases, each transcribed from its index page compute/cublas/redist/redistrib_<label>.json,
// with the toolkit line it replaces -- inferred from the version numbering unless NVIDIA or a
// quote of NVIDIA says so -- and what it fixes where known). Part of `generate_manifests`.
#pragma once

#include "../error.hpp"
#include "generate.hpp"
#include "model.hpp"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace cudaenv::manifest {

/// The patches of `reference_dir`/advisories.json; none when the file is absent (an older
/// reference tree: no cublas.json is written).
Result<std::optional<std::vector<CublasPatch>>>
cublas_patches_from_reference(const std::filesystem::path& reference_dir, GenerateReport& report);

/// The same from the parsed `cublas_patches` object ({"patches": [...]}); `origin` names it.
Result<std::vector<CublasPatch>> cublas_patches_from_json(const nlohmann::json& cublas,
                                                          std::string_view origin);

} // namespace cudaenv::manifest
