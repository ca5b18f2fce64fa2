// gpu-support.json: GPUs by PCI id with the first driver of each branch that lists them, the
// last driver branch of each architecture, and driver branches' end of life (docs/manifests.md).
// The model is in model.hpp (GpuSupport); this is its codec, kept apart from codec.cpp.
#pragma once

#include "../error.hpp"
#include "model.hpp"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace cudaenv::manifest {

/// `dir`/gpu-support.json; an empty GpuSupport when the file is absent (manifests made without
/// the GPU tables: every id is then unknown and the family rule answers).
Result<GpuSupport> load_gpu_support(const std::filesystem::path& dir);
Result<GpuSupport> parse_gpu_support(const nlohmann::json& doc, std::string_view origin);
nlohmann::ordered_json gpu_support_to_json(const GpuSupport& s);

/// "0x2331", "2331", "0X2331" -> "2331"; empty when it is not four hex digits.
std::string normalize_pci_id(std::string_view id);

} // namespace cudaenv::manifest
