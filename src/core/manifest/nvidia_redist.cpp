#include "nvidia_redist.hpp"

#include "codec.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace cudaenv::manifest {

using nlohmann::json;

const RedistComponent* RedistIndex::find(std::string_view key) const {
    for (const auto& c : components) {
        if (c.key == key) {
            return &c;
        }
    }
    return nullptr;
}

namespace {

bool is_component_field(std::string_view key) {
    return key == "name" || key == "license" || key == "license_path" || key == "version" ||
           key == "cuda_variant";
}

std::string str_or_empty(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<RedistArtifact>
artifact(const json& obj, const std::string& where, std::string_view origin) {
    auto err = [&](const std::string& what) {
        return Error(ErrorCode::integrity,
                     "redistrib '" + std::string(origin) + "': " + where + ": " + what);
    };
    RedistArtifact a;
    a.relative_path = str_or_empty(obj, "relative_path");
    if (!is_safe_relative_path(a.relative_path)) {
        return err("missing or unsafe relative_path '" + a.relative_path + "'");
    }
    a.sha256 = str_or_empty(obj, "sha256");
    if (a.sha256.empty()) {
        return err("missing sha256");
    }
    if (!is_sha256_hex(a.sha256)) {
        return err("sha256 '" + a.sha256 + "' is not 64 lowercase hex digits");
    }
    if (auto it = obj.find("size"); it != obj.end()) {
        if (it->is_number_unsigned()) {
            a.size = it->get<std::uint64_t>();
        } else if (it->is_string()) {
            const auto& s = it->get_ref<const std::string&>();
            if (s.empty() || s.size() > 19 ||
                !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
                return err("size '" + s + "' is not a number");
            }
            a.size = std::stoull(s);
        } else {
            return err("size is not a number");
        }
    }
    return a;
}

} // namespace

Result<RedistIndex> parse_redistrib(std::string_view text, std::string_view origin) {
    json doc = json::parse(text.begin(), text.end(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        return Error(ErrorCode::integrity,
                     "redistrib '" + std::string(origin) + "': not a JSON object");
    }
    RedistIndex idx;
    idx.release_date = str_or_empty(doc, "release_date");
    idx.release_label = str_or_empty(doc, "release_label");
    idx.release_product = str_or_empty(doc, "release_product");
    for (const auto& [key, comp] : doc.items()) {
        if (!comp.is_object()) {
            continue; // release_date, release_label, ...
        }
        RedistComponent c;
        c.key = key;
        c.name = str_or_empty(comp, "name");
        c.license = str_or_empty(comp, "license");
        c.version = str_or_empty(comp, "version");
        if (auto it = comp.find("cuda_variant"); it != comp.end() && it->is_array()) {
            for (const auto& v : *it) {
                if (v.is_string()) {
                    c.cuda_variants.push_back(v.get<std::string>());
                }
            }
        }
        for (const auto& [platform, pobj] : comp.items()) {
            if (is_component_field(platform) || !pobj.is_object()) {
                continue;
            }
            auto& variants = c.platforms[platform];
            if (pobj.contains("relative_path") || pobj.contains("sha256") ||
                pobj.contains("size")) {
                variants.emplace("", CUDAENV_TRY(artifact(pobj, key + "." + platform, origin)));
                continue;
            }
            for (const auto& [variant, vobj] : pobj.items()) {
                if (!vobj.is_object()) {
                    continue;
                }
                variants.emplace(
                    variant,
                    CUDAENV_TRY(artifact(vobj, key + "." + platform + "." + variant, origin)));
            }
        }
        idx.components.push_back(std::move(c));
    }
    if (idx.components.empty()) {
        return Error(ErrorCode::integrity,
                     "redistrib '" + std::string(origin) + "': lists no components");
    }
    return idx;
}

} // namespace cudaenv::manifest
