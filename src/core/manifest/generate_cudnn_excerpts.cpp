#include "generate_cudnn_excerpts.hpp"

#include "../fs.hpp"
#include "codec.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace cudaenv::manifest {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* k_excerpts_file = "cudnn-redist-excerpts-2026.json";

Error excerpt_error(const std::string& what) {
    return Error(ErrorCode::integrity,
                 std::string("generating manifests: ") + k_excerpts_file + ": " + what);
}

std::string excerpt_text(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// One archive of the excerpt: NVIDIA's relative_path is relative to cudnn/redist/.
Result<Artifact> archive_of(const json& a, const std::string& where) {
    Artifact art;
    std::string rel = excerpt_text(a, "relative_path");
    art.path = "cudnn/redist/" + rel;
    art.sha256 = excerpt_text(a, "sha256");
    std::string size = excerpt_text(a, "size");
    if (rel.empty() || !is_safe_relative_path(art.path) || !is_sha256_hex(art.sha256) ||
        size.empty() || size.size() > 19 ||
        !std::all_of(size.begin(), size.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return excerpt_error(where + ": needs relative_path, sha256 and size");
    }
    art.size = std::stoull(size);
    return art;
}

/// "linux-sbsa cuda13" -> ("13", "linux-sbsa"); anything else (a platform cudaenv does not
/// serve, a component) -> nothing.
std::optional<std::pair<std::string, std::string>> unknown_build(const std::string& s) {
    auto space = s.find(' ');
    if (space == std::string::npos || s.compare(space + 1, 4, "cuda") != 0) {
        return std::nullopt;
    }
    std::string platform = s.substr(0, space);
    std::string label = s.substr(space + 5);
    if (!is_platform(platform) || !Version::try_parse(label)) {
        return std::nullopt;
    }
    return std::pair{label, platform};
}

CudnnBuild& build_of(CudnnRelease& r, const std::string& label) {
    for (auto& b : r.builds) {
        if (b.cuda == label) {
            return b;
        }
    }
    CudnnBuild b;
    b.cuda = label;
    b.cuda_major = Version::try_parse(label)->major();
    r.builds.push_back(std::move(b));
    return r.builds.back();
}

} // namespace

Result<std::size_t> apply_cudnn_excerpts(const fs::path& ref, std::vector<CudnnRelease>& releases) {
    auto path = ref / k_excerpts_file;
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        return std::size_t{0};
    }
    auto text = CUDAENV_TRY(read_text_file(path));
    auto doc = CUDAENV_TRY(parse_json_text(text, path.string()));
    auto list = doc.find("releases");
    if (list == doc.end() || !list->is_array()) {
        return excerpt_error("no 'releases' array");
    }
    std::size_t applied = 0;
    for (const auto& e : *list) {
        std::string label = excerpt_text(e, "release_label");
        auto version = Version::try_parse(excerpt_text(e, "version"));
        auto known = e.find("archives_known");
        if (!version || version->size() != 4 || label.empty() ||
            !Version::try_parse(label)->is_prefix_of(*version) || known == e.end() ||
            !known->is_object()) {
            return excerpt_error("release '" + label + "' needs a full version and archives_known");
        }
        auto it = std::find_if(releases.begin(), releases.end(), [&](const CudnnRelease& r) {
            return r.version == *version;
        });
        bool full = it != releases.end() && !it->redistrib.empty();
        if (it == releases.end()) {
            CudnnRelease r;
            r.version = *version;
            r.major = version->major();
            r.layout = CudnnLayout::redist;
            releases.push_back(std::move(r));
            it = releases.end() - 1;
        }
        CudnnRelease& r = *it;
        if (r.release_date.empty()) {
            r.release_date = excerpt_text(e, "release_date");
        }
        for (const auto& [platform, variants] : known->items()) {
            if (!is_platform(platform) || !variants.is_object()) {
                continue;
            }
            for (const auto& [variant, a] : variants.items()) {
                std::string where = label + " " + platform + " " + variant;
                if (variant.rfind("cuda", 0) != 0 || !Version::try_parse(variant.substr(4))) {
                    return excerpt_error(where + ": not a cudaNN variant");
                }
                auto art = CUDAENV_TRY(archive_of(a, where));
                std::string cuda = variant.substr(4);
                auto b = std::find_if(r.builds.begin(), r.builds.end(), [&](const CudnnBuild& x) {
                    return x.cuda == cuda;
                });
                const Artifact* have = nullptr;
                if (b != r.builds.end()) {
                    auto p = b->platforms.find(platform);
                    have = p == b->platforms.end() ? nullptr : &p->second;
                }
                if (have && have->sha256 != art.sha256) {
                    return excerpt_error(where + ": sha256 " + art.sha256 + " disagrees with the " +
                                         have->sha256 + " already known for cuDNN " +
                                         r.version.str());
                }
                if (full) {
                    if (!have) {
                        return excerpt_error(where + ": not in the saved index of cuDNN " +
                                             r.version.str());
                    }
                    continue; // the saved index says it all
                }
                auto& build = build_of(r, cuda);
                Artifact& slot = build.platforms[platform];
                slot.sha256 = art.sha256;
                slot.path = art.path;
                slot.url.clear();
                slot.size = art.size;
            }
        }
        if (full) {
            continue; // a method check: the excerpt agreed with the saved index
        }
        PartlyKnown part;
        part.index = "cudnn/redist/redistrib_" + label + ".json";
        part.source = std::string("the opening of NVIDIA's index page ") + part.index +
                      " (data/reference/" + k_excerpts_file +
                      "); the rest of the index is not known";
        for (const auto& u : e.value("archives_unknown", json::array())) {
            if (!u.is_string()) {
                return excerpt_error(label + ": archives_unknown must hold strings");
            }
            std::string s = u.get<std::string>();
            if (auto b = unknown_build(s)) {
                const auto* have = [&]() -> const CudnnBuild* {
                    for (const auto& x : r.builds) {
                        if (x.cuda == b->first) {
                            return &x;
                        }
                    }
                    return nullptr;
                }();
                if (!have || !have->platforms.count(b->second)) { // known elsewhere (facts)
                    part.builds.push_back(*b);
                }
            } else if (is_cudnn_component(s)) {
                part.components.push_back(s);
            }
        }
        r.known_in_part = std::move(part);
        std::sort(r.builds.begin(), r.builds.end(), [](const auto& a, const auto& b) {
            return *Version::try_parse(a.cuda) > *Version::try_parse(b.cuda);
        });
        ++applied;
    }
    std::sort(releases.begin(), releases.end(), [](const auto& a, const auto& b) {
        return a.version < b.version;
    });
    return applied;
}

} // namespace cudaenv::manifest
