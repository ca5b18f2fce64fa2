// driver-indexes.json: NVIDIA's per-driver indexes (compute/nvidia-driver/redist/
// redistrib_<driver>.json) as far as the manifests know them. From CUDA 13.4 NVIDIA ships the
// forward-compatibility libraries (cuda_compat) there, nested by a CUDA minor ("cuda13.5"),
// instead of in the CUDA index (docs/compat.md). The model is in model.hpp (DriverIndex); this is
// its codec and the one rule of which driver's cuda_compat a release takes.
#pragma once

#include "../error.hpp"
#include "model.hpp"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <string_view>
#include <vector>

namespace cudaenv::manifest {

inline constexpr const char* k_driver_indexes_file = "driver-indexes.json";
inline constexpr const char* k_driver_indexes_kind = "driver-indexes";

/// The first CUDA whose own index no longer carries cuda_compat (13.4).
const Version& compat_per_driver_from();

/// Every field checked: the driver version, the index's safe relative path, the CUDA minor its
/// cuda_compat is for, each archive's safe relative path, sha256 and size. Sorted by driver; a
/// driver twice is refused.
Result<std::vector<DriverIndex>> parse_driver_indexes(const nlohmann::json& doc,
                                                      std::string_view origin);
nlohmann::ordered_json driver_indexes_to_json(const std::vector<DriverIndex>& indexes);

/// Where `release`'s cuda_compat comes from when NVIDIA ships it with the driver: for a
/// redistrib release of CUDA 13.4 or later whose own index has no cuda_compat, the newest
/// driver whose index the manifests know with a cuda_compat archive for the release's minor on
/// `platform`. Null otherwise (an older release, one with its own cuda_compat, none known).
const DriverIndex* driver_compat_for(const std::vector<DriverIndex>& indexes,
                                     const CudaRelease& release,
                                     std::string_view platform);

/// The drivers whose index the manifests know with cuda_compat for `release`'s minor, on any
/// platform, ascending: what a refusal on another platform names.
std::vector<const DriverIndex*> driver_compat_any(const std::vector<DriverIndex>& indexes,
                                                  const CudaRelease& release);

/// `dir`/driver-indexes.json (empty when absent), for readers without a Catalog (the doctor).
Result<std::vector<DriverIndex>> load_driver_indexes(const std::filesystem::path& dir);

} // namespace cudaenv::manifest
