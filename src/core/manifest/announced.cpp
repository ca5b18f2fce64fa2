#include "announced.hpp"

#include "codec_fields.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace cudaenv::manifest {

using nlohmann::json;
using ojson = nlohmann::ordered_json;
using detail::Reader;

namespace {

/// [{"<a>": "...", "<b>": "..."}] -> pairs; every member a non-empty string.
Result<std::vector<std::pair<std::string, std::string>>> pairs(const Reader& rd,
                                                               const json& e,
                                                               std::string_view key,
                                                               const char* a,
                                                               const char* b,
                                                               const std::string& where) {
    std::vector<std::pair<std::string, std::string>> out;
    auto it = e.find(key);
    if (it == e.end()) {
        return out;
    }
    if (!it->is_array()) {
        return rd.error(where + ": '" + std::string(key) + "' must be an array");
    }
    for (const auto& x : *it) {
        if (!x.is_object()) {
            return rd.error(where + ": each of '" + std::string(key) + "' must be an object");
        }
        out.emplace_back(CUDAENV_TRY(rd.string(x, a)), CUDAENV_TRY(rd.string(x, b)));
    }
    return out;
}

ojson pairs_json(const std::vector<std::pair<std::string, std::string>>& v,
                 const char* a,
                 const char* b) {
    ojson out = ojson::array();
    for (const auto& [x, y] : v) {
        out.push_back(ojson{{a, x}, {b, y}});
    }
    return out;
}

bool matches(const Version& asked, const Version& v) {
    return asked.is_prefix_of(v) || v.is_prefix_of(asked);
}

} // namespace

Result<std::vector<AnnouncedRelease>> parse_announced(const json& doc, std::string_view origin) {
    Reader rd(origin);
    CUDAENV_TRY(rd.header(doc, k_announced_kind));
    const json* list = CUDAENV_TRY(rd.array(doc, "cuda"));
    std::vector<AnnouncedRelease> out;
    std::set<std::string> seen;
    for (const auto& e : *list) {
        if (!e.is_object()) {
            return rd.error("each of 'cuda' must be an object");
        }
        AnnouncedRelease r;
        r.version = CUDAENV_TRY(rd.version(e, "version"));
        std::string where = "announced CUDA " + r.version.str();
        if (r.version.size() < 2 || r.version.size() > 3) {
            return rd.error(where + ": 'version' must be major.minor or major.minor.patch");
        }
        if (!seen.insert(r.version.str()).second) {
            return rd.error(where + ": listed twice");
        }
        std::string status = CUDAENV_TRY(rd.string(e, "status"));
        if (status != "released" && status != "preview") {
            return rd.error(where + ": 'status' must be \"released\" or \"preview\"");
        }
        r.preview = status == "preview";
        r.superseded_by = CUDAENV_TRY(rd.opt_version(e, "superseded_by"));
        if (r.preview && !r.superseded_by) {
            return rd.error(where + ": a preview names the release that supersedes it");
        }
        r.status_source = CUDAENV_TRY(rd.string(e, "status_source"));
        r.index = CUDAENV_TRY(rd.string(e, "index"));
        r.release_date = rd.opt_string(e, "release_date");
        r.release_date_text = rd.opt_string(e, "release_date_text");
        if (auto d = e.find("driver"); d != e.end()) {
            if (!d->is_object()) {
                return rd.error(where + ": 'driver' must be an object");
            }
            r.driver_branch = CUDAENV_TRY(rd.uint(*d, "branch"));
            std::string basis = CUDAENV_TRY(rd.string(*d, "basis"));
            if (basis != "inferred" && basis != "stated") {
                return rd.error(where + ": 'driver.basis' must be \"inferred\" or \"stated\"");
            }
            r.driver_branch_inferred = basis == "inferred";
            r.driver_source = CUDAENV_TRY(rd.string(*d, "source"));
        }
        r.driver_compat_min = CUDAENV_TRY(rd.opt_version(e, "compat_min"));
        r.platforms = rd.opt_string(e, "platforms");
        r.components = CUDAENV_TRY(pairs(rd, e, "components", "name", "version", where));
        r.components_source = rd.opt_string(e, "components_source");
        if (!r.components.empty() && r.components_source.empty()) {
            return rd.error(where + ": 'components' without 'components_source'");
        }
        r.not_known = CUDAENV_TRY(pairs(rd, e, "not_known", "what", "text", where));
        out.push_back(std::move(r));
    }
    std::sort(
        out.begin(), out.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
    return out;
}

ojson announced_to_json(const std::vector<AnnouncedRelease>& releases) {
    ojson j{{"schema", std::string(k_schema)}, {"kind", k_announced_kind}};
    ojson list = ojson::array();
    for (const auto& r : releases) {
        ojson e{{"version", r.version.str()}, {"status", r.preview ? "preview" : "released"}};
        if (r.superseded_by) {
            e["superseded_by"] = r.superseded_by->str();
        }
        e["status_source"] = r.status_source;
        e["index"] = r.index;
        if (!r.release_date.empty()) {
            e["release_date"] = r.release_date;
        }
        if (!r.release_date_text.empty()) {
            e["release_date_text"] = r.release_date_text;
        }
        if (r.driver_branch) {
            e["driver"] = ojson{{"branch", *r.driver_branch},
                                {"basis", r.driver_branch_inferred ? "inferred" : "stated"},
                                {"source", r.driver_source}};
        }
        if (r.driver_compat_min) {
            e["compat_min"] = r.driver_compat_min->str();
        }
        if (!r.platforms.empty()) {
            e["platforms"] = r.platforms;
        }
        if (!r.components.empty()) {
            e["components"] = pairs_json(r.components, "name", "version");
            e["components_source"] = r.components_source;
        }
        if (!r.not_known.empty()) {
            e["not_known"] = pairs_json(r.not_known, "what", "text");
        }
        list.push_back(std::move(e));
    }
    j["cuda"] = std::move(list);
    return j;
}

const AnnouncedRelease* announced_for(const Catalog& c, const Version& asked) {
    if (c.newest_cuda(asked) || c.pinned_index("cuda", asked)) {
        return nullptr; // the catalog answers: a release it has always wins
    }
    for (auto it = c.announced.rbegin(); it != c.announced.rend(); ++it) {
        if (matches(asked, it->version)) {
            return &*it;
        }
    }
    return nullptr;
}

const AnnouncedRelease*
announced_newer(const Catalog& c, const Version& asked, const Version& picked) {
    for (auto it = c.announced.rbegin(); it != c.announced.rend(); ++it) {
        if (!it->preview && asked.is_prefix_of(it->version) &&
            Version::compare_numeric(it->version, picked.truncated(it->version.size())) > 0 &&
            !c.newest_cuda(it->version)) {
            return &*it;
        }
    }
    return nullptr;
}

Error announced_error(const Catalog& c, const AnnouncedRelease& r) {
    std::string v = r.version.str();
    if (r.preview) {
        return Error(ErrorCode::not_found,
                     "CUDA " + v + " was a developer preview, superseded by " +
                         r.superseded_by->str() + ": NVIDIA published no index for it")
            .with_hint("cudaenv install " + r.superseded_by->str());
    }
    auto err = Error(ErrorCode::not_found,
                     "CUDA " + v +
                         " is released, but NVIDIA's index for it is not known to the "
                         "manifests: cudaenv cannot install it yet");
    if (const auto* newest = c.newest_cuda(r.version.truncated(1))) {
        err = std::move(err).with_hint(
            "the newest installable CUDA " + std::to_string(r.version.major()) + " is " +
            newest->version.str() + ": cudaenv install " + newest->version.str());
    }
    return std::move(err).with_hint("cudaenv update brings it once its index is known; what is "
                                    "known of it: cudaenv resolve " +
                                    v);
}

std::string announced_summary(const AnnouncedRelease& r) {
    if (r.preview) {
        return "developer preview, superseded by " + r.superseded_by->str() +
               "; NVIDIA published no index for it";
    }
    std::string out = "released";
    out += r.release_date.empty() ? " (date not known)" : " " + r.release_date;
    if (r.driver_branch) {
        out += "; driver R" + std::to_string(*r.driver_branch) +
               (r.driver_branch_inferred ? " (inferred)" : "");
    }
    out += "; its index is not known";
    return out;
}

} // namespace cudaenv::manifest
