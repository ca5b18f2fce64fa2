#include "generate_advisories.hpp"

#include "../fs.hpp"
#include "codec.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace cudaenv::manifest {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string trimmed(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
        s.remove_suffix(1);
    }
    return std::string(s);
}

bool eat(std::string& s, std::string_view prefix) {
    if (s.size() >= prefix.size() &&
        std::equal(prefix.begin(), prefix.end(), s.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) ==
                   std::tolower(static_cast<unsigned char>(b));
        })) {
        s.erase(0, prefix.size());
        return true;
    }
    return false;
}

bool eat_suffix(std::string& s, std::string_view suffix) {
    if (s.size() >= suffix.size() &&
        s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) {
        s.erase(s.size() - suffix.size());
        s = trimmed(s);
        return true;
    }
    return false;
}

/// "12.9 Update 1" -> 12.9.1; "CUDA Toolkit 13.0" -> 13.0; "JP6.x: 36.4.4" -> 36.4.4; "36.4.6
/// and newer" -> 36.4.6. None for anything else (IGX 1.1, nvJPEG 25.03, Kernel SRU 1035).
std::optional<Version> version_words(std::string s) {
    s = trimmed(s);
    eat(s, "CUDA Toolkit ");
    if (s.size() > 6 && s[0] == 'J' && s[1] == 'P') {
        auto colon = s.find(": ");
        if (colon == std::string::npos) {
            return std::nullopt;
        }
        s.erase(0, colon + 2);
    }
    eat_suffix(s, "and newer");
    std::string update;
    if (auto at = s.find(" Update "); at != std::string::npos) {
        update = s.substr(at + 8);
        s.erase(at);
    }
    auto v = Version::try_parse(s);
    if (!v) {
        return std::nullopt;
    }
    if (!update.empty()) {
        auto u = Version::try_parse(update);
        if (!u || u->size() != 1 || v->size() != 2) {
            return std::nullopt;
        }
        v = Version::try_parse(v->str() + "." + u->str());
    }
    return v;
}

std::vector<Version> fixed_list(std::string_view text) {
    std::vector<Version> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto comma = text.find(',', start);
        auto part = text.substr(
            start, comma == std::string_view::npos ? text.size() - start : comma - start);
        if (auto v = version_words(std::string(part))) {
            out.push_back(*v);
        }
        if (comma == std::string_view::npos) {
            break;
        }
        start = comma + 1;
    }
    return out;
}

bool before(const Version& a, const Version& b) {
    return Version::compare_numeric(a, b) < 0;
}

Result<json> read_json(const fs::path& file) {
    auto text = CUDAENV_TRY(read_text_file(file));
    return parse_json_text(text, file.string());
}

struct RefError {
    std::string file;

    Error operator()(const std::string& what) const {
        return Error(ErrorCode::integrity, "reference '" + file + "': " + what);
    }
};

std::string ref_text(const json& o, const char* key) {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<std::vector<Cve>> cves_of(const RefError& bad, const json& bulletin) {
    std::vector<Cve> out;
    auto it = bulletin.find("cves");
    if (it == bulletin.end() || !it->is_array()) {
        return bad("bulletin " + ref_text(bulletin, "bulletin") + " has no 'cves' list");
    }
    for (const auto& c : *it) {
        Cve cve;
        cve.id = ref_text(c, "cve");
        if (auto s = c.find("cvss"); s != c.end() && s->is_number()) {
            cve.cvss = s->get<double>();
        }
        auto sev = severity_of(ref_text(c, "severity"));
        if (cve.id.empty() || !sev) {
            return bad("bulletin " + ref_text(bulletin, "bulletin") +
                       ": a CVE without id or severity");
        }
        cve.severity = *sev;
        cve.summary = ref_text(c, "description");
        out.push_back(std::move(cve));
    }
    return out;
}

/// The advisory's own severity and score: its worst CVE's.
void rate(Advisory& a) {
    for (const auto& c : a.cves) {
        if (c.severity > a.severity) {
            a.severity = c.severity;
        }
        if (c.cvss && (!a.cvss || *c.cvss > *a.cvss)) {
            a.cvss = c.cvss;
        }
    }
}

Advisory header(const json& b) {
    Advisory a;
    a.id = "NVIDIA-" + ref_text(b, "bulletin");
    a.kind = "security";
    a.title = ref_text(b, "title");
    a.url = ref_text(b, "url");
    a.published = ref_text(b, "initial_release_date");
    if (auto updated = ref_text(b, "current_release_date"); updated != a.published) {
        a.updated = updated;
    }
    a.source = ref_text(b, "source");
    return a;
}

Result<Advisory> driver_bulletin(const RefError& bad, const json& b) {
    Advisory a = header(b);
    a.cves = CUDAENV_TRY(cves_of(bad, b));
    rate(a);
    auto fixed = b.find("linux_first_fixed");
    if (fixed == b.end() || !fixed->is_object() || fixed->empty()) {
        return bad(a.id + ": no 'linux_first_fixed'");
    }
    for (const auto& [name, row] : fixed->items()) {
        auto branch = Version::try_parse(name.size() > 1 && name[0] == 'R' ? name.substr(1) : "");
        if (!branch || branch->size() != 1) {
            return bad(a.id + ": '" + name + "' is not a driver branch (R535)");
        }
        AffectedRange r;
        r.product = AdvisoryProduct::driver;
        r.branch = branch->major();
        std::optional<Version> consumer, datacenter;
        json by_product = row.value("by_product", json::object());
        for (const auto& [product, v] : by_product.items()) {
            auto parsed = v.is_string() ? Version::try_parse(v.get<std::string>()) : std::nullopt;
            if (!parsed) {
                return bad(a.id + " " + name + " " + product + ": not a driver version");
            }
            auto& slot = product == "Tesla" ? datacenter : consumer;
            if (!slot || before(*slot, *parsed)) {
                slot = parsed;
            }
        }
        if (auto first = ref_text(row, "first_fixed"); !first.empty()) {
            consumer = Version::try_parse(first);
        }
        if (!consumer && datacenter) {
            consumer = datacenter;
        }
        if (!consumer) {
            return bad(a.id + " " + name + ": no first fixed driver");
        }
        r.fixed = consumer;
        if (datacenter && Version::compare_numeric(*datacenter, *consumer) != 0) {
            r.fixed_datacenter = datacenter;
            r.note = "GeForce and RTX/Quadro/NVS fixed in " + consumer->str() +
                     ", data-center (Tesla) products in " + datacenter->str();
        }
        a.affects.push_back(std::move(r));
    }
    json others = b.value("vgpu_and_other_platforms_raw", json::object());
    for (const auto& [platform, parts] : others.items()) {
        for (const auto& [part, versions] : parts.items()) {
            std::string list;
            for (const auto& v : versions) {
                list += (list.empty() ? "" : "; ") + (v.is_string() ? v.get<std::string>() : "");
            }
            a.other_products.push_back(platform + " " + part + ": " + list);
        }
    }
    return a;
}

/// 5861: known only from the opening bytes of two CVE files.
Result<Advisory> partial_driver_bulletin(const RefError& bad, const json& b) {
    Advisory a = header(b);
    a.title = ref_text(b, "title");
    if (a.title.empty()) {
        a.title = "Security Bulletin: NVIDIA GPU Display Driver (bulletin " +
                  ref_text(b, "bulletin") + ", known in part)";
    }
    a.partial = ref_text(b, "status");
    auto sev = severity_of(ref_text(b, "aggregate_severity"));
    if (!sev || a.partial.empty()) {
        return bad(a.id + ": a partial bulletin needs its status and aggregate severity");
    }
    a.severity = *sev;
    json known = b.value("known_cves", json::array());
    for (const auto& c : known) {
        a.cves.push_back(Cve{ref_text(c, "cve"), std::nullopt, Severity::none, {}});
        json rows = c.value("linux_first_fixed", json::object());
        for (const auto& [name, v] : rows.items()) {
            auto branch = Version::try_parse(name.size() > 1 ? name.substr(1) : "");
            auto fixed = v.is_string() ? Version::try_parse(v.get<std::string>()) : std::nullopt;
            if (!branch || !fixed) {
                return bad(a.id + ": '" + name + "' is not a branch with a driver version");
            }
            AffectedRange r;
            r.product = AdvisoryProduct::driver;
            r.branch = branch->major();
            r.fixed = fixed;
            r.note = "from " + ref_text(c, "cve") + " alone (" + ref_text(c, "products") + ")";
            a.affects.push_back(std::move(r));
        }
    }
    if (a.affects.empty()) {
        return bad(a.id + ": no Linux driver row");
    }
    return a;
}

/// Toolkit, container toolkit and Jetson bulletins: rows of {product, affected, fixed_in}.
Result<Advisory> product_bulletin(const RefError& bad, const json& b, AdvisoryProduct product) {
    Advisory a = header(b);
    a.cves = CUDAENV_TRY(cves_of(bad, b));
    rate(a);
    auto rows = b.find("affected_and_fixed");
    if (rows == b.end() || !rows->is_array() || rows->empty()) {
        return bad(a.id + ": no 'affected_and_fixed' rows");
    }
    for (const auto& row : *rows) {
        std::string name = ref_text(row, "product");
        std::string affected = ref_text(row, "affected");
        std::string fixed_in = ref_text(row, "fixed_in");
        bool ours = product == AdvisoryProduct::toolkit ? name == "NVIDIA CUDA Toolkit"
                    : product == AdvisoryProduct::container_toolkit
                        ? name == "NVIDIA Container Toolkit"
                        : name.find("Jetson") != std::string::npos ||
                              name.find("Jeton") != std::string::npos; // NVIDIA's typo (5611)
        if (!ours) {
            std::string line = name + ": " + affected + " (fixed: " + fixed_in + ")";
            if (std::find(a.other_products.begin(), a.other_products.end(), line) ==
                a.other_products.end()) {
                a.other_products.push_back(line);
            }
            continue;
        }
        auto bound = parse_affected(affected);
        if (!bound) {
            return bad(a.id + ": the affected versions '" + affected + "' (" + name +
                       ") are in words this generator does not read");
        }
        AffectedRange r;
        r.product = product;
        r.note = bound->note;
        // the first fixed: the one in NVIDIA's fixed list on the same line (major for the
        // container toolkit and Jetson; the bound itself for the toolkit)
        std::optional<Version> fix;
        for (const auto& v : fixed_list(fixed_in)) {
            bool after = bound->inclusive ? before(bound->version, v) : !before(v, bound->version);
            if (v.major() == bound->version.major() && after && (!fix || before(v, *fix))) {
                fix = v; // the nearest fix on the same line
            }
        }
        if (bound->inclusive) {
            r.last_affected = bound->version;
            if (fix && before(bound->version, *fix)) {
                r.fixed = fix;
            }
        } else {
            r.fixed = bound->version;
            if (fix && before(bound->version, *fix)) {
                // NVIDIA's row says "prior to 36.4" and its fixed list 36.4.3: the later one
                r.fixed = fix;
                r.note = (r.note.empty() ? "" : r.note + "; ") + "the row says prior to " +
                         bound->version.str() + ", the fixed list " + fix->str() +
                         ": the later is taken";
            }
        }
        if (product == AdvisoryProduct::jetson_l4t) {
            r.branch = bound->version.major();
        }
        bool dup = std::any_of(a.affects.begin(), a.affects.end(), [&](const AffectedRange& o) {
            return o.branch == r.branch && o.fixed == r.fixed && o.last_affected == r.last_affected;
        });
        if (!dup) {
            a.affects.push_back(std::move(r));
        }
    }
    if (a.affects.empty()) {
        return bad(a.id + ": no row for the product cudaenv checks");
    }
    return a;
}

} // namespace

std::optional<AffectedBound> parse_affected(std::string_view text) {
    std::string s = trimmed(text);
    AffectedBound out;
    if (auto open = s.find(" ("); open != std::string::npos && s.back() == ')') {
        out.note = s.substr(open + 2, s.size() - open - 3);
        s = trimmed(s.substr(0, open));
    }
    if (eat(s, "All versions prior to ")) {
        out.inclusive = false;
    } else if (eat(s, "All versions up to and including ")) {
        out.inclusive = true;
    } else if (eat(s, "All versions up to ")) {
        // "All versions up to CUDA Toolkit 12.8" with "fixed in CUDA Toolkit 12.8" (5594, 5643)
        out.inclusive = false;
    } else if (eat_suffix(s, "and earlier")) {
        out.inclusive = true;
    } else {
        out.inclusive = true; // a bare version: that one (and, being older, those before it)
    }
    auto v = version_words(s);
    if (!v) {
        return std::nullopt;
    }
    out.version = *v;
    return out;
}

Result<std::optional<Advisories>> generate_advisories(const fs::path& ref, GenerateReport& report) {
    std::error_code ec;
    fs::path file = ref / "advisories.json";
    if (!fs::exists(file, ec)) {
        return std::optional<Advisories>{};
    }
    RefError bad{file.string()};
    auto doc = CUDAENV_TRY(read_json(file));
    Advisories out;
    out.sources.push_back(ref_text(doc, "_about"));
    std::string gathered = "Gathered ";
    if (auto about = ref_text(doc, "_about"); about.find(gathered) != std::string::npos) {
        out.as_of = about.substr(about.find(gathered) + gathered.size(), 10);
    }
    json drivers = doc.value("driver_bulletins", json::array());
    for (const auto& b : drivers) {
        out.advisories.push_back(CUDAENV_TRY(driver_bulletin(bad, b)));
    }
    json after = doc.value("driver_bulletins_after_snapshot", json::array());
    for (const auto& b : after) {
        out.advisories.push_back(CUDAENV_TRY(partial_driver_bulletin(bad, b)));
    }
    for (const auto& [key, product] :
         {std::pair{"cuda_toolkit_bulletins", AdvisoryProduct::toolkit},
          std::pair{"container_toolkit_bulletins", AdvisoryProduct::container_toolkit},
          std::pair{"jetson_bulletins", AdvisoryProduct::jetson_l4t}}) {
        json bulletins = doc.value(key, json::array());
        for (const auto& b : bulletins) {
            out.advisories.push_back(CUDAENV_TRY(product_bulletin(bad, b, product)));
        }
    }
    // cudaenv's curation: correctness advisories, already in the manifest's format
    fs::path ours = ref / "cudaenv-advisories.json";
    if (fs::exists(ours, ec)) {
        auto cur = CUDAENV_TRY(read_json(ours));
        json as_manifest = {{"schema", std::string(k_schema)},
                            {"kind", "advisories"},
                            {"as_of", ref_text(cur, "as_of")},
                            {"sources", json::array({ref_text(cur, "about")})},
                            {"advisories", cur.value("advisories", json::array())}};
        auto curated = CUDAENV_TRY(parse_advisories(as_manifest, ours.string()));
        out.sources.push_back(ref_text(cur, "about"));
        for (auto& a : curated.advisories) {
            out.advisories.push_back(std::move(a));
        }
    }
    if (out.advisories.empty()) {
        return std::optional<Advisories>{}; // a reference with cuBLAS patches alone (a fixture)
    }
    std::sort(out.advisories.begin(),
              out.advisories.end(),
              [](const Advisory& a, const Advisory& b) { return a.id < b.id; });
    if (out.as_of.empty()) {
        // no "Gathered YYYY-MM-DD" in the reference: the newest date it holds
        for (const auto& a : out.advisories) {
            out.as_of = std::max({out.as_of, a.published, a.updated});
        }
    }
    // what the manifest says must read back as it was written
    auto back =
        CUDAENV_TRY(parse_advisories(json::parse(advisories_to_json(out).dump()), file.string()));
    report.advisories = back.advisories.size();
    return std::optional<Advisories>{std::move(back)};
}

} // namespace cudaenv::manifest
