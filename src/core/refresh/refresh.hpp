// `cudaenv __refresh` (docs/refresh.md): NVIDIA's newer data, read from folders, into a new copy
// of the reference data (data/reference). What is new:
//   - a CUDA or cuDNN index (NVIDIA's download tree: cuda/redist/redistrib_<v>.json,
//     cudnn/redist/redistrib_<v>.json) not in the reference: copied byte for byte as
//     cuda-redistrib_<v>.json / cudnn-redistrib_<v>.json;
//   - a cuBLAS patch index (cublas/redist/redistrib_<label>.json) whose label the reference's
//     cublas_patches lacks: an entry there (cublas_index.hpp), the index saved byte for byte as
//     cublas-redistrib_<label>.json;
//   - a bulletin of NVIDIA/product-security (<year>/<id>/<id>.json, CSAF) about a driver, the
//     CUDA Toolkit, the Container Toolkit or Jetson, published in or after the year of the
//     reference's first bulletin: an entry in advisories.json (psirt.hpp); one NVIDIA revised since
//     (a later current_release_date) replaces the old entry.
// An index whose bytes differ from the reference's copy of the same version is a repin, never
// taken here (docs/channel.md, "What a channel may change: pins").
#pragma once

#include "../error.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace cudaenv::refresh {

struct Inputs {
    std::filesystem::path
        nvidia; ///< laid out like developer.download.nvidia.com/compute; empty: none
    std::filesystem::path psirt; ///< a copy of NVIDIA/product-security; empty: none
    std::string psirt_source;    ///< where that copy comes from (a commit), for the entries' source
};

struct Addition {
    enum class Kind { cuda_index, cudnn_index, cublas_patch, bulletin, bulletin_revised };
    Kind kind = Kind::cuda_index;
    std::string
        what; ///< "CUDA 13.4.2", "cuBLAS patch 13.8.2 (libcublas 13.8.2.12)", "NVIDIA-5599 ..."
    std::string input; ///< the input file, relative to its folder
    std::string file;  ///< the reference file it adds or changes

    const char* kind_text() const;
};

/// What a refresh adds to a reference, ready to write.
struct ReferencePlan {
    std::vector<Addition> added;
    std::vector<std::pair<std::filesystem::path, std::string>> copies; ///< input -> reference name
    std::string advisories;            ///< advisories.json's new text; empty: unchanged
    std::size_t bulletins_seen = 0;    ///< CSAF bulletins read
    std::size_t bulletins_skipped = 0; ///< not cudaenv's products, or older than the reference
};

/// Reads the inputs against `reference`. Errors: integrity (a malformed input, an index whose
/// bytes changed for a version the reference has), not_found (a cuBLAS patch whose toolkit is not
/// known), filesystem.
Result<ReferencePlan> plan_reference(const std::filesystem::path& reference, const Inputs& in);

/// A copy of `reference` with the plan applied, written into `out` (an empty folder).
Status write_reference(const std::filesystem::path& reference,
                       const ReferencePlan& plan,
                       const std::filesystem::path& out);

/// advisories.json's text as the reference writes it (one space indent, ASCII with \u escapes, no
/// final newline), so that an unchanged document reads back byte for byte.
std::string advisories_text(const nlohmann::ordered_json& doc);

} // namespace cudaenv::refresh
