// Reading and writing cudaenv's manifest files (docs/manifests.md).
//
// Every reader validates as it parses and fails closed: an unknown schema, a missing or malformed
// sha256, a path that is absolute or contains "..", or a file whose name disagrees with the
// version inside is refused with ErrorCode::integrity and the file named. Unknown keys are
// ignored so that newer manifests with extra facts still load.
#pragma once

#include "../error.hpp"
#include "../sha256.hpp"
#include "model.hpp"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace cudaenv::manifest {

/// A manifests set as files: relative path ("cuda/11.8.0.json", "profiles.json") -> text.
using ManifestFiles = std::map<std::string, std::string>;

/// True for a manifest file's place in a set: "<name>.json" at the top or in cuda/, cudnn/ or
/// frameworks/, the name of letters, digits and "._+-" (not starting with '.'), not
/// release.json (the set's own header, not a manifest).
bool is_manifest_file_name(std::string_view rel);

/// The manifest files of a directory (is_manifest_file_name; others are not read).
Result<ManifestFiles> read_manifest_dir(const std::filesystem::path& dir);

/// One validated Catalog from a set's files; `shown` (a directory, a URL) prefixes their names
/// in errors. Needs profiles.json, rules.json and at least one cuda/*.json.
Result<Catalog> parse_catalog(const ManifestFiles& files, const std::string& shown);

/// Loads every manifest under `dir` (cuda/, cudnn/, frameworks/, gpus.json, profiles.json,
/// rules.json) into one validated Catalog.
Result<Catalog> load_catalog(const std::filesystem::path& dir);

/// Loads only <dir>/frameworks/*.json (what selection needs; fast enough for shims).
/// `only`: a framework's name or alias -- files that are surely another framework's are not
/// parsed (what the shim and the prompt hook need for a `tf-2.13` in .cuda-version).
Result<std::vector<Framework>> load_frameworks(const std::filesystem::path& dir,
                                               std::string_view only = {});

/// Parses one manifest document of the given kind; `origin` names it in errors.
Result<CudaRelease> parse_cuda_release(const nlohmann::json& doc, std::string_view origin);
Result<CudnnRelease> parse_cudnn_release(const nlohmann::json& doc, std::string_view origin);
Result<Framework> parse_framework(const nlohmann::json& doc, std::string_view origin);
Result<std::vector<Gpu>> parse_gpus(const nlohmann::json& doc, std::string_view origin);
Result<std::vector<Profile>> parse_profiles(const nlohmann::json& doc, std::string_view origin);
Result<Rules> parse_rules(const nlohmann::json& doc, std::string_view origin);

/// Parses text as JSON, turning a syntax error into ErrorCode::integrity.
Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view origin);

/// Writers, in the key order docs/manifests.md shows (schema and kind first).
nlohmann::ordered_json to_json(const CudaRelease& r);
nlohmann::ordered_json to_json(const CudnnRelease& r);
nlohmann::ordered_json to_json(const Framework& f);
nlohmann::ordered_json gpus_to_json(const std::vector<Gpu>& gpus);
Result<std::vector<PinnedIndex>> parse_indexes(const nlohmann::json& doc, std::string_view origin);
nlohmann::ordered_json indexes_to_json(const std::vector<PinnedIndex>& indexes);
nlohmann::ordered_json profiles_to_json(const std::vector<Profile>& profiles);
nlohmann::ordered_json to_json(const Rules& r);

using cudaenv::is_sha256_hex; // sha256.hpp

/// True for a relative path whose segments are plain names: only letters, digits and "._+~-",
/// no empty, "." or ".." segment. Everything a URL or a server could decode into a separator or
/// a climb is refused before any URL is built: '%' (so "%2e%2e/", "..%2f", "%252e"), '\\', '?',
/// '#', ';', ':', spaces, control and non-ASCII bytes. Every path NVIDIA publishes fits.
bool is_safe_relative_path(std::string_view s);

/// `base` + "/" + `rel`, once `rel` is a safe relative path (else an integrity error naming it,
/// `what` saying where it came from): the one place a mirror URL is built from a path.
Result<std::string> join_url(std::string_view base, std::string_view rel, std::string_view what);

/// A manifest's absolute artifact URL: https, and no encoded or literal climb in its path.
bool is_safe_https_url(std::string_view url);

} // namespace cudaenv::manifest
