#include "psirt.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace cudaenv::refresh {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

/// The bare-metal driver products a driver bulletin lists per branch (the reference's
/// linux_first_fixed): GeForce, Tesla and the professional line, which NVIDIA called "NVIDIA RTX,
/// Quadro, NVS" until 2025 and "NVIDIA RTX PRO, RTX, Quadro" from 2026; vGPU guest drivers and
/// managers are kept apart, raw.
bool bare_metal(const std::string& product) {
    return product == "GeForce" || product == "Tesla" || product.starts_with("NVIDIA RTX");
}

std::string trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
        s.remove_suffix(1);
    }
    return std::string(s);
}

std::string str(const json& o, const char* key) {
    if (!o.is_object()) {
        return {};
    }
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// A product of the tree: its name and the names of the branches above it that say what it is.
struct Product {
    std::string architecture; ///< "Linux(R570)", "VMware vSphere(R550 vGPU 17)", "Linux"
    std::string version_of;   ///< the product_version branch: "GeForce", "NVIDIA Container Toolkit"
    std::string name;         ///< "All driver versions prior to 570.86.16", "1.17.1"
};

void walk(const json& node,
          std::string architecture,
          std::string version_of,
          std::map<std::string, Product>& out,
          std::vector<std::string>& order) {
    std::string category = str(node, "category");
    if (category == "architecture") {
        architecture = str(node, "name");
    } else if (category == "product_version") {
        version_of = str(node, "name");
    }
    if (auto p = node.find("product"); p != node.end() && p->is_object()) {
        std::string id = str(*p, "product_id");
        if (!id.empty() &&
            out.emplace(id, Product{architecture, version_of, str(*p, "name")}).second) {
            order.push_back(id);
        }
    }
    if (auto b = node.find("branches"); b != node.end() && b->is_array()) {
        for (const auto& child : *b) {
            walk(child, architecture, version_of, out, order);
        }
    }
}

/// "Linux(R570)" -> "R570" for `os` "Linux"; none for anything else.
std::optional<std::string> branch_of(const std::string& architecture, std::string_view os) {
    std::string prefix = std::string(os) + "(R";
    if (!architecture.starts_with(prefix) || architecture.back() != ')') {
        return std::nullopt;
    }
    std::string digits =
        architecture.substr(prefix.size(), architecture.size() - prefix.size() - 1);
    if (digits.empty() ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    return "R" + digits;
}

/// "All driver versions prior to 570.86.16" (NVIDIA also writes "version") -> 570.86.16; a
/// remark after the version ("582.53 Only GPUs based on ...") is not part of it.
std::optional<std::string> prior_to(const std::string& name) {
    for (std::string_view lead :
         {"All driver versions prior to ", "All driver version prior to "}) {
        if (name.starts_with(lead)) {
            std::string rest = trim(std::string_view(name).substr(lead.size()));
            auto space = rest.find_first_of(" \t");
            std::string v = rest.substr(0, space);
            if (v.empty()) {
                return std::nullopt;
            }
            return v;
        }
    }
    return std::nullopt;
}

struct Bad {
    std::string where;

    Error operator()(const std::string& what) const {
        return Error(ErrorCode::integrity, "bulletin '" + where + "': " + what)
            .with_hint("the file is not a CSAF bulletin as NVIDIA/product-security publishes "
                       "them; nothing was written");
    }
};

Result<std::vector<std::string>> ids(const Bad& bad, const json& v, const char* status) {
    std::vector<std::string> out;
    auto ps = v.find("product_status");
    if (ps == v.end() || !ps->is_object()) {
        return out;
    }
    auto list = ps->find(status);
    if (list == ps->end()) {
        return out;
    }
    if (!list->is_array()) {
        return bad("product_status." + std::string(status) + " is not a list");
    }
    for (const auto& id : *list) {
        if (!id.is_string()) {
            return bad("product_status." + std::string(status) + " holds a non-string");
        }
        out.push_back(id.get<std::string>());
    }
    return out;
}

/// One CVE as the reference writes it: cve, cvss, severity, cwe, [branches,] description.
Result<ojson> cve_of(const Bad& bad, const json& v, const std::optional<ojson>& branches) {
    std::string id = str(v, "cve");
    if (!id.starts_with("CVE-")) {
        return bad("a vulnerability without a CVE id");
    }
    const json* score = nullptr;
    if (auto scores = v.find("scores"); scores != v.end() && scores->is_array()) {
        for (const auto& s : *scores) {
            for (const char* key : {"cvss_v3", "cvss_v4"}) {
                if (auto c = s.find(key); !score && c != s.end() && c->is_object()) {
                    score = &*c;
                }
            }
        }
    }
    if (!score || !score->contains("baseScore") || !(*score)["baseScore"].is_number() ||
        str(*score, "baseSeverity").empty()) {
        return bad(id + " has no CVSS base score and severity");
    }
    ojson out;
    out["cve"] = id;
    out["cvss"] = (*score)["baseScore"].get<double>();
    out["severity"] = str(*score, "baseSeverity");
    out["cwe"] = ojson::array();
    if (auto cwe = str(v.value("cwe", json::object()), "id"); !cwe.empty()) {
        out["cwe"].push_back(cwe);
    }
    if (branches) {
        out["linux_bare_metal_branches_affected"] = *branches;
    }
    std::string summary;
    for (const auto& n : v.value("notes", json::array())) {
        if (str(n, "category") == "summary") {
            summary = trim(str(n, "text"));
            break;
        }
    }
    if (summary.empty()) {
        return bad(id + " has no description (a 'summary' note)");
    }
    out["description"] = summary;
    return out;
}

/// linux_first_fixed / windows_first_fixed: branch -> {first_fixed, by_product[, note]}.
ojson first_fixed(const std::map<std::string, Product>& products,
                  const std::vector<std::string>& order,
                  std::string_view os) {
    // branch -> product -> versions, products in the tree's order
    std::map<std::string, std::vector<std::pair<std::string, std::vector<std::string>>>> rows;
    for (const auto& id : order) {
        const auto& p = products.at(id);
        auto branch = branch_of(p.architecture, os);
        auto fixed = prior_to(p.name);
        if (!branch || !fixed || !bare_metal(p.version_of)) {
            continue;
        }
        auto& list = rows[*branch];
        auto it = std::find_if(
            list.begin(), list.end(), [&](const auto& e) { return e.first == p.version_of; });
        if (it == list.end()) {
            list.push_back({p.version_of, {}});
            it = std::prev(list.end());
        }
        if (std::find(it->second.begin(), it->second.end(), *fixed) == it->second.end()) {
            it->second.push_back(*fixed);
        }
    }
    ojson out = ojson::object();
    for (const auto& [branch, list] : rows) {
        ojson by_product = ojson::object();
        std::set<std::string> all;
        for (auto [product, versions] : list) {
            std::sort(versions.begin(), versions.end());
            by_product[product] = versions.size() == 1 ? ojson(versions.front()) : ojson(versions);
            all.insert(versions.begin(), versions.end());
        }
        ojson row;
        if (all.size() == 1) {
            row["first_fixed"] = *all.begin();
            row["by_product"] = by_product;
        } else {
            std::string differ;
            for (const auto& v : all) {
                differ += (differ.empty() ? "" : ", ") + v;
            }
            row["first_fixed"] = nullptr;
            row["by_product"] = by_product;
            row["note"] = "products differ: " + differ;
        }
        out[branch] = row;
    }
    return out;
}

std::string list_of(std::string_view title) {
    auto has = [&](std::string_view w) { return title.find(w) != std::string_view::npos; };
    if (has("GPU Display Driver")) {
        return "driver_bulletins";
    }
    if (has("CUDA Toolkit")) {
        return "cuda_toolkit_bulletins";
    }
    if (has("Container Toolkit")) {
        return "container_toolkit_bulletins";
    }
    if (has("Jetson")) {
        return "jetson_bulletins";
    }
    return {};
}

} // namespace

Result<Bulletin>
bulletin_from_csaf(std::string_view text, std::string_view where, const std::string& source) {
    Bad bad{std::string(where)};
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        return bad("not JSON");
    }
    const json document = doc.value("document", json::object());
    const json tracking = document.value("tracking", json::object());
    Bulletin out;
    out.id = str(tracking, "id");
    out.title = str(document, "title");
    if (str(document, "category") != "csaf_security_advisory" || out.id.empty() ||
        out.title.empty()) {
        return bad("no CSAF security advisory with a tracking id and a title");
    }
    if (!std::all_of(out.id.begin(), out.id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return bad("tracking id '" + out.id + "' is not NVIDIA's bulletin number");
    }
    out.list = list_of(out.title);
    if (out.list.empty()) {
        return out;
    }
    std::string published = str(tracking, "initial_release_date").substr(0, 10);
    std::string updated = str(tracking, "current_release_date").substr(0, 10);
    if (published.size() != 10 || updated.size() != 10) {
        return bad("no initial and current release dates");
    }
    std::map<std::string, Product> products;
    std::vector<std::string> order;
    walk(doc.value("product_tree", json::object()), "", "", products, order);
    auto vulns = doc.find("vulnerabilities");
    if (vulns == doc.end() || !vulns->is_array() || vulns->empty()) {
        return bad("no vulnerabilities");
    }
    auto product = [&](const std::string& id) -> Result<const Product*> {
        auto it = products.find(id);
        if (it == products.end()) {
            return bad("product '" + id + "' is not in the product tree");
        }
        return &it->second;
    };
    bool driver = out.list == "driver_bulletins";
    ojson cves = ojson::array();
    ojson other = ojson::object(); // vGPU and other platforms: the affected rows, raw

    struct Row {
        std::string product, affected, fixed_in;
        std::vector<std::string> cves;
    };

    std::vector<Row> rows;
    for (const auto& v : *vulns) {
        auto affected = CUDAENV_TRY(ids(bad, v, "known_affected"));
        auto fixed_ids = CUDAENV_TRY(ids(bad, v, "fixed"));
        std::optional<ojson> branches;
        if (driver) {
            std::set<std::string> seen;
            for (const auto& id : affected) {
                const Product* p = CUDAENV_TRY(product(id));
                if (auto b = branch_of(p->architecture, "Linux"); b && bare_metal(p->version_of)) {
                    seen.insert(*b);
                } else if (!branch_of(p->architecture, "Windows") && !p->architecture.empty()) {
                    auto& list = other[p->architecture][p->version_of];
                    if (list.is_null()) {
                        list = ojson::array();
                    }
                    if (std::find(list.begin(), list.end(), p->name) == list.end()) {
                        list.push_back(p->name);
                    }
                }
            }
            branches = ojson(std::vector<std::string>(seen.begin(), seen.end()));
        } else {
            std::vector<std::string> fixed_names;
            for (const auto& id : fixed_ids) {
                const Product* p = CUDAENV_TRY(product(id));
                if (std::find(fixed_names.begin(), fixed_names.end(), p->name) ==
                    fixed_names.end()) {
                    fixed_names.push_back(p->name);
                }
            }
            std::string fixed_in;
            for (const auto& n : fixed_names) {
                fixed_in += (fixed_in.empty() ? "" : ", ") + n;
            }
            for (const auto& id : affected) {
                const Product* p = CUDAENV_TRY(product(id));
                auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) {
                    return r.product == p->version_of && r.affected == p->name &&
                           r.fixed_in == fixed_in;
                });
                if (it == rows.end()) {
                    rows.push_back({p->version_of, p->name, fixed_in, {}});
                    it = std::prev(rows.end());
                }
                it->cves.push_back(str(v, "cve"));
            }
        }
        cves.push_back(CUDAENV_TRY(cve_of(bad, v, branches)));
    }
    std::stable_sort(cves.begin(), cves.end(), [](const ojson& a, const ojson& b) {
        return a["cve"].get<std::string>() < b["cve"].get<std::string>();
    });
    ojson& e = out.entry;
    e["bulletin"] = out.id;
    e["title"] = out.title;
    e["initial_release_date"] = published;
    e["current_release_date"] = updated;
    e["url"] = "https://nvidia.custhelp.com/app/answers/detail/a_id/" + out.id;
    e["source"] = source;
    if (driver) {
        e["cve_count"] = cves.size();
        e["cves"] = cves;
        ojson linux = first_fixed(products, order, "Linux");
        if (linux.empty()) {
            return bad("a driver bulletin with no bare-metal Linux row ('All driver versions "
                       "prior to' for GeForce, NVIDIA RTX/Quadro/NVS or Tesla)");
        }
        e["linux_first_fixed"] = linux;
        ojson summary = ojson::object();
        for (const auto& [branch, row] : linux.items()) {
            summary[branch] = row["first_fixed"];
        }
        e["linux_first_fixed_summary"] = summary;
        e["windows_first_fixed"] = first_fixed(products, order, "Windows");
        e["vgpu_and_other_platforms_raw"] = other;
    } else {
        if (rows.empty()) {
            return bad("no product is listed as affected");
        }
        for (auto& r : rows) {
            std::sort(r.cves.begin(), r.cves.end());
        }
        std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
            return std::tie(a.cves.front(), a.product, a.affected) <
                   std::tie(b.cves.front(), b.product, b.affected);
        });
        e["cves"] = cves;
        e["affected_and_fixed"] = ojson::array();
        for (const auto& r : rows) {
            e["affected_and_fixed"].push_back({{"product", r.product},
                                               {"affected", r.affected},
                                               {"fixed_in", r.fixed_in},
                                               {"cves", r.cves}});
        }
    }
    return out;
}

} // namespace cudaenv::refresh
