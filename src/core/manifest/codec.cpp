#include "codec.hpp"

#include "../fs.hpp"
#include "nvidia_redist.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>

namespace cudaenv::manifest {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

bool is_safe_relative_path(std::string_view s) {
    if (s.empty() || s.front() == '/') {
        return false;
    }
    for (char c : s) {
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '_' || c == '+' || c == '~' || c == '-' || c == '/';
        if (!plain) {
            return false;
        }
    }
    std::size_t start = 0;
    while (start <= s.size()) {
        std::size_t end = s.find('/', start);
        if (end == std::string_view::npos) {
            end = s.size();
        }
        std::string_view seg = s.substr(start, end - start);
        if (seg.empty() || seg == "." || seg == "..") {
            return false;
        }
        start = end + 1;
    }
    return true;
}

Result<std::string> join_url(std::string_view base, std::string_view rel, std::string_view what) {
    if (!is_safe_relative_path(rel)) {
        std::string shown = printable(rel.substr(0, 200));
        return Error(ErrorCode::integrity,
                     std::string(what) + ": unsafe path '" + shown +
                         "' (only letters, digits and ._+~- between slashes; no '..' or "
                         "percent-encoding)")
            .with_hint("the manifest or index is bad; nothing was requested");
    }
    std::string url(base);
    while (!url.empty() && url.back() == '/') {
        url.pop_back();
    }
    return url + "/" + std::string(rel);
}

bool is_safe_https_url(std::string_view url) {
    if (url.rfind("https://", 0) != 0) {
        return false;
    }
    std::string lower;
    for (char c : url) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7f || c == '\\') {
            return false;
        }
        lower += static_cast<char>(std::tolower(u));
    }
    for (std::string_view bad : {"%2e", "%2f", "%5c", "%25", "/../", "/./", "//"}) {
        if (lower.find(bad, 8) != std::string::npos) {
            return false;
        }
    }
    return !(lower.ends_with("/..") || lower.ends_with("/."));
}

namespace {

/// Field access with errors that name the manifest and the field.
class Reader {
  public:
    explicit Reader(std::string_view origin) : m_origin(origin) {}

    /// Field values come from the manifest: the line is escaped as a whole (printable()).
    Error error(const std::string& what) const {
        return Error(ErrorCode::integrity, printable("manifest '" + m_origin + "': " + what));
    }

    Result<const json*> object(const json& parent, std::string_view key) const {
        auto it = parent.find(key);
        if (it == parent.end() || !it->is_object()) {
            return error("'" + std::string(key) + "' must be an object");
        }
        return &*it;
    }

    Result<std::string> string(const json& obj, std::string_view key) const {
        auto it = obj.find(key);
        if (it == obj.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
            return error("missing or empty '" + std::string(key) + "'");
        }
        return it->get<std::string>();
    }

    std::string opt_string(const json& obj, std::string_view key) const {
        auto it = obj.find(key);
        if (it == obj.end() || !it->is_string()) {
            return {};
        }
        return it->get<std::string>();
    }

    Result<Version> version(const json& obj, std::string_view key) const {
        auto s = string(obj, key);
        if (!s) {
            return std::move(s).error();
        }
        auto v = Version::parse(*s);
        if (!v) {
            return error("'" + std::string(key) + "': " + v.error().message);
        }
        return *v;
    }

    Result<std::optional<Version>> opt_version(const json& obj, std::string_view key) const {
        auto it = obj.find(key);
        if (it == obj.end() || it->is_null()) {
            return std::optional<Version>{};
        }
        auto v = version(obj, key);
        if (!v) {
            return std::move(v).error();
        }
        return std::optional<Version>{*v};
    }

    /// Non-negative integer, written as a number or (as NVIDIA does) a decimal string.
    Result<std::optional<std::uint64_t>> size(const json& obj, std::string_view key) const {
        auto it = obj.find(key);
        if (it == obj.end() || it->is_null()) {
            return std::optional<std::uint64_t>{};
        }
        if (it->is_number_unsigned()) {
            return std::optional<std::uint64_t>{it->get<std::uint64_t>()};
        }
        if (it->is_string()) {
            const auto& s = it->get_ref<const std::string&>();
            if (!s.empty() && s.size() <= 19 &&
                std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
                return std::optional<std::uint64_t>{std::stoull(s)};
            }
        }
        return error("'" + std::string(key) + "' must be a non-negative integer");
    }

    Result<unsigned> uint(const json& obj, std::string_view key) const {
        auto it = obj.find(key);
        if (it == obj.end() || !it->is_number_unsigned() || it->get<std::uint64_t>() > 100000) {
            return error("'" + std::string(key) + "' must be a small non-negative integer");
        }
        return static_cast<unsigned>(it->get<std::uint64_t>());
    }

    /// {path?, sha256, size?}; `need_size` makes size mandatory.
    Result<Artifact> artifact(const json& obj, const std::string& where, bool need_size) const {
        if (!obj.is_object()) {
            return error(where + " must be an object");
        }
        Artifact a;
        a.path = opt_string(obj, "path");
        if (obj.contains("path") && !obj.at("path").is_null() &&
            (!obj.at("path").is_string() || !is_safe_relative_path(a.path))) {
            return error(where + ": unsafe or malformed path '" + a.path +
                         "' (must be relative: letters, digits and ._+~- between slashes, no "
                         "'..' or percent-encoding)");
        }
        a.url = opt_string(obj, "url");
        if (obj.contains("url") && (!is_safe_https_url(a.url) || !a.path.empty())) {
            return error(where +
                         ": 'url' must be a plain https URL (no encoded or literal '..') and "
                         "exclude 'path'");
        }
        auto sha = obj.find("sha256");
        if (sha == obj.end() || !sha->is_string()) {
            return error(where + ": missing sha256");
        }
        a.sha256 = sha->get<std::string>();
        if (!is_sha256_hex(a.sha256)) {
            return error(where + ": sha256 '" + a.sha256 + "' is not 64 lowercase hex digits");
        }
        auto sz = size(obj, "size");
        if (!sz) {
            return error(where + ": " + sz.error().message);
        }
        a.size = *sz;
        if (need_size && !a.size) {
            return error(where + ": missing size");
        }
        return a;
    }

    Status header(const json& doc, std::string_view kind) const {
        if (!doc.is_object()) {
            return error("not a JSON object");
        }
        auto schema = doc.find("schema");
        if (schema == doc.end() || !schema->is_string()) {
            return error("no 'schema' field; expected '" + std::string(k_schema) + "'");
        }
        if (schema->get_ref<const std::string&>() != k_schema) {
            return error("unknown schema '" + schema->get<std::string>() +
                         "'; this cudaenv reads '" + std::string(k_schema) + "'")
                .with_hint("a newer cudaenv may read it; upgrade cudaenv or use manifests written "
                           "for this version");
        }
        auto k = doc.find("kind");
        if (k == doc.end() || !k->is_string() || k->get_ref<const std::string&>() != kind) {
            return error("expected kind '" + std::string(kind) + "'");
        }
        return Ok{};
    }

  private:
    std::string m_origin;
};

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

} // namespace

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
    auto builds = doc.find("builds");
    if (builds == doc.end() || !builds->is_array() || builds->empty()) {
        return rd.error("'builds' must be a non-empty array");
    }
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
    for (const char* key : {"aliases", "packages"}) {
        auto& out = std::string_view(key) == "aliases" ? f.aliases : f.packages;
        if (auto it = doc.find(key); it != doc.end()) {
            if (!it->is_array()) {
                return rd.error(std::string("'") + key + "' must be an array");
            }
            for (const auto& a : *it) {
                if (!a.is_string()) {
                    return rd.error(std::string("'") + key + "' must hold strings");
                }
                out.push_back(a.get<std::string>());
            }
        }
    }
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
    auto rel = doc.find("releases");
    if (rel == doc.end() || !rel->is_array() || rel->empty()) {
        return rd.error("'releases' must be a non-empty array");
    }
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
    auto list = doc.find("gpus");
    if (list == doc.end() || !list->is_array()) {
        return rd.error("'gpus' must be an array");
    }
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
    auto list = doc.find("profiles");
    if (list == doc.end() || !list->is_array()) {
        return rd.error("'profiles' must be an array");
    }
    auto strings = [&](const json& obj, const char* key) -> Result<std::vector<std::string>> {
        std::vector<std::string> v;
        if (auto it = obj.find(key); it != obj.end()) {
            if (!it->is_array()) {
                return rd.error(std::string("'") + key + "' must be an array");
            }
            for (const auto& s : *it) {
                if (!s.is_string()) {
                    return rd.error(std::string("'") + key + "' must hold strings");
                }
                v.push_back(s.get<std::string>());
            }
        }
        return v;
    };
    std::vector<Profile> out;
    std::set<std::string> names;
    for (const auto& p : *list) {
        if (!p.is_object()) {
            return rd.error("each profile must be an object");
        }
        Profile prof;
        prof.name = CUDAENV_TRY(rd.string(p, "name"));
        prof.description = rd.opt_string(p, "description");
        prof.includes = CUDAENV_TRY(strings(p, "includes"));
        prof.components = CUDAENV_TRY(strings(p, "components"));
        prof.exclude = CUDAENV_TRY(strings(p, "exclude"));
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

namespace {

ojson artifact_json(const Artifact& a) {
    ojson j = ojson::object();
    if (!a.path.empty()) {
        j["path"] = a.path;
    }
    if (!a.url.empty()) {
        j["url"] = a.url;
    }
    j["sha256"] = a.sha256;
    if (a.size) {
        j["size"] = *a.size;
    }
    return j;
}

ojson platforms_json(const std::map<std::string, Artifact, std::less<>>& m) {
    ojson j = ojson::object();
    for (const auto& [p, a] : m) {
        j[p] = artifact_json(a);
    }
    return j;
}

ojson header_json(const char* kind) {
    return ojson{{"schema", std::string(k_schema)}, {"kind", kind}};
}

} // namespace

ojson to_json(const CudaRelease& r) {
    ojson j = header_json("cuda");
    j["version"] = r.version.str();
    if (!r.release_date.empty()) {
        j["release_date"] = r.release_date;
    }
    j["source"] = source_name(r.source);
    if (r.redistrib) {
        j["redistrib"] = artifact_json(*r.redistrib);
    }
    if (r.source == CudaSource::runfile) {
        j["runfiles"] = platforms_json(r.runfiles);
    }
    if (r.nvcc_version) {
        j["nvcc_version"] = r.nvcc_version->str();
    }
    ojson d = ojson::object();
    if (r.driver_min) {
        d["min"] = r.driver_min->str();
        d["min_source"] = r.driver_min_source;
        if (!r.driver_min_basis.empty()) {
            d["min_basis"] = r.driver_min_basis;
        }
    }
    if (r.driver_compat_min) {
        d["compat_min"] = r.driver_compat_min->str();
    }
    if (!d.empty()) {
        j["driver"] = d;
    }
    if (r.sm) {
        j["sm"] = ojson{{"min", r.sm->min}, {"max", r.sm->max}, {"archs", r.sm->archs}};
    }
    ojson hc = ojson::object();
    if (r.gcc_max) {
        hc["gcc_max"] = r.gcc_max->str();
    }
    if (r.clang_max) {
        hc["clang_max"] = r.clang_max->str();
    }
    if (!hc.empty() && !r.host_compilers_source.empty()) {
        hc["source"] = r.host_compilers_source;
    }
    if (!hc.empty()) {
        j["host_compilers"] = hc;
    }
    if (r.source == CudaSource::redist) {
        ojson comps = ojson::object();
        for (const auto& c : r.components) {
            ojson cj = ojson::object();
            if (!c.description.empty()) {
                cj["name"] = c.description;
            }
            cj["version"] = c.version.str();
            cj["platforms"] = platforms_json(c.platforms);
            comps[c.name] = cj;
        }
        j["components"] = comps;
    }
    return j;
}

ojson to_json(const CudnnRelease& r) {
    ojson j = header_json("cudnn");
    j["version"] = r.version.str();
    j["major"] = r.major;
    if (!r.release_date.empty()) {
        j["release_date"] = r.release_date;
    }
    j["layout"] = r.layout == CudnnLayout::redist ? "redist" : "tarball";
    if (!r.redistrib.empty()) {
        ojson red = ojson::array();
        for (const auto& a : r.redistrib) {
            red.push_back(artifact_json(a));
        }
        j["redistrib"] = red;
    }
    ojson builds = ojson::array();
    for (const auto& b : r.builds) {
        ojson one{{"cuda", b.cuda}};
        if (b.cuda_min) {
            one["cuda_min"] = b.cuda_min->str();
        }
        if (b.cuda_max) {
            one["cuda_max"] = b.cuda_max->str();
        }
        one["platforms"] = platforms_json(b.platforms);
        if (!b.extras.empty()) {
            ojson ex = ojson::object();
            for (const auto& [name, plats] : b.extras) {
                ex[name] = platforms_json(plats);
            }
            one["extras"] = ex;
        }
        builds.push_back(std::move(one));
    }
    j["builds"] = builds;
    return j;
}

namespace {

ojson sources_json(const std::map<std::string, Sourced>& sources) {
    ojson out = ojson::object();
    for (const auto& [key, s] : sources) {
        out[key] = ojson{{"text", s.text}, {"primary", s.primary}};
    }
    return out;
}

} // namespace

ojson to_json(const Framework& f) {
    ojson j = header_json("framework");
    j["name"] = f.name;
    j["aliases"] = f.aliases;
    j["packages"] = f.packages;
    j["compat"] = ojson{{"cuda", rule_name(f.cuda_rule)}, {"cudnn", rule_name(f.cudnn_rule)}};
    ojson rel = ojson::array();
    for (const auto& r : f.releases) {
        ojson row{{"series", r.series.str()}, {"tested", r.tested.str()}, {"cuda", r.cuda.str()}};
        if (r.cudnn.size() > 0) {
            row["cudnn"] = r.cudnn.str();
        }
        if (!r.package.empty()) {
            row["package"] = r.package;
        }
        if (!r.python.empty()) {
            row["python"] = r.python;
        }
        if (!r.compiler.empty()) {
            row["compiler"] = r.compiler;
        }
        if (!r.build_tools.empty()) {
            row["build_tools"] = r.build_tools;
        }
        if (!r.variants.empty()) {
            row["default_variant"] = r.default_variant;
            ojson vs = ojson::array();
            for (const auto& v : r.variants) {
                ojson vj{{"tag", v.tag}, {"cuda", v.cuda.str()}};
                if (v.cuda_floor) {
                    vj["cuda_floor"] = true;
                }
                if (v.cuda_install) {
                    vj["cuda_install"] = v.cuda_install->str();
                }
                if (v.cudnn) {
                    vj["cudnn"] = v.cudnn->str();
                }
                if (v.cudnn_below) {
                    vj["cudnn_below"] = v.cudnn_below->str();
                }
                if (!v.pins.empty()) {
                    ojson pins = ojson::object();
                    for (const auto& [name, req] : v.pins) {
                        pins[name] = req;
                    }
                    vj["pins"] = pins;
                }
                if (!v.sources.empty()) {
                    vj["sources"] = sources_json(v.sources);
                }
                vs.push_back(vj);
            }
            row["variants"] = vs;
        }
        if (!r.sources.empty()) {
            row["sources"] = sources_json(r.sources);
        }
        rel.push_back(row);
    }
    j["releases"] = rel;
    if (!f.rules.empty()) {
        ojson rules = ojson::array();
        for (const auto& r : f.rules) {
            rules.push_back(ojson{{"id", r.id}, {"text", r.text}, {"source", r.source}});
        }
        j["rules"] = rules;
    }
    return j;
}

nlohmann::ordered_json indexes_to_json(const std::vector<PinnedIndex>& indexes) {
    ojson j = header_json("indexes");
    for (const char* product : {"cuda", "cudnn"}) {
        ojson list = ojson::array();
        for (const auto& p : indexes) {
            if (p.product == product) {
                ojson e{{"version", p.version.str()}};
                ojson a = artifact_json(p.index);
                for (auto& [k, v] : a.items()) {
                    e[k] = v;
                }
                if (p.release) {
                    e["release"] = to_json(*p.release);
                }
                list.push_back(std::move(e));
            }
        }
        j[product] = list;
    }
    return j;
}

ojson gpus_to_json(const std::vector<Gpu>& gpus) {
    ojson j = header_json("gpus");
    ojson list = ojson::array();
    for (const auto& g : gpus) {
        ojson gj{{"name", g.name},
                 {"compute_capability",
                  std::to_string(g.compute_capability / 10) + "." +
                      std::to_string(g.compute_capability % 10)}};
        if (!g.architecture.empty()) {
            gj["architecture"] = g.architecture;
        }
        if (g.min_driver) {
            gj["min_driver"] = g.min_driver->str();
            gj["min_driver_basis"] = g.min_driver_basis;
        }
        list.push_back(gj);
    }
    j["gpus"] = list;
    return j;
}

ojson profiles_to_json(const std::vector<Profile>& profiles) {
    ojson j = header_json("profiles");
    ojson list = ojson::array();
    for (const auto& p : profiles) {
        ojson pj{{"name", p.name}, {"description", p.description}};
        if (p.all) {
            pj["all"] = true;
            pj["exclude"] = p.exclude;
        } else {
            pj["includes"] = p.includes;
            pj["components"] = p.components;
        }
        list.push_back(pj);
    }
    j["profiles"] = list;
    return j;
}

ojson to_json(const Rules& r) {
    ojson j = header_json("rules");
    ojson cudnn = ojson::object();
    for (const auto& [major, libs] : r.cudnn_sublibraries) {
        ojson spec{{"libraries", libs}};
        if (auto it = r.cudnn_version_header.find(major); it != r.cudnn_version_header.end()) {
            spec["version_header"] = it->second;
        }
        cudnn[std::to_string(major)] = spec;
    }
    j["cudnn"] = cudnn;
    return j;
}

namespace {

Result<json> load_json_file(const std::filesystem::path& file) {
    auto text = read_text_file(file);
    if (!text) {
        return Error(ErrorCode::integrity, std::move(text).error().message);
    }
    return parse_json_text(*text, file.string());
}

/// The .json files directly in dir, sorted; a missing dir is empty.
std::vector<std::filesystem::path> json_files(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() == ".json") {
            out.push_back(it->path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

template <typename T, typename F>
Status parse_releases(const ManifestFiles& files,
                      const std::string& shown,
                      std::string_view sub,
                      std::vector<T>& out,
                      F parse) {
    std::string prefix = std::string(sub) + "/";
    for (auto it = files.lower_bound(prefix); it != files.end() && it->first.rfind(prefix, 0) == 0;
         ++it) {
        std::string file = shown + "/" + it->first;
        auto doc = CUDAENV_TRY(parse_json_text(it->second, file));
        auto rel = CUDAENV_TRY(parse(doc, file));
        std::string stem = it->first.substr(prefix.size(), it->first.size() - prefix.size() - 5);
        if (rel.version.str() != stem) {
            return Error(ErrorCode::integrity,
                         "manifest '" + file + "': holds version '" + rel.version.str() +
                             "' but is named '" + stem + ".json'");
        }
        out.push_back(std::move(rel));
    }
    std::sort(out.begin(), out.end(), [](const T& a, const T& b) { return a.version < b.version; });
    return Ok{};
}

bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '+' || c == '-';
}

} // namespace

bool is_manifest_file_name(std::string_view rel) {
    auto slash = rel.find('/');
    std::string_view name = rel;
    if (slash != std::string_view::npos) {
        std::string_view dir = rel.substr(0, slash);
        if (dir != "cuda" && dir != "cudnn" && dir != "frameworks") {
            return false;
        }
        name = rel.substr(slash + 1);
    }
    if (name.size() < 6 || name.size() > 128 || name.front() == '.' ||
        name.substr(name.size() - 5) != ".json" || name == "release.json") {
        return false;
    }
    return std::all_of(name.begin(), name.end(), name_char);
}

Result<ManifestFiles> read_manifest_dir(const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    ManifestFiles out;
    for (const char* sub : {"", "cuda", "cudnn", "frameworks"}) {
        fs::path d = *sub ? dir / sub : dir;
        std::error_code ec;
        if (!fs::is_directory(d, ec)) {
            continue;
        }
        for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
            std::string rel = *sub ? std::string(sub) + "/" + it->path().filename().string()
                                   : it->path().filename().string();
            if (!is_manifest_file_name(rel) || !it->is_regular_file(ec)) {
                continue;
            }
            auto text = read_text_file(it->path());
            if (!text) {
                return Error(ErrorCode::integrity, std::move(text).error().message);
            }
            out.emplace(rel, std::move(*text));
        }
        if (ec) {
            return Error(ErrorCode::integrity, "cannot list '" + d.string() + "': " + ec.message());
        }
    }
    return out;
}

namespace {

/// Whether a framework file can be passed over when only `name` is wanted, from its first bytes:
/// the codec writes "name" and "aliases" before the releases, so a file whose stem is not the
/// name and whose whole aliases list is in its head without the name is another framework's.
/// Anything else (a hand-written file, a long head) is parsed.
bool surely_other_framework(const std::filesystem::path& file, std::string_view name) {
    if (file.stem() == name) {
        return false;
    }
    std::ifstream in(file, std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    auto key = head.find("\"aliases\"");
    auto open = key == std::string::npos ? key : head.find('[', key);
    auto close = open == std::string::npos ? open : head.find(']', open);
    auto name_key = head.find("\"name\"");
    if (close == std::string::npos || name_key == std::string::npos || name_key > key) {
        return false;
    }
    std::string quoted = "\"" + std::string(name) + "\"";
    auto name_end = head.find(',', name_key);
    return head.substr(open, close - open).find(quoted) == std::string::npos &&
           head.substr(name_key, name_end == std::string::npos ? 0 : name_end - name_key)
                   .find(quoted) == std::string::npos;
}

} // namespace

Result<std::vector<Framework>> load_frameworks(const std::filesystem::path& dir,
                                               std::string_view only) {
    std::vector<Framework> out;
    for (const auto& file : json_files(dir / "frameworks")) {
        // the files load_catalog reads, no others: the shim and the CLI see one set
        if (!is_manifest_file_name("frameworks/" + file.filename().string())) {
            continue;
        }
        if (!only.empty() && surely_other_framework(file, only)) {
            continue; // the shim asks for one framework: PyTorch's and JAX's tables are large
        }
        auto doc = CUDAENV_TRY(load_json_file(file));
        out.push_back(CUDAENV_TRY(parse_framework(doc, file.string())));
    }
    return out;
}

Result<Catalog> parse_catalog(const ManifestFiles& files, const std::string& shown) {
    Catalog c;
    CUDAENV_TRY(parse_releases(files, shown, "cuda", c.cuda, parse_cuda_release));
    CUDAENV_TRY(parse_releases(files, shown, "cudnn", c.cudnn, parse_cudnn_release));
    for (auto it = files.lower_bound("frameworks/");
         it != files.end() && it->first.rfind("frameworks/", 0) == 0;
         ++it) {
        std::string file = shown + "/" + it->first;
        auto doc = CUDAENV_TRY(parse_json_text(it->second, file));
        c.frameworks.push_back(CUDAENV_TRY(parse_framework(doc, file)));
    }
    if (c.cuda.empty()) {
        return Error(ErrorCode::integrity,
                     "manifest directory '" + shown + "' has no CUDA releases (cuda/*.json)");
    }
    auto top = [&](const char* name, bool needed) -> Result<std::optional<json>> {
        auto it = files.find(name);
        if (it == files.end()) {
            if (needed) {
                return Error(ErrorCode::integrity,
                             "manifest '" + shown + "/" + name + "': missing");
            }
            return std::optional<json>();
        }
        return std::optional<json>(CUDAENV_TRY(parse_json_text(it->second, shown + "/" + name)));
    };
    if (auto doc = CUDAENV_TRY(top("indexes.json", false))) {
        c.pinned_indexes = CUDAENV_TRY(parse_indexes(*doc, shown + "/indexes.json"));
    }
    if (auto doc = CUDAENV_TRY(top("gpus.json", false))) {
        c.gpus = CUDAENV_TRY(parse_gpus(*doc, shown + "/gpus.json"));
    }
    auto profiles = CUDAENV_TRY(top("profiles.json", true));
    c.profiles = CUDAENV_TRY(parse_profiles(*profiles, shown + "/profiles.json"));
    auto rules = CUDAENV_TRY(top("rules.json", true));
    c.rules = CUDAENV_TRY(parse_rules(*rules, shown + "/rules.json"));
    return c;
}

Result<Catalog> load_catalog(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
        return Error(ErrorCode::integrity, "manifest directory '" + dir.string() + "' not found")
            .with_hint("set CUDAENV_MANIFESTS or --manifests to a directory of cudaenv manifests");
    }
    return parse_catalog(CUDAENV_TRY(read_manifest_dir(dir)), dir.string());
}

} // namespace cudaenv::manifest
