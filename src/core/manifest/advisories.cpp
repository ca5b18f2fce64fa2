#include "advisories.hpp"

#include "../fs.hpp"
#include "codec_fields.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace cudaenv::manifest {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

constexpr std::string_view k_product_words[] = {
    "driver", "toolkit", "cublas", "container-toolkit", "jetson-l4t"};
constexpr std::string_view k_product_titles[] = {
    "NVIDIA driver", "CUDA Toolkit", "cuBLAS", "NVIDIA Container Toolkit", "Jetson Linux (L4T)"};
constexpr std::string_view k_severity_words[] = {"none", "low", "medium", "high", "critical"};

bool less(const Version& a, const Version& b) {
    return Version::compare_numeric(a, b) < 0;
}

bool iequal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

bool is_date(std::string_view s) {
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') {
        return false;
    }
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i != 4 && i != 7 && !std::isdigit(static_cast<unsigned char>(s[i]))) {
            return false;
        }
    }
    return true;
}

Result<std::optional<double>>
cvss(const detail::Reader& rd, const json& obj, const std::string& where) {
    auto it = obj.find("cvss");
    if (it == obj.end() || it->is_null()) {
        return std::optional<double>{};
    }
    if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 10) {
        return rd.error(where + ": 'cvss' must be a number from 0 to 10");
    }
    return std::optional<double>{it->get<double>()};
}

Result<Severity> severity(const detail::Reader& rd, const json& obj, const std::string& where) {
    auto s = rd.opt_string(obj, "severity");
    auto v = severity_of(s);
    if (!v) {
        return rd.error(where + ": 'severity' must be none, low, medium, high or critical");
    }
    return *v;
}

Result<AffectedRange> range(const detail::Reader& rd, const json& r, const std::string& where) {
    if (!r.is_object()) {
        return rd.error(where + ": each of 'affects' must be an object");
    }
    AffectedRange out;
    auto product = advisory_product(rd.opt_string(r, "product"));
    if (!product) {
        return rd.error(where + ": 'product' must be one of driver, toolkit, cublas, "
                                "container-toolkit, jetson-l4t");
    }
    out.product = *product;
    if (auto it = r.find("branch"); it != r.end()) {
        out.branch = CUDAENV_TRY(rd.uint(r, "branch"));
    }
    out.introduced = CUDAENV_TRY(rd.opt_version(r, "introduced"));
    out.fixed = CUDAENV_TRY(rd.opt_version(r, "fixed"));
    out.last_affected = CUDAENV_TRY(rd.opt_version(r, "last_affected"));
    out.fixed_datacenter = CUDAENV_TRY(rd.opt_version(r, "fixed_datacenter"));
    if (!out.fixed && !out.last_affected) {
        return rd.error(where + ": a range needs 'fixed' or 'last_affected'");
    }
    if (out.introduced && out.fixed && !less(*out.introduced, *out.fixed)) {
        return rd.error(where + ": 'introduced' must come before 'fixed'");
    }
    if (out.fixed_datacenter && out.product != AdvisoryProduct::driver) {
        return rd.error(where + ": 'fixed_datacenter' is for drivers only");
    }
    if (out.product == AdvisoryProduct::driver && !out.branch) {
        return rd.error(where + ": a driver range needs its 'branch'");
    }
    if (auto it = r.find("compute_capabilities"); it != r.end()) {
        if (!it->is_array()) {
            return rd.error(where + ": 'compute_capabilities' must be an array");
        }
        for (const auto& cc : *it) {
            if (!cc.is_number_unsigned() || cc.get<unsigned>() < 10 || cc.get<unsigned>() > 200) {
                return rd.error(where + ": a compute capability is a number like 100 (10.0)");
            }
            out.compute_capabilities.push_back(cc.get<unsigned>());
        }
    }
    out.note = rd.opt_string(r, "note");
    return out;
}

Result<Advisory> advisory(const detail::Reader& rd, const json& a) {
    if (!a.is_object()) {
        return rd.error("each advisory must be an object");
    }
    Advisory out;
    out.id = CUDAENV_TRY(rd.string(a, "id"));
    if (!is_advisory_id(out.id)) {
        return rd.error("advisory id '" + out.id + "' is not an id (letters, digits, '.', '-')");
    }
    std::string where = "advisory " + out.id;
    out.kind = CUDAENV_TRY(rd.string(a, "kind"));
    if (out.kind != "security" && out.kind != "correctness") {
        return rd.error(where + ": 'kind' must be security or correctness");
    }
    out.title = CUDAENV_TRY(rd.string(a, "title"));
    out.url = CUDAENV_TRY(rd.string(a, "url"));
    if (!out.url.starts_with("https://")) {
        return rd.error(where + ": 'url' must be https");
    }
    out.partial = rd.opt_string(a, "partial");
    // a bulletin known only in part may lack its date; every other one has it
    out.published = out.partial.empty() ? CUDAENV_TRY(rd.string(a, "published"))
                                        : rd.opt_string(a, "published");
    out.updated = rd.opt_string(a, "updated");
    if ((!out.published.empty() && !is_date(out.published)) ||
        (!out.updated.empty() && !is_date(out.updated))) {
        return rd.error(where + ": dates are YYYY-MM-DD");
    }
    out.severity = CUDAENV_TRY(severity(rd, a, where));
    out.cvss = CUDAENV_TRY(cvss(rd, a, where));
    if (auto it = a.find("cves"); it != a.end()) {
        if (!it->is_array()) {
            return rd.error(where + ": 'cves' must be an array");
        }
        for (const auto& c : *it) {
            if (!c.is_object()) {
                return rd.error(where + ": each CVE must be an object");
            }
            Cve cve;
            cve.id = CUDAENV_TRY(rd.string(c, "id"));
            if (!cve.id.starts_with("CVE-") || !is_advisory_id(cve.id)) {
                return rd.error(where + ": '" + cve.id + "' is not a CVE id");
            }
            cve.cvss = CUDAENV_TRY(cvss(rd, c, where + " " + cve.id));
            cve.severity = CUDAENV_TRY(severity(rd, c, where + " " + cve.id));
            cve.summary = rd.opt_string(c, "summary");
            out.cves.push_back(std::move(cve));
        }
    }
    const json* affects = CUDAENV_TRY(rd.non_empty_array(a, "affects"));
    for (std::size_t i = 0; i < affects->size(); ++i) {
        out.affects.push_back(
            CUDAENV_TRY(range(rd, (*affects)[i], where + " affects[" + std::to_string(i) + "]")));
    }
    out.other_products = CUDAENV_TRY(rd.strings(a, "other_products"));
    out.source = CUDAENV_TRY(rd.string(a, "source"));
    return out;
}

} // namespace

std::string_view to_string(AdvisoryProduct p) {
    return k_product_words[static_cast<std::size_t>(p)];
}

std::optional<AdvisoryProduct> advisory_product(std::string_view s) {
    for (std::size_t i = 0; i < std::size(k_product_words); ++i) {
        if (k_product_words[i] == s) {
            return static_cast<AdvisoryProduct>(i);
        }
    }
    return std::nullopt;
}

std::string_view product_title(AdvisoryProduct p) {
    return k_product_titles[static_cast<std::size_t>(p)];
}

std::string_view to_string(Severity s) {
    return k_severity_words[static_cast<std::size_t>(s)];
}

std::optional<Severity> severity_of(std::string_view s) {
    for (std::size_t i = 0; i < std::size(k_severity_words); ++i) {
        if (iequal(k_severity_words[i], s)) {
            return static_cast<Severity>(i);
        }
    }
    return std::nullopt;
}

bool AffectedRange::contains(const Version& v, bool datacenter) const {
    if (introduced && less(v, *introduced)) {
        return false;
    }
    if (auto fix = fix_for(datacenter)) {
        return less(v, *fix);
    }
    return last_affected && !less(*last_affected, v);
}

std::optional<Version> AffectedRange::fix_for(bool datacenter) const {
    if (datacenter && fixed_datacenter) {
        return fixed_datacenter;
    }
    return fixed;
}

const Advisory* Advisories::find(std::string_view id) const {
    for (const auto& a : advisories) {
        if (iequal(a.id, id)) {
            return &a;
        }
    }
    return nullptr;
}

Result<Advisories> parse_advisories(const json& doc, std::string_view origin) {
    detail::Reader rd(origin);
    CUDAENV_TRY(rd.header(doc, "advisories"));
    Advisories out;
    out.as_of = CUDAENV_TRY(rd.string(doc, "as_of"));
    if (!is_date(out.as_of)) {
        return rd.error("'as_of' is YYYY-MM-DD");
    }
    out.sources = CUDAENV_TRY(rd.strings(doc, "sources"));
    const json* list = CUDAENV_TRY(rd.array(doc, "advisories"));
    for (const auto& a : *list) {
        auto parsed = CUDAENV_TRY(advisory(rd, a));
        if (out.find(parsed.id)) {
            return rd.error("advisory " + parsed.id + " appears twice");
        }
        out.advisories.push_back(std::move(parsed));
    }
    return out;
}

Result<Advisories> load_advisories(const std::filesystem::path& dir) {
    auto file = dir / k_advisories_file;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        return Advisories{};
    }
    auto text = CUDAENV_TRY(read_text_file(file));
    auto doc = CUDAENV_TRY(parse_json_text(text, file.string()));
    return parse_advisories(doc, file.string());
}

namespace {

ojson number(double d) {
    // CVSS scores have one decimal; keep the file byte-stable across platforms
    double r = std::round(d * 10) / 10;
    if (r == std::floor(r)) {
        return ojson(static_cast<int>(r));
    }
    return ojson(r);
}

} // namespace

ojson advisories_to_json(const Advisories& a) {
    ojson j{{"schema", std::string(k_schema)}, {"kind", "advisories"}, {"as_of", a.as_of}};
    j["sources"] = a.sources;
    ojson list = ojson::array();
    for (const auto& x : a.advisories) {
        ojson o{{"id", x.id}, {"kind", x.kind}, {"title", x.title}, {"url", x.url}};
        if (!x.published.empty()) {
            o["published"] = x.published;
        }
        if (!x.updated.empty()) {
            o["updated"] = x.updated;
        }
        o["severity"] = std::string(to_string(x.severity));
        if (x.cvss) {
            o["cvss"] = number(*x.cvss);
        }
        if (!x.cves.empty()) {
            ojson cves = ojson::array();
            for (const auto& c : x.cves) {
                ojson cj{{"id", c.id}};
                if (c.cvss) {
                    cj["cvss"] = number(*c.cvss);
                }
                cj["severity"] = std::string(to_string(c.severity));
                if (!c.summary.empty()) {
                    cj["summary"] = c.summary;
                }
                cves.push_back(std::move(cj));
            }
            o["cves"] = std::move(cves);
        }
        ojson affects = ojson::array();
        for (const auto& r : x.affects) {
            ojson rj{{"product", std::string(to_string(r.product))}};
            if (r.branch) {
                rj["branch"] = *r.branch;
            }
            if (r.introduced) {
                rj["introduced"] = r.introduced->str();
            }
            if (r.fixed) {
                rj["fixed"] = r.fixed->str();
            }
            if (r.fixed_datacenter) {
                rj["fixed_datacenter"] = r.fixed_datacenter->str();
            }
            if (r.last_affected) {
                rj["last_affected"] = r.last_affected->str();
            }
            if (!r.compute_capabilities.empty()) {
                rj["compute_capabilities"] = r.compute_capabilities;
            }
            if (!r.note.empty()) {
                rj["note"] = r.note;
            }
            affects.push_back(std::move(rj));
        }
        o["affects"] = std::move(affects);
        if (!x.other_products.empty()) {
            o["other_products"] = x.other_products;
        }
        o["source"] = x.source;
        if (!x.partial.empty()) {
            o["partial"] = x.partial;
        }
        list.push_back(std::move(o));
    }
    j["advisories"] = std::move(list);
    return j;
}

} // namespace cudaenv::manifest
