#include "generate_cuda_supplement.hpp"

#include "../fs.hpp"
#include "codec.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace cudaenv::manifest {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* k_file = "cuda-2026-12-supplement.json";

Error supplement_error(const std::string& what) {
    return Error(ErrorCode::integrity,
                 std::string("generating manifests: ") + k_file + ": " + what);
}

std::string text_of(const json& obj, const char* key) {
    auto it = obj.is_object() ? obj.find(key) : obj.end();
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// The reference writes what it could not find as "NOT FOUND ..." or "NOT READ ...".
bool not_found(const std::string& s) {
    return s.rfind("NOT FOUND", 0) == 0 || s.rfind("NOT READ", 0) == 0;
}

bool digits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// (no <regex>: GCC 12 warns maybe-uninitialized inside it at -O1 under ASan, and -Werror)
bool plain_date(const std::string& s) {
    return s.size() == 10 && s[4] == '-' && s[7] == '-' && digits(s.substr(0, 4)) &&
           digits(s.substr(5, 2)) && digits(s.substr(8, 2));
}

/// "cuda_13_5" -> 13.5, "cuda_13_4_0" -> 13.4.0; other keys -> nothing.
std::optional<Version> announced_key(const std::string& key) {
    if (key.rfind("cuda_", 0) != 0) {
        return std::nullopt;
    }
    std::string v = key.substr(5);
    std::size_t parts = 0;
    std::size_t start = 0;
    while (true) {
        auto end = v.find('_', start);
        if (!digits(std::string_view(v).substr(start,
                                               end == std::string::npos ? v.npos : end - start))) {
            return std::nullopt;
        }
        ++parts;
        if (end == std::string::npos) {
            break;
        }
        start = end + 1;
    }
    if (parts < 2 || parts > 3) {
        return std::nullopt;
    }
    std::replace(v.begin(), v.end(), '_', '.');
    return Version::try_parse(v);
}

Result<AnnouncedRelease>
announced_of(const Version& version, const json& e, const std::vector<CudaRelease>& cuda) {
    std::string where = "CUDA " + version.str();
    AnnouncedRelease r;
    r.version = version;
    std::string status = text_of(e, "status");
    if (status.rfind("released", 0) == 0) {
        r.preview = false;
    } else if (status.find("developer preview") != std::string::npos) {
        r.preview = true;
        // NVIDIA's words: "The CUDA Toolkit 13.4 GA release is versioned 13.4.1 and supersedes
        // the 13.4.0 developer preview."
        constexpr std::string_view lead = "versioned ";
        auto at = status.find(lead);
        auto tail =
            at == std::string::npos ? std::string::npos : status.find(" and supersedes", at);
        std::string ga = at == std::string::npos || tail == std::string::npos
                             ? std::string()
                             : status.substr(at + lead.size(), tail - at - lead.size());
        auto ga_version = Version::try_parse(ga);
        if (!ga_version || ga_version->size() != 3) {
            return supplement_error(where + ": a developer preview without the release that "
                                            "supersedes it");
        }
        r.superseded_by = ga_version;
        bool known = std::any_of(cuda.begin(), cuda.end(), [&](const CudaRelease& c) {
            return r.superseded_by && c.version == *r.superseded_by;
        });
        if (!known) {
            return supplement_error(where + ": superseded by " + ga +
                                    ", which the reference does not describe");
        }
    } else {
        return supplement_error(where + ": status '" + status +
                                "' is neither \"released ...\" nor a developer preview");
    }
    r.status_source = status;
    r.index = text_of(e, "redistrib_index");
    if (r.index.empty()) {
        return supplement_error(where + ": no 'redistrib_index' (why its index is not known)");
    }
    std::string date = text_of(e, "release_date");
    if (plain_date(date)) {
        r.release_date = date;
    } else {
        r.release_date_text = date;
    }
    if (auto d = e.find("driver_requirement"); d != e.end() && d->is_object()) {
        std::string inferred = text_of(*d, "inferred_branch");
        // "R620 ..." : R and 3 or 4 digits, then the end or a non-word character
        std::size_t n = 0;
        while (1 + n < inferred.size() && inferred[1 + n] >= '0' && inferred[1 + n] <= '9') {
            ++n;
        }
        bool word_end =
            1 + n == inferred.size() ||
            !(std::isalnum(static_cast<unsigned char>(inferred[1 + n])) || inferred[1 + n] == '_');
        if (!inferred.empty() && inferred[0] == 'R' && n >= 3 && n <= 4 && word_end) {
            r.driver_branch = static_cast<unsigned>(std::stoul(inferred.substr(1, n)));
            r.driver_branch_inferred = true; // the key says so: the notes' row was not read
            r.driver_source = inferred;
            if (auto ev = text_of(*d, "evidence"); !ev.empty()) {
                r.driver_source += " Evidence: " + ev;
            }
        }
        if (auto row = text_of(*d, "table3_or_branch_row"); not_found(row)) {
            r.not_known.emplace_back("the driver branch its release notes name", row);
        }
    }
    // the major's minor-version-compatibility floor, as every release of the major has it
    for (auto it = cuda.rbegin(); it != cuda.rend(); ++it) {
        if (it->version.major() == version.major() && it->driver_compat_min) {
            r.driver_compat_min = it->driver_compat_min;
            break;
        }
    }
    r.platforms = text_of(e, "supported_architectures_in_table1");
    if (auto t = e.find("table1_component_versions"); t != e.end() && t->is_object()) {
        for (const auto& [name, v] : t->items()) {
            if (v.is_string()) {
                r.components.emplace_back(name, v.get<std::string>());
            }
        }
        r.components_source = text_of(e, "source_release_notes");
        if (!r.components.empty() && r.components_source.empty()) {
            return supplement_error(where + ": a component table without its source");
        }
    }
    for (auto [key, what] :
         {std::pair{"sm_support", "SM support"}, std::pair{"host_compilers", "host compilers"}}) {
        if (auto t = text_of(e, key); not_found(t)) {
            r.not_known.emplace_back(what, t);
        }
    }
    return r;
}

Result<std::vector<DriverIndex>> driver_indexes_of(const json& section) {
    std::vector<DriverIndex> out;
    std::string source = text_of(section, "source");
    auto seen = section.find("entries_seen");
    if (seen == section.end() || !seen->is_array()) {
        return supplement_error("nvidia_driver_redist_index: no 'entries_seen' array");
    }
    for (const auto& e : *seen) {
        auto driver = Version::try_parse(text_of(e, "driver"));
        auto line = Version::try_parse(text_of(e, "cuda_compat_variant"));
        if (!driver || !line || line->size() != 2) {
            return supplement_error("nvidia_driver_redist_index: an entry needs 'driver' and "
                                    "'cuda_compat_variant' (a CUDA minor)");
        }
        DriverIndex d;
        d.driver = *driver;
        d.release_date = text_of(e, "release_date");
        d.index = "nvidia-driver/redist/redistrib_" + driver->str() + ".json";
        d.compat_cuda = *line;
        d.source = source;
        for (const auto& [key, a] : e.items()) {
            if (key.rfind("cuda_compat_", 0) != 0 || key == "cuda_compat_variant") {
                continue;
            }
            std::string platform = key.substr(12);
            std::string rel = text_of(a, "relative_path");
            std::string sha = text_of(a, "sha256");
            std::string size = text_of(a, "size");
            if (!is_platform(platform) || rel.rfind("cuda_compat/" + platform + "/", 0) != 0) {
                continue; // a platform cudaenv does not serve
            }
            if (!is_sha256_hex(sha) || size.empty() || size.size() > 19 ||
                !std::all_of(
                    size.begin(), size.end(), [](char c) { return c >= '0' && c <= '9'; })) {
                continue; // its sha256 or size is not known: the archive is not known
            }
            Artifact art{"nvidia-driver/redist/" + rel, {}, sha, std::stoull(size)};
            if (!is_safe_relative_path(art.path)) {
                return supplement_error("driver " + driver->str() + ": unsafe path '" + rel + "'");
            }
            d.compat.emplace(platform, std::move(art));
        }
        if (!d.compat.empty()) {
            out.push_back(std::move(d));
        }
    }
    std::sort(
        out.begin(), out.end(), [](const auto& a, const auto& b) { return a.driver < b.driver; });
    return out;
}

} // namespace

Result<CudaSupplement> cuda_supplement_from_reference(const fs::path& ref,
                                                      const std::vector<CudaRelease>& cuda,
                                                      GenerateReport& report) {
    CudaSupplement out;
    auto path = ref / k_file;
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        return out;
    }
    auto text = CUDAENV_TRY(read_text_file(path));
    auto doc = CUDAENV_TRY(parse_json_text(text, path.string()));
    if (!doc.is_object()) {
        return supplement_error("not a JSON object");
    }
    std::vector<AnnouncedRelease> announced;
    for (const auto& [key, e] : doc.items()) {
        auto version = announced_key(key);
        if (!version || !e.is_object()) {
            continue;
        }
        bool described = std::any_of(cuda.begin(), cuda.end(), [&](const CudaRelease& c) {
            return version->is_prefix_of(c.version);
        });
        if (described) {
            continue; // its index is in the reference now: the release itself is generated
        }
        announced.push_back(CUDAENV_TRY(announced_of(*version, e, cuda)));
    }
    std::sort(announced.begin(), announced.end(), [](const auto& a, const auto& b) {
        return a.version < b.version;
    });
    report.announced = announced.size();
    out.announced = std::move(announced);
    if (auto s = doc.find("nvidia_driver_redist_index"); s != doc.end() && s->is_object()) {
        out.driver_indexes = CUDAENV_TRY(driver_indexes_of(*s));
        report.driver_indexes = out.driver_indexes->size();
    }
    return out;
}

} // namespace cudaenv::manifest
