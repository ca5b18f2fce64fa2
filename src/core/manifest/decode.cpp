// Each manifest kind from its JSON, every field checked (codec.hpp).
#include "../fs.hpp"
#include "codec.hpp"
#include "codec_fields.hpp"
#include "nvidia_redist.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>

namespace cudaenv::manifest {

using nlohmann::json;
using ojson = nlohmann::ordered_json;
using namespace detail;

namespace detail {

Result<std::map<std::string, Artifact, std::less<>>>
platform_map(const Reader& rd, const json& obj, const std::string& where, bool need_size) {
    std::map<std::string, Artifact, std::less<>> out;
    if (!obj.is_object()) {
        return rd.error(where + " must be an object");
    }
    for (const auto& [platform, a] : obj.items()) {
        auto art = CUDAENV_TRY(rd.artifact(a, where + "." + platform, need_size));
        out.emplace(platform, std::move(art));
    }
    return out;
}

Result<SmRange> parse_sm(const Reader& rd, const json& obj) {
    SmRange sm;
    sm.min = CUDAENV_TRY(rd.uint(obj, "min"));
    sm.max = CUDAENV_TRY(rd.uint(obj, "max"));
    auto it = obj.find("archs");
    if (it != obj.end()) {
        if (!it->is_array()) {
            return rd.error("'sm.archs' must be an array");
        }
        for (const auto& a : *it) {
            if (!a.is_number_unsigned()) {
                return rd.error("'sm.archs' must hold integers");
            }
            sm.archs.push_back(a.get<unsigned>());
        }
    }
    if (sm.min > sm.max) {
        return rd.error("'sm.min' is above 'sm.max'");
    }
    return sm;
}

CompatRule parse_rule(const std::string& s, bool& ok) {
    ok = true;
    if (s == "exact") {
        return CompatRule::exact;
    }
    if (s == "same-major-min-minor") {
        return CompatRule::same_major_min_minor;
    }
    ok = false;
    return CompatRule::exact;
}

const char* rule_name(CompatRule r) {
    return r == CompatRule::exact ? "exact" : "same-major-min-minor";
}

} // namespace detail

Result<json> parse_json_text(std::string_view text, std::string_view origin) {
    json doc = json::parse(text.begin(), text.end(), nullptr, false);
    if (doc.is_discarded()) {
        return Error(ErrorCode::integrity, "manifest '" + std::string(origin) + "': invalid JSON");
    }
    return doc;
}

Result<CudaRelease> parse_cuda_release(const json& doc, std::string_view origin) {
    Reader rd(origin);
    CUDAENV_TRY(rd.header(doc, "cuda"));
    CudaRelease r;
    r.version = CUDAENV_TRY(rd.version(doc, "version"));
    if (r.version.size() != 3) {
        return rd.error("CUDA version '" + r.version.str() + "' must be X.Y.Z");
    }
    r.release_date = rd.opt_string(doc, "release_date");
    auto source = CUDAENV_TRY(rd.string(doc, "source"));
    if (source == "redist") {
        r.source = CudaSource::redist;
        const json* red = CUDAENV_TRY(rd.object(doc, "redistrib"));
        r.redistrib = CUDAENV_TRY(rd.artifact(*red, "redistrib", true));
        if (!r.redistrib->downloadable()) {
            return rd.error("redistrib: missing path");
        }
    } else if (source == "runfile") {
        r.source = CudaSource::runfile;
        const json* run = CUDAENV_TRY(rd.object(doc, "runfiles"));
        r.runfiles = CUDAENV_TRY(platform_map(rd, *run, "runfiles", false));
    } else if (source == "index") {
        r.source = CudaSource::index;
        const json* red = CUDAENV_TRY(rd.object(doc, "redistrib"));
        r.redistrib = CUDAENV_TRY(rd.artifact(*red, "redistrib", false));
        if (r.redistrib->path != redistrib_path("cuda", r.version.str())) {
            return rd.error("redistrib: an index-known release's index must be at '" +
                            redistrib_path("cuda", r.version.str()) + "'");
        }
    } else {
        return rd.error("unknown source '" + source +
                        "' (expected 'redist', 'runfile' or 'index')");
    }
    r.nvcc_version = CUDAENV_TRY(rd.opt_version(doc, "nvcc_version"));
    if (auto it = doc.find("driver"); it != doc.end() && it->is_object()) {
        r.driver_min = CUDAENV_TRY(rd.opt_version(*it, "min"));
        r.driver_min_source = rd.opt_string(*it, "min_source");
        r.driver_min_basis = rd.opt_string(*it, "min_basis");
        r.driver_compat_min = CUDAENV_TRY(rd.opt_version(*it, "compat_min"));
    }
    if (auto it = doc.find("sm"); it != doc.end() && it->is_object()) {
        r.sm = CUDAENV_TRY(parse_sm(rd, *it));
    }
    if (auto it = doc.find("host_compilers"); it != doc.end() && it->is_object()) {
        r.gcc_max = CUDAENV_TRY(rd.opt_version(*it, "gcc_max"));
        r.clang_max = CUDAENV_TRY(rd.opt_version(*it, "clang_max"));
        r.host_compilers_source = rd.opt_string(*it, "source");
    }
    if (auto it = doc.find("components"); it != doc.end()) {
        if (!it->is_object()) {
            return rd.error("'components' must be an object");
        }
        for (const auto& [name, c] : it->items()) {
            if (!c.is_object()) {
                return rd.error("component '" + name + "' must be an object");
            }
            Component comp;
            comp.name = name;
            comp.description = rd.opt_string(c, "name");
            comp.version = CUDAENV_TRY(rd.version(c, "version"));
            const json* plats = CUDAENV_TRY(rd.object(c, "platforms"));
            comp.platforms = CUDAENV_TRY(platform_map(rd, *plats, name, true));
            for (const auto& [p, a] : comp.platforms) {
                if (!a.downloadable()) {
                    return rd.error(name + "." + p + ": missing path");
                }
            }
            r.components.push_back(std::move(comp));
        }
    } else if (r.source == CudaSource::redist) {
        return rd.error("missing 'components'");
    }
    std::sort(r.components.begin(), r.components.end(), [](const auto& a, const auto& b) {
        return a.name < b.name;
    });
    return r;
}

Result<CudnnRelease> parse_cudnn_release(const json& doc, std::string_view origin) {
    Reader rd(origin);
    CUDAENV_TRY(rd.header(doc, "cudnn"));
    CudnnRelease r;
    r.version = CUDAENV_TRY(rd.version(doc, "version"));
    r.major = CUDAENV_TRY(rd.uint(doc, "major"));
    if (r.major != r.version.major()) {
        return rd.error("'major' disagrees with version '" + r.version.str() + "'");
    }
    r.release_date = rd.opt_string(doc, "release_date");
    auto layout = CUDAENV_TRY(rd.string(doc, "layout"));
    if (layout == "redist") {
        r.layout = CudnnLayout::redist;
    } else if (layout == "tarball") {
        r.layout = CudnnLayout::tarball;
    } else {
        return rd.error("unknown layout '" + layout + "' (expected 'redist' or 'tarball')");
    }
    if (auto it = doc.find("redistrib"); it != doc.end()) {
        if (!it->is_array()) {
            return rd.error("'redistrib' must be an array");
        }
        for (const auto& a : *it) {
            auto art = CUDAENV_TRY(rd.artifact(a, "redistrib", true));
            if (!art.downloadable()) {
                return rd.error("redistrib: missing path");
            }
            r.redistrib.push_back(std::move(art));
        }
    }
    const json* builds = CUDAENV_TRY(rd.non_empty_array(doc, "builds"));
    for (const auto& b : *builds) {
        if (!b.is_object()) {
            return rd.error("each build must be an object");
        }
        CudnnBuild build;
        build.cuda = CUDAENV_TRY(rd.string(b, "cuda"));
        auto cv = Version::try_parse(build.cuda);
        if (!cv) {
            return rd.error("build cuda '" + build.cuda + "' is not a version");
        }
        build.cuda_major = cv->major();
        for (auto [key, field] :
             {std::pair{"cuda_min", &build.cuda_min}, std::pair{"cuda_max", &build.cuda_max}}) {
            if (auto text = rd.opt_string(b, key); !text.empty()) {
                auto v = Version::try_parse(text);
                if (!v || v->major() != build.cuda_major) {
                    return rd.error(std::string(key) + " '" + text + "' is not a CUDA " +
                                    std::to_string(build.cuda_major) + " version");
                }
                *field = *v;
            }
        }
        const json* plats = CUDAENV_TRY(rd.object(b, "platforms"));
        // Sizes are known where NVIDIA's index was saved; for releases known only by their
        // hash (Spack) the size is absent and the download is capped by the hash check alone.
        build.platforms = CUDAENV_TRY(platform_map(rd, *plats, "build cuda" + build.cuda, false));
        if (auto ex = b.find("extras"); ex != b.end()) {
            if (!ex->is_object()) {
                return rd.error("build cuda" + build.cuda + ": 'extras' must be an object");
            }
            for (const auto& [name, eplats] : ex->items()) {
                if (!is_cudnn_component(name) || name == "cudnn" || !eplats.is_object()) {
                    return rd.error("build cuda" + build.cuda + ": extra '" + name +
                                    "' is not a cuDNN component (cudnn_*) with platforms");
                }
                build.extras[name] = CUDAENV_TRY(
                    platform_map(rd, eplats, "build cuda" + build.cuda + " " + name, true));
            }
        }
        r.builds.push_back(std::move(build));
    }
    if (auto kp = doc.find("known_in_part"); kp != doc.end()) {
        if (!kp->is_object()) {
            return rd.error("'known_in_part' must be an object");
        }
        PartlyKnown part;
        part.index = CUDAENV_TRY(rd.string(*kp, "index"));
        if (!is_safe_relative_path(part.index)) {
            return rd.error("known_in_part: unsafe or malformed index path '" + part.index + "'");
        }
        part.source = CUDAENV_TRY(rd.string(*kp, "source"));
        if (auto ub = kp->find("unknown_builds"); ub != kp->end()) {
            if (!ub->is_array()) {
                return rd.error("known_in_part: 'unknown_builds' must be an array");
            }
            for (const auto& b : *ub) {
                if (!b.is_object()) {
                    return rd.error("known_in_part: each unknown build must be an object");
                }
                auto label = CUDAENV_TRY(rd.string(b, "cuda"));
                auto platform = CUDAENV_TRY(rd.string(b, "platform"));
                if (!Version::try_parse(label) || !is_platform(platform)) {
                    return rd.error("known_in_part: unknown build '" + label + " " + platform +
                                    "' is not a CUDA label and a platform");
                }
                part.builds.emplace_back(std::move(label), std::move(platform));
            }
        }
        part.components = CUDAENV_TRY(rd.strings(*kp, "unknown_components"));
        r.known_in_part = std::move(part);
    }
    return r;
}

namespace {

Result<std::map<std::string, Sourced>> parse_sources(const Reader& rd, const json& obj) {
    std::map<std::string, Sourced> out;
    auto it = obj.find("sources");
    if (it == obj.end()) {
        return out;
    }
    if (!it->is_object()) {
        return rd.error("'sources' must be an object");
    }
    for (const auto& [key, val] : it->items()) {
        if (!val.is_object() || !val.contains("text") || !val["text"].is_string() ||
            !val.contains("primary") || !val["primary"].is_boolean()) {
            return rd.error("source '" + key + "' must have a 'text' and a boolean 'primary'");
        }
        out[key] = Sourced{val["text"].get<std::string>(), val["primary"].get<bool>()};
    }
    return out;
}

Result<FrameworkVariant> parse_variant(const Reader& rd, const json& v) {
    if (!v.is_object()) {
        return rd.error("each variant must be an object");
    }
    FrameworkVariant fv;
    fv.tag = CUDAENV_TRY(rd.string(v, "tag"));
    if (!std::all_of(fv.tag.begin(), fv.tag.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        })) {
        return rd.error("variant tag '" + fv.tag + "' must be lower-case letters and digits");
    }
    fv.cuda = CUDAENV_TRY(rd.version(v, "cuda"));
    if (auto it = v.find("cuda_floor"); it != v.end()) {
        if (!it->is_boolean()) {
            return rd.error("variant " + fv.tag + ": 'cuda_floor' must be a boolean");
        }
        fv.cuda_floor = it->get<bool>();
    }
    fv.cuda_install = CUDAENV_TRY(rd.opt_version(v, "cuda_install"));
    fv.cudnn = CUDAENV_TRY(rd.opt_version(v, "cudnn"));
    fv.cudnn_below = CUDAENV_TRY(rd.opt_version(v, "cudnn_below"));
    if (auto it = v.find("pins"); it != v.end()) {
        if (!it->is_object()) {
            return rd.error("variant " + fv.tag + ": 'pins' must be an object");
        }
        for (const auto& [name, req] : it->items()) {
            if (!req.is_string()) {
                return rd.error("variant " + fv.tag + ": pin '" + name + "' must be a string");
            }
            fv.pins[name] = req.get<std::string>();
        }
    }
    fv.sources = CUDAENV_TRY(parse_sources(rd, v));
    return fv;
}

} // namespace

Result<Framework> parse_framework(const json& doc, std::string_view origin) {
    Reader rd(origin);
    CUDAENV_TRY(rd.header(doc, "framework"));
    Framework f;
    f.name = CUDAENV_TRY(rd.string(doc, "name"));
    f.aliases = CUDAENV_TRY(rd.strings(doc, "aliases"));
    f.packages = CUDAENV_TRY(rd.strings(doc, "packages"));
    if (auto it = doc.find("compat"); it != doc.end() && it->is_object()) {
        bool ok = true;
        if (auto c = rd.opt_string(*it, "cuda"); !c.empty()) {
            f.cuda_rule = parse_rule(c, ok);
        }
        if (ok) {
            if (auto c = rd.opt_string(*it, "cudnn"); !c.empty()) {
                f.cudnn_rule = parse_rule(c, ok);
            }
        }
        if (!ok) {
            return rd.error("unknown compat rule (expected 'exact' or 'same-major-min-minor')");
        }
    }
    const json* rel = CUDAENV_TRY(rd.non_empty_array(doc, "releases"));
    for (const auto& row : *rel) {
        if (!row.is_object()) {
            return rd.error("each release must be an object");
        }
        FrameworkRelease fr;
        fr.series = CUDAENV_TRY(rd.version(row, "series"));
        fr.tested = CUDAENV_TRY(rd.version(row, "tested"));
        fr.cuda = CUDAENV_TRY(rd.version(row, "cuda"));
        if (!row.contains("variants") || row.contains("cudnn")) {
            fr.cudnn =
                CUDAENV_TRY(rd.version(row, "cudnn")); // with variants: the default's, if known
        }
        if (!fr.series.is_prefix_of(fr.tested)) {
            return rd.error("release " + fr.tested.str() + " is not in series " + fr.series.str());
        }
        fr.package = rd.opt_string(row, "package");
        fr.python = rd.opt_string(row, "python");
        fr.compiler = rd.opt_string(row, "compiler");
        fr.build_tools = rd.opt_string(row, "build_tools");
        if (auto vs = row.find("variants"); vs != row.end()) {
            if (!vs->is_array() || vs->empty()) {
                return rd.error("release " + fr.series.str() +
                                ": 'variants' must be a non-empty array");
            }
            for (const auto& v : *vs) {
                auto fv = CUDAENV_TRY(parse_variant(rd, v));
                if (fr.variant(fv.tag)) {
                    return rd.error("release " + fr.series.str() + " has two variants " + fv.tag);
                }
                fr.variants.push_back(std::move(fv));
            }
            fr.default_variant = CUDAENV_TRY(rd.string(row, "default_variant"));
            const auto* d = fr.default_one();
            if (!d) {
                return rd.error("release " + fr.series.str() + ": default variant '" +
                                fr.default_variant + "' is not one of its variants");
            }
            // the row's pair is the default variant's: what older readers see
            if (!d->cuda.is_prefix_of(fr.cuda) && !fr.cuda.is_prefix_of(d->cuda) &&
                !(d->cuda_install && d->cuda_install->is_prefix_of(fr.cuda))) {
                return rd.error("release " + fr.series.str() + ": its cuda " + fr.cuda.str() +
                                " is not its default variant's");
            }
        }
        fr.sources = CUDAENV_TRY(parse_sources(rd, row));
        f.releases.push_back(std::move(fr));
    }
    if (auto rules = doc.find("rules"); rules != doc.end()) {
        if (!rules->is_array()) {
            return rd.error("'rules' must be an array");
        }
        for (const auto& r : *rules) {
            if (!r.is_object()) {
                return rd.error("each rule must be an object");
            }
            f.rules.push_back({CUDAENV_TRY(rd.string(r, "id")),
                               CUDAENV_TRY(rd.string(r, "text")),
                               CUDAENV_TRY(rd.string(r, "source"))});
        }
    }
    std::sort(f.releases.begin(), f.releases.end(), [](const auto& a, const auto& b) {
        return a.series > b.series;
    });
    // Two rows for one series would make `tf-X.Y` ambiguous (and their order arbitrary).
    for (std::size_t i = 1; i < f.releases.size(); ++i) {
        if (f.releases[i].series == f.releases[i - 1].series) {
            return rd.error("series " + f.releases[i].series.str() + " has two release rows");
        }
    }
    return f;
}

Result<std::vector<PinnedIndex>> parse_indexes(const json& doc, std::string_view origin) {
    Reader rd(origin);
    CUDAENV_TRY(rd.header(doc, "indexes"));
    std::vector<PinnedIndex> out;
    for (const char* product : {"cuda", "cudnn"}) {
        auto list = doc.find(product);
        if (list == doc.end()) {
            continue;
        }
        if (!list->is_array()) {
            return rd.error(std::string("'") + product + "' must be an array");
        }
        for (const auto& e : *list) {
            if (!e.is_object()) {
                return rd.error("each index must be an object");
            }
            PinnedIndex p;
            p.product = product;
            p.version = CUDAENV_TRY(rd.version(e, "version"));
            p.index = CUDAENV_TRY(rd.artifact(e, std::string(product) + " index", false));
            std::string want = redistrib_path(product, p.version.str());
            if (p.index.path != want) {
                return rd.error("the index of " + std::string(product) + " " + p.version.str() +
                                " must be at '" + want + "', not '" + p.index.path + "'");
            }
            if (auto rel = e.find("release"); rel != e.end() && std::string(product) == "cuda") {
                auto r = CUDAENV_TRY(parse_cuda_release(*rel, std::string(origin) + " release"));
                if (r.source != CudaSource::index || r.version != p.version || !r.redistrib ||
                    r.redistrib->sha256 != p.index.sha256) {
                    return rd.error("the release of cuda " + p.version.str() +
                                    " must be its index-known facts (source 'index', same "
                                    "version and index)");
                }
                p.release = std::move(r);
            }
            out.push_back(std::move(p));
        }
    }
    return out;
}

Result<std::vector<Gpu>> parse_gpus(const json& doc, std::string_view origin) {
    Reader rd(origin);
    CUDAENV_TRY(rd.header(doc, "gpus"));
    const json* list = CUDAENV_TRY(rd.array(doc, "gpus"));
    std::vector<Gpu> out;
    for (const auto& g : *list) {
        if (!g.is_object()) {
            return rd.error("each gpu must be an object");
        }
        Gpu gpu;
        gpu.name = CUDAENV_TRY(rd.string(g, "name"));
        auto cc = CUDAENV_TRY(rd.version(g, "compute_capability"));
        if (cc.size() != 2) {
            return rd.error("compute capability of '" + gpu.name + "' must be X.Y");
        }
        gpu.compute_capability = cc.major() * 10 + cc.minor();
        gpu.architecture = rd.opt_string(g, "architecture");
        if (g.contains("min_driver")) {
            gpu.min_driver = CUDAENV_TRY(rd.version(g, "min_driver"));
            gpu.min_driver_basis = rd.opt_string(g, "min_driver_basis");
        }
        out.push_back(std::move(gpu));
    }
    return out;
}

Result<std::vector<Profile>> parse_profiles(const json& doc, std::string_view origin) {
    Reader rd(origin);
    CUDAENV_TRY(rd.header(doc, "profiles"));
    const json* list = CUDAENV_TRY(rd.array(doc, "profiles"));
    std::vector<Profile> out;
    std::set<std::string> names;
    for (const auto& p : *list) {
        if (!p.is_object()) {
            return rd.error("each profile must be an object");
        }
        Profile prof;
        prof.name = CUDAENV_TRY(rd.string(p, "name"));
        prof.description = rd.opt_string(p, "description");
        prof.includes = CUDAENV_TRY(rd.strings(p, "includes"));
        prof.components = CUDAENV_TRY(rd.strings(p, "components"));
        prof.exclude = CUDAENV_TRY(rd.strings(p, "exclude"));
        if (auto it = p.find("all"); it != p.end() && it->is_boolean()) {
            prof.all = it->get<bool>();
        }
        for (const auto& inc : prof.includes) {
            if (!names.count(inc)) {
                return rd.error("profile '" + prof.name + "' includes '" + inc +
                                "', which is not defined before it");
            }
        }
        if (!names.insert(prof.name).second) {
            return rd.error("profile '" + prof.name + "' defined twice");
        }
        out.push_back(std::move(prof));
    }
    return out;
}

Result<Rules> parse_rules(const json& doc, std::string_view origin) {
    Reader rd(origin);
    CUDAENV_TRY(rd.header(doc, "rules"));
    Rules r;
    const json* cudnn = CUDAENV_TRY(rd.object(doc, "cudnn"));
    for (const auto& [major, spec] : cudnn->items()) {
        auto m = Version::try_parse(major);
        if (!m || m->size() != 1 || !spec.is_object()) {
            return rd.error("cudnn rules must be keyed by major version");
        }
        auto libs = spec.find("libraries");
        if (libs == spec.end() || !libs->is_array() || libs->empty()) {
            return rd.error("cudnn " + major + ": 'libraries' must be a non-empty array");
        }
        for (const auto& l : *libs) {
            if (!l.is_string()) {
                return rd.error("cudnn " + major + ": 'libraries' must hold strings");
            }
            r.cudnn_sublibraries[m->major()].push_back(l.get<std::string>());
        }
        r.cudnn_version_header[m->major()] = CUDAENV_TRY(rd.string(spec, "version_header"));
    }
    return r;
}
} // namespace cudaenv::manifest
