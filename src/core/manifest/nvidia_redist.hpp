// NVIDIA's redistrib_<version>.json, read as NVIDIA writes it (CUDA 11.4.2 on, cuDNN 8.5 on).
//
// Top level: release_date, optional release_label/release_product, then one object per
// component. A component holds name, license, version and one object per platform key
// (linux-x86_64, linux-sbsa, ..., linux-all, source). A platform object is either an artifact
// {relative_path, sha256, md5, size} or, for components with "cuda_variant", a map from
// "cuda<variant>" to such an artifact. Sizes are decimal strings. Unknown keys are ignored;
// a missing sha256 or an unsafe relative_path is refused (fail closed).
#pragma once

#include "../error.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::manifest {

struct RedistArtifact {
    std::string relative_path;
    std::string sha256;
    std::optional<std::uint64_t> size;
};

struct RedistComponent {
    std::string key; ///< "cuda_cudart"
    std::string name;
    std::string license;
    std::string version;
    std::vector<std::string> cuda_variants;
    /// platform -> variant ("" when the component has none, else "cuda11") -> artifact
    std::map<std::string, std::map<std::string, RedistArtifact>> platforms;
};

struct RedistIndex {
    std::string release_date;
    std::string release_label;
    std::string release_product;
    std::vector<RedistComponent> components; ///< in file order

    const RedistComponent* find(std::string_view key) const;
};

/// Parses the bytes of a redistrib file. Errors are ErrorCode::integrity naming `origin`.
Result<RedistIndex> parse_redistrib(std::string_view text, std::string_view origin);

struct CudaRelease;
struct CudnnRelease;

/// A CUDA release made from NVIDIA's index alone (components for cudaenv's platforms, nvcc
/// version); `redistrib` is the index file itself. Driver, SM and compiler facts are not in
/// NVIDIA's index and are left empty.
/// Where NVIDIA keeps a release's index under the download base: "cuda" + "13.1.2" ->
/// cuda/redist/redistrib_13.1.2.json.
std::string redistrib_path(std::string_view product, std::string_view version);

Result<CudaRelease> cuda_release_from_redist(const RedistIndex& idx,
                                             const std::string& version,
                                             const struct Artifact& redistrib);

/// A cuDNN release made from NVIDIA's cuDNN index: its "cudnn" component, one build per
/// "cuda<major>" variant (or, for single-variant indexes such as 8.9.7.29, the major named in the
/// archive file), for cudaenv's platforms.
Result<CudnnRelease> cudnn_release_from_redist(const RedistIndex& idx,
                                               const struct Artifact& redistrib);

} // namespace cudaenv::manifest
