#include "cublas_patches.hpp"

#include "codec_fields.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace cudaenv::manifest {

using nlohmann::json;
using ojson = nlohmann::ordered_json;
using detail::Reader;

Result<std::vector<CublasPatch>> parse_cublas_patches(const json& doc, std::string_view origin) {
    Reader rd(origin);
    CUDAENV_TRY(rd.header(doc, k_cublas_kind));
    const json* patches = CUDAENV_TRY(rd.array(doc, "patches"));
    std::vector<CublasPatch> out;
    std::set<std::string> labels;
    for (const auto& e : *patches) {
        if (!e.is_object()) {
            return rd.error("each of 'patches' must be an object");
        }
        CublasPatch p;
        p.label = CUDAENV_TRY(rd.string(e, "label"));
        std::string where = "cuBLAS patch " + p.label;
        auto label = Version::try_parse(p.label);
        if (!label || label->size() != 3) {
            return rd.error(where + ": 'label' must be major.minor.patch");
        }
        if (!labels.insert(p.label).second) {
            return rd.error(where + ": listed twice");
        }
        p.version = CUDAENV_TRY(rd.version(e, "version"));
        if (!label->is_prefix_of(p.version) || p.version.size() != 4) {
            return rd.error(where + ": 'version' " + p.version.str() +
                            " is not the label's full version");
        }
        p.release_date = rd.opt_string(e, "release_date");
        p.cuda_major = CUDAENV_TRY(rd.uint(e, "cuda_major"));
        if (p.cuda_major != p.version.major()) {
            return rd.error(where + ": 'cuda_major' " + std::to_string(p.cuda_major) +
                            " is not the version's major");
        }
        const json* rep = CUDAENV_TRY(rd.object(e, "replaces"));
        p.replaces = CUDAENV_TRY(rd.version(*rep, "cuda"));
        if (p.replaces.size() != 2 || p.replaces.major() != p.cuda_major) {
            return rd.error(where + ": 'replaces.cuda' must be a CUDA " +
                            std::to_string(p.cuda_major) + " line (major.minor)");
        }
        std::string basis = CUDAENV_TRY(rd.string(*rep, "basis"));
        if (basis != "inferred" && basis != "stated") {
            return rd.error(where + ": 'replaces.basis' must be \"inferred\" or \"stated\"");
        }
        p.replaces_inferred = basis == "inferred";
        p.replaces_source = CUDAENV_TRY(rd.string(*rep, "source"));
        p.index = CUDAENV_TRY(rd.string(e, "index"));
        if (!is_safe_relative_path(p.index)) {
            return rd.error(where + ": unsafe or malformed index path '" + p.index + "'");
        }
        p.source = CUDAENV_TRY(rd.string(e, "source"));
        auto fixes = e.find("fixes");
        if (fixes == e.end()) {
            return rd.error(where + ": no 'fixes' (\"not known\" when it is not)");
        }
        if (fixes->is_string() && fixes->get<std::string>() == "not known") {
            // nothing known: both stay empty
        } else if (fixes->is_object()) {
            p.fixes = CUDAENV_TRY(rd.string(*fixes, "text"));
            p.fixes_source = CUDAENV_TRY(rd.string(*fixes, "source"));
        } else {
            return rd.error(where + ": 'fixes' must be {text, source} or \"not known\"");
        }
        const json* archives = CUDAENV_TRY(rd.object(e, "archives"));
        if (archives->empty()) {
            return rd.error(where + ": 'archives' is empty");
        }
        for (const auto& [platform, a] : archives->items()) {
            if (!is_platform(platform)) {
                return rd.error(where + ": unknown platform '" + platform + "'");
            }
            auto art = CUDAENV_TRY(rd.artifact(a, where + " " + platform, true));
            if (art.path.empty()) {
                return rd.error(where + " " + platform + ": missing path");
            }
            p.platforms.emplace(platform, std::move(art));
        }
        out.push_back(std::move(p));
    }
    std::sort(
        out.begin(), out.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
    return out;
}

ojson cublas_patches_to_json(const std::vector<CublasPatch>& patches) {
    ojson j{{"schema", std::string(k_schema)}, {"kind", k_cublas_kind}};
    ojson list = ojson::array();
    for (const auto& p : patches) {
        ojson e{{"label", p.label},
                {"version", p.version.str()},
                {"release_date", p.release_date},
                {"cuda_major", p.cuda_major},
                {"replaces",
                 {{"cuda", p.replaces.str()},
                  {"basis", p.replaces_inferred ? "inferred" : "stated"},
                  {"source", p.replaces_source}}},
                {"index", p.index}};
        if (p.fixes.empty()) {
            e["fixes"] = "not known";
        } else {
            e["fixes"] = ojson{{"text", p.fixes}, {"source", p.fixes_source}};
        }
        ojson archives = ojson::object();
        for (const auto& [platform, a] : p.platforms) {
            ojson one{{"path", a.path}, {"sha256", a.sha256}};
            if (a.size) {
                one["size"] = *a.size;
            }
            archives[platform] = std::move(one);
        }
        e["archives"] = std::move(archives);
        e["source"] = p.source;
        list.push_back(std::move(e));
    }
    j["patches"] = std::move(list);
    return j;
}

std::vector<const CublasPatch*> applicable_cublas_patches(const Catalog& catalog,
                                                          const CudaRelease& release) {
    std::vector<const CublasPatch*> out;
    const Component* own = release.component("libcublas");
    if (!own || release.version.size() < 2) {
        return out;
    }
    Version line = release.version.truncated(2);
    for (const auto& p : catalog.cublas_patches) {
        if (p.cuda_major == release.version.major() && p.replaces == line &&
            own->version < p.version) {
            out.push_back(&p);
        }
    }
    std::reverse(out.begin(), out.end()); // newest first
    return out;
}

const CublasPatch* find_cublas_patch(const Catalog& catalog, std::string_view name) {
    for (const auto& p : catalog.cublas_patches) {
        if (p.label == name || p.version.str() == name) {
            return &p;
        }
    }
    return nullptr;
}

} // namespace cudaenv::manifest
