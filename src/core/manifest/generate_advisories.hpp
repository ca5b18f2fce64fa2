// advisories.json from the reference: NVIDIA's security bulletins as data/reference/advisories.json
// holds them (parsed from NVIDIA's PSIRT CSAF/CVE files: per-branch first fixed drivers, the
// toolkit, container toolkit and Jetson rows in NVIDIA's own words) and cudaenv's curation,
// data/reference/cudaenv-advisories.json (correctness advisories fixed by cuBLAS patch releases,
// written in the manifest's own format, each range with its basis). Part of `generate_manifests`.
//
// NVIDIA's "affected" words are read by a small grammar ("All versions prior to X", "All versions
// up to and including X", "X and earlier", "All versions up to CUDA Toolkit X", "... Update N",
// "JP6.x: X", a bare version); a row in any other words fails the generation, naming it, so a new
// wording is read by a person before it reaches a host.
#pragma once

#include "../error.hpp"
#include "advisories.hpp"
#include "generate.hpp"

#include <filesystem>
#include <optional>
#include <string_view>

namespace cudaenv::manifest {

/// None when data/reference/advisories.json is absent (an older reference tree).
Result<std::optional<Advisories>> generate_advisories(const std::filesystem::path& reference_dir,
                                                      GenerateReport& report);

/// One of NVIDIA's "affected" phrases as a range bound: {version, inclusive}. "All versions prior
/// to CUDA Toolkit 12.9 Update 1" -> {12.9.1, false}; "35.6.2 and earlier" -> {35.6.2, true};
/// "All versions prior to JP6.x: 36.4.4" -> {36.4.4, false}; "38.2" -> {38.2, true}. The note in
/// parentheses is returned apart. None: words this grammar does not know.
struct AffectedBound {
    Version version;
    bool inclusive = false;
    std::string note;
};

std::optional<AffectedBound> parse_affected(std::string_view text);

} // namespace cudaenv::manifest
