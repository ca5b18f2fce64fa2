#include "generate_cublas.hpp"

#include "../fs.hpp"
#include "codec.hpp"
#include "cublas_patches.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace cudaenv::manifest {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string text(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace

Result<std::vector<CublasPatch>> cublas_patches_from_json(const json& cublas,
                                                          std::string_view origin) {
    auto fail = [&](const std::string& what) {
        return Error(ErrorCode::integrity,
                     "generating manifests: " + std::string(origin) + ": " + what);
    };
    auto list = cublas.is_object() ? cublas.find("patches") : cublas.end();
    if (!cublas.is_object() || list == cublas.end() || !list->is_array()) {
        return fail("'cublas_patches.patches' must be an array");
    }
    const std::string base = std::string(k_nvidia_base) + "/";
    std::vector<CublasPatch> out;
    for (const auto& e : *list) {
        CublasPatch p;
        p.label = text(e, "release_label");
        std::string where = "cuBLAS patch '" + p.label + "'";
        auto version = Version::try_parse(text(e, "version"));
        if (!version) {
            return fail(where + ": no version");
        }
        p.version = *version;
        p.release_date = text(e, "release_date");
        auto variants = e.value("cuda_variant", json::array());
        if (variants.size() != 1 || !variants[0].is_string()) {
            return fail(where + ": one cuda_variant expected (the archives of one CUDA major)");
        }
        auto major = Version::try_parse(variants[0].get<std::string>());
        if (!major || major->size() != 1) {
            return fail(where + ": cuda_variant '" + variants[0].dump() + "' is not a CUDA major");
        }
        p.cuda_major = major->major();
        auto line = Version::try_parse(text(e, "applies_to_cuda_line"));
        if (!line) {
            return fail(where + ": no applies_to_cuda_line");
        }
        p.replaces = *line;
        // the reference marks each basis: INFERRED (from version numbering), PRIMARY (NVIDIA
        // says so), SECONDARY (a quote of NVIDIA's notes)
        p.replaces_source = text(e, "applies_basis");
        if (p.replaces_source.starts_with("INFERRED")) {
            p.replaces_inferred = true;
        } else if (p.replaces_source.starts_with("PRIMARY") ||
                   p.replaces_source.starts_with("SECONDARY")) {
            p.replaces_inferred = false;
        } else {
            return fail(where + ": applies_basis is neither INFERRED, PRIMARY nor SECONDARY");
        }
        std::string index_url = text(e, "index_url");
        if (!index_url.starts_with(base)) {
            return fail(where + ": index_url is not under " + base);
        }
        p.index = index_url.substr(base.size());
        std::string index_dir = p.index.substr(0, p.index.rfind('/') + 1); // cublas/redist/
        p.source = text(e, "source");
        // a fix is known only with its source; a text without one says it is not known
        if (auto fixes = e.find("fixes");
            fixes != e.end() && fixes->is_object() && (*fixes)["source"].is_string()) {
            p.fixes = text(*fixes, "bug");
            p.fixes_source = text(*fixes, "source");
        }
        std::string variant = "cuda" + std::to_string(p.cuda_major);
        const json archives = e.value("archives", json::object());
        for (const auto& [platform, byvariant] : archives.items()) {
            auto a = byvariant.find(variant);
            if (a == byvariant.end()) {
                return fail(where + ": no " + variant + " archive for " + platform);
            }
            Artifact art;
            art.path = index_dir + text(*a, "relative_path");
            art.sha256 = text(*a, "sha256");
            // NVIDIA writes the size as a decimal string; the codec refuses an archive without
            std::string size = text(*a, "size");
            if (!size.empty() && size.size() <= 19 &&
                std::all_of(
                    size.begin(), size.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
                art.size = std::stoull(size);
            }
            p.platforms.emplace(platform, std::move(art));
        }
        out.push_back(std::move(p));
    }
    // the manifest's own checks, so that nothing the codec would refuse is written
    auto again = cublas_patches_to_json(out);
    auto parsed = parse_cublas_patches(json::parse(again.dump()), origin);
    if (!parsed) {
        return fail(parsed.error().message);
    }
    return std::move(*parsed);
}

Result<std::optional<std::vector<CublasPatch>>>
cublas_patches_from_reference(const fs::path& reference_dir, GenerateReport& report) {
    fs::path file = reference_dir / "advisories.json";
    std::error_code ec;
    if (!fs::exists(file, ec)) {
        return std::optional<std::vector<CublasPatch>>{};
    }
    auto body = CUDAENV_TRY(read_text_file(file));
    auto doc = CUDAENV_TRY(parse_json_text(body, file.string()));
    if (!doc.is_object() || !doc.contains("cublas_patches")) {
        return Error(ErrorCode::integrity,
                     "generating manifests: " + file.string() + " has no 'cublas_patches'");
    }
    auto patches = CUDAENV_TRY(cublas_patches_from_json(doc["cublas_patches"], file.string()));
    report.cublas_patches = patches.size();
    return std::optional<std::vector<CublasPatch>>(std::move(patches));
}

} // namespace cudaenv::manifest
