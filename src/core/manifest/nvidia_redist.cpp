#include "nvidia_redist.hpp"

#include "codec.hpp"
#include "model.hpp"

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
        // keys and values come from the index: escaped, so nothing in them reaches a terminal raw
        return Error(ErrorCode::integrity,
                     printable("redistrib '" + std::string(origin) + "': " + where + ": " + what));
    };
    RedistArtifact a;
    a.relative_path = str_or_empty(obj, "relative_path");
    if (!is_safe_relative_path(a.relative_path)) {
        return err("missing or unsafe relative_path '" + a.relative_path +
                   "' (letters, digits and ._+~- between slashes; no '..' or percent-encoding)");
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

std::string redistrib_path(std::string_view product, std::string_view version) {
    return std::string(product) + "/redist/redistrib_" + std::string(version) + ".json";
}

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

namespace {

/// The artifact of a component for a platform: the plain one, or for variant components the
/// variant built for this release ("cuda13.3" or "cuda13").
const RedistArtifact* pick_variant(const std::map<std::string, RedistArtifact>& variants,
                                   const Version& release) {
    if (auto it = variants.find(""); it != variants.end()) {
        return &it->second;
    }
    for (const auto& key :
         {"cuda" + release.truncated(2).str(), "cuda" + release.truncated(1).str()}) {
        if (auto it = variants.find(key); it != variants.end()) {
            return &it->second;
        }
    }
    return nullptr;
}

} // namespace

Result<CudaRelease> cuda_release_from_redist(const RedistIndex& idx,
                                             const std::string& version,
                                             const Artifact& redistrib) {
    CudaRelease r;
    auto v = Version::parse(version);
    if (!v || v->size() != 3) {
        return Error(ErrorCode::usage, "CUDA version '" + version + "' must be X.Y.Z");
    }
    r.version = *v;
    r.release_date = idx.release_date;
    r.source = CudaSource::redist;
    r.redistrib = redistrib;
    for (const auto& c : idx.components) {
        auto cv = Version::try_parse(c.version);
        if (!cv) {
            // Nothing NVIDIA publishes may vanish silently: a component with an archive for a
            // platform cudaenv serves must be representable, or the generation stops here.
            for (const auto& [platform, variants] : c.platforms) {
                if (std::find(std::begin(k_platforms), std::end(k_platforms), platform) !=
                    std::end(k_platforms)) {
                    return Error(ErrorCode::integrity,
                                 printable("redistrib " + version + ": component " + c.key +
                                           " has an archive for " + platform +
                                           " but its version '" + c.version + "' cannot be read"));
                }
            }
            continue; // no archive for a platform cudaenv serves (Windows only, or none)
        }
        Component comp;
        comp.name = c.key;
        comp.description = c.name;
        comp.version = *cv;
        for (const auto& [platform, variants] : c.platforms) {
            if (std::find(std::begin(k_platforms), std::end(k_platforms), platform) ==
                std::end(k_platforms)) {
                continue;
            }
            const RedistArtifact* a = pick_variant(variants, r.version);
            if (!a) {
                continue;
            }
            if (!a->size) {
                return Error(ErrorCode::integrity,
                             printable("redistrib " + version + ": " + c.key + "." + platform +
                                       " has no size"));
            }
            comp.platforms.emplace(
                platform, Artifact{"cuda/redist/" + a->relative_path, {}, a->sha256, a->size});
        }
        if (!comp.platforms.empty()) {
            r.components.push_back(std::move(comp));
        }
    }
    std::sort(r.components.begin(), r.components.end(), [](const auto& a, const auto& b) {
        return a.name < b.name;
    });
    if (const auto* nvcc = r.component("cuda_nvcc")) {
        r.nvcc_version = nvcc->version;
    }
    if (!r.component("cuda_cudart")) {
        return Error(ErrorCode::integrity, "redistrib " + version + " has no cuda_cudart");
    }
    return r;
}

Result<CudnnRelease> cudnn_release_from_redist(const RedistIndex& idx, const Artifact& redistrib) {
    auto fail = [&](const std::string& why) {
        return Error(ErrorCode::integrity,
                     printable("cuDNN index '" + redistrib.path + "': " + why));
    };
    const auto* c = idx.find("cudnn");
    if (!c) {
        return fail("no 'cudnn' component");
    }
    auto v = Version::try_parse(c->version);
    if (!v) {
        return fail("version '" + c->version + "' is not a version");
    }
    CudnnRelease r;
    r.version = *v;
    r.major = v->major();
    r.release_date = idx.release_date;
    r.layout = CudnnLayout::redist;
    r.redistrib.push_back(redistrib);
    std::map<std::string, CudnnBuild> builds; // by CUDA label
    for (const auto& [platform, variants] : c->platforms) {
        if (std::find(std::begin(k_platforms), std::end(k_platforms), platform) ==
            std::end(k_platforms)) {
            continue;
        }
        for (const auto& [variant, a] : variants) {
            std::string label;
            if (variant.rfind("cuda", 0) == 0) {
                label = variant.substr(4);
            } else {
                auto pos = a.relative_path.rfind("_cuda");
                if (pos == std::string::npos) {
                    return fail("cannot tell the CUDA major of " + a.relative_path);
                }
                label = a.relative_path.substr(pos + 5, a.relative_path.find('-', pos) - pos - 5);
            }
            auto lv = Version::try_parse(label);
            if (!lv) {
                return fail("CUDA variant '" + label + "' is not a version");
            }
            auto& b = builds[label];
            b.cuda = label;
            b.cuda_major = lv->major();
            b.platforms[platform] =
                Artifact{"cudnn/redist/" + a.relative_path, {}, a.sha256, a.size};
        }
    }
    if (builds.empty()) {
        return fail("no build for " + platform_list());
    }
    // Components beside `cudnn` (cudnn_jit from 9.20) go with the build of the same CUDA
    // variant; cudnn_samples is left out.
    for (const auto& extra : idx.components) {
        // samples are sources to build, not libraries to install
        if (extra.key == "cudnn" || extra.key == "cudnn_samples" ||
            !is_cudnn_component(extra.key)) {
            continue;
        }
        if (Version::try_parse(extra.version) != v) {
            return fail(extra.key + " has version '" + extra.version + "', cudnn " + c->version);
        }
        for (const auto& [platform, variants] : extra.platforms) {
            if (std::find(std::begin(k_platforms), std::end(k_platforms), platform) ==
                std::end(k_platforms)) {
                continue;
            }
            for (const auto& [variant, a] : variants) {
                auto b = builds.find(variant.rfind("cuda", 0) == 0 ? variant.substr(4) : "");
                if (b == builds.end()) {
                    return fail(extra.key + " " + platform + " '" + variant +
                                "' has no cudnn build of the same CUDA variant");
                }
                b->second.extras[extra.key][platform] =
                    Artifact{"cudnn/redist/" + a.relative_path, {}, a.sha256, a.size};
            }
        }
    }
    for (auto& [label, b] : builds) {
        r.builds.push_back(std::move(b));
    }
    std::sort(r.builds.begin(), r.builds.end(), [](const auto& a, const auto& b) {
        return *Version::try_parse(a.cuda) > *Version::try_parse(b.cuda);
    });
    return r;
}

} // namespace cudaenv::manifest
