// PyTorch's and JAX's rows (manifests/frameworks/pytorch.json, jax.json) from the reference
// tables data/reference/frameworks/{pytorch,jax}.json, which say of every value where it was read
// and whether that is primary, and cudaenv's own curation of them
// (data/reference/cudaenv-frameworks.json: which pin snapshot belongs to which release, values
// confirmed elsewhere, the verdict rules with their sources). Part of `generate_manifests`.
#pragma once

#include "../error.hpp"
#include "generate.hpp"
#include "model.hpp"

#include <filesystem>
#include <vector>

namespace cudaenv::manifest {

/// Both frameworks, or none when data/reference/frameworks is absent (an older reference tree).
Result<std::vector<Framework>> python_frameworks(const std::filesystem::path& reference_dir,
                                                 GenerateReport& report);

/// "CUDA 11.8, CUDA 12.1, CUDNN 9.1.0.70" / "CUDA 12.6 (CUDNN 9.10.2.21) (NCCL 2.27.5), ..." ->
/// CUDA major.minor -> cuDNN: a CUDA takes the next cuDNN named after it in the same text.
std::map<std::string, std::string> parse_release_matrix(std::string_view text);

/// A pip requirement's lower bound and upper bound: ">=9.8,<10.0" -> {9.8, 10.0}; "==9.1.0.70"
/// -> {9.1.0.70, none}; "" or "(unconstrained)" -> none.
struct Bounds {
    std::optional<Version> at_least;
    std::optional<Version> below;
    bool exact = false;
};

Bounds requirement_bounds(std::string_view requirement);

} // namespace cudaenv::manifest
