#include "gpu_support.hpp"

#include "../fs.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace cudaenv::manifest {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string normalize_pci_id(std::string_view id) {
    if (id.size() == 6 && id[0] == '0' && (id[1] == 'x' || id[1] == 'X')) {
        id.remove_prefix(2);
    }
    if (id.size() != 4) {
        return {};
    }
    std::string out;
    for (char c : id) {
        if (!std::isxdigit(static_cast<unsigned char>(c))) {
            return {};
        }
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

const GpuListing*
GpuSupport::find(std::string_view device, std::string_view subsystem, bool* exact) const {
    const GpuListing* by_device = nullptr;
    for (const auto& l : listings) {
        if (l.device != device) {
            continue;
        }
        if (!subsystem.empty() && l.subsystem == subsystem) {
            if (exact) {
                *exact = true;
            }
            return &l;
        }
        if (l.subsystem.empty()) {
            by_device = &l;
        }
    }
    if (exact) {
        *exact = false;
    }
    return by_device;
}

std::set<unsigned> GpuSupport::known_branches() const {
    std::set<unsigned> out;
    for (const auto& l : listings) {
        for (const auto& [branch, first] : l.first_per_branch) {
            out.insert(branch);
        }
    }
    return out;
}

const ArchitectureSupport* GpuSupport::architecture_of(unsigned cc) const {
    for (const auto& a : architectures) {
        if (std::find(a.compute_capabilities.begin(), a.compute_capabilities.end(), cc) !=
            a.compute_capabilities.end()) {
            return &a;
        }
    }
    return nullptr;
}

namespace {

struct Fail {
    std::string origin;

    Error operator()(const std::string& what) const {
        return Error(ErrorCode::integrity, printable("manifest '" + origin + "': " + what));
    }
};

std::string text(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<Version> driver(const Fail& fail, const json& v, const std::string& where) {
    auto parsed = v.is_string() ? Version::try_parse(v.get<std::string>()) : std::nullopt;
    if (!parsed || parsed->major() < 100) {
        return fail(where + ": '" + v.dump() + "' is not a driver version");
    }
    return *parsed;
}

bool is_subsystem(std::string_view s) {
    return s.size() == 9 && s[4] == ':' && normalize_pci_id(s.substr(0, 4)) == s.substr(0, 4) &&
           normalize_pci_id(s.substr(5)) == s.substr(5);
}

} // namespace

Result<GpuSupport> parse_gpu_support(const json& doc, std::string_view origin) {
    Fail fail{std::string(origin)};
    if (!doc.is_object() || text(doc, "schema") != k_schema || text(doc, "kind") != "gpu_support") {
        return fail("not a '" + std::string(k_schema) + "' gpu_support manifest");
    }
    GpuSupport s;
    s.listings_source = text(doc, "listings_source");
    s.forward_compat_source = text(doc, "forward_compat_source");
    s.architectures_source = text(doc, "architectures_source");
    s.branches_source = text(doc, "branches_source");
    if (auto it = doc.find("newest_driver"); it != doc.end()) {
        s.newest_driver = CUDAENV_TRY(driver(fail, *it, "newest_driver"));
    }
    auto listings = doc.find("listings");
    if (listings == doc.end() || !listings->is_array()) {
        return fail("'listings' must be an array");
    }
    for (const auto& l : *listings) {
        if (!l.is_object()) {
            return fail("each listing must be an object");
        }
        GpuListing g;
        g.device = text(l, "device");
        std::string where = "listing " + g.device;
        if (normalize_pci_id(g.device) != g.device || g.device.empty()) {
            return fail(where + ": 'device' must be four lower-case hex digits");
        }
        g.subsystem = text(l, "subsystem");
        if (!g.subsystem.empty() && !is_subsystem(g.subsystem)) {
            return fail(where + ": 'subsystem' must be vvvv:dddd (lower-case hex)");
        }
        g.name = text(l, "name");
        auto branches = l.find("first_per_branch");
        if (branches == l.end() || !branches->is_array() || branches->empty()) {
            return fail(where + ": 'first_per_branch' must be a non-empty array");
        }
        for (const auto& b : *branches) {
            auto v = CUDAENV_TRY(driver(fail, b, where));
            g.first_per_branch[v.major()] = v;
        }
        if (auto it = l.find("off_mainline"); it != l.end()) {
            g.off_mainline = CUDAENV_TRY(driver(fail, *it, where + " off_mainline"));
        }
        auto last = l.find("last_listed");
        if (last == l.end()) {
            return fail(where + ": no 'last_listed'");
        }
        g.last_listed = CUDAENV_TRY(driver(fail, *last, where + " last_listed"));
        g.listed_in_newest = l.value("listed_in_newest", true);
        if (auto it = l.find("forward_compat"); it != l.end()) {
            if (!it->is_boolean()) {
                return fail(where + ": 'forward_compat' must be true or false");
            }
            g.forward_compat = it->get<bool>();
        }
        s.listings.push_back(std::move(g));
    }
    for (const auto& a : doc.value("architectures", json::array())) {
        ArchitectureSupport arch;
        arch.architecture = text(a, "architecture");
        for (const auto& cc : a.value("compute_capabilities", json::array())) {
            auto v = cc.is_string() ? Version::try_parse(cc.get<std::string>()) : std::nullopt;
            if (!v || v->size() != 2) {
                return fail("architecture " + arch.architecture + ": bad compute capability");
            }
            arch.compute_capabilities.push_back(v->major() * 10 + v->minor());
        }
        if (auto it = a.find("last_branch"); it != a.end()) {
            if (!it->is_number_unsigned()) {
                return fail("architecture " + arch.architecture + ": 'last_branch' is no number");
            }
            arch.last_branch = it->get<unsigned>();
        }
        arch.last_toolkit = text(a, "last_toolkit");
        s.architectures.push_back(std::move(arch));
    }
    for (const auto& b : doc.value("branches", json::array())) {
        DriverBranchLife life;
        if (!b.contains("branch") || !b["branch"].is_number_unsigned()) {
            return fail("each branch needs a 'branch' number");
        }
        life.branch = b["branch"].get<unsigned>();
        life.kind = text(b, "kind");
        life.end_of_life = text(b, "end_of_life");
        s.branches.push_back(std::move(life));
    }
    std::sort(s.branches.begin(), s.branches.end(), [](const auto& a, const auto& b) {
        return a.branch < b.branch;
    });
    return s;
}

Result<GpuSupport> load_gpu_support(const std::filesystem::path& dir) {
    auto file = dir / "gpu-support.json";
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        return GpuSupport{};
    }
    auto text = CUDAENV_TRY(read_text_file(file));
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded()) {
        return Error(ErrorCode::integrity, "manifest '" + file.string() + "': not JSON");
    }
    return parse_gpu_support(doc, file.string());
}

ojson gpu_support_to_json(const GpuSupport& s) {
    ojson j{{"schema", std::string(k_schema)}, {"kind", "gpu_support"}};
    j["listings_source"] = s.listings_source;
    if (s.newest_driver) {
        j["newest_driver"] = s.newest_driver->str();
    }
    ojson listings = ojson::array();
    for (const auto& g : s.listings) {
        ojson l{{"device", g.device}};
        if (!g.subsystem.empty()) {
            l["subsystem"] = g.subsystem;
        }
        l["name"] = g.name;
        ojson branches = ojson::array();
        for (const auto& [branch, first] : g.first_per_branch) {
            branches.push_back(first.str());
        }
        l["first_per_branch"] = branches;
        if (g.off_mainline) {
            l["off_mainline"] = g.off_mainline->str();
        }
        l["last_listed"] = g.last_listed.str();
        if (!g.listed_in_newest) {
            l["listed_in_newest"] = false;
        }
        if (g.forward_compat) {
            l["forward_compat"] = true;
        }
        listings.push_back(std::move(l));
    }
    j["listings"] = listings;
    if (!s.forward_compat_source.empty()) {
        j["forward_compat_source"] = s.forward_compat_source;
    }
    j["architectures_source"] = s.architectures_source;
    ojson archs = ojson::array();
    for (const auto& a : s.architectures) {
        ojson ccs = ojson::array();
        for (unsigned cc : a.compute_capabilities) {
            ccs.push_back(std::to_string(cc / 10) + "." + std::to_string(cc % 10));
        }
        ojson one{{"architecture", a.architecture}, {"compute_capabilities", ccs}};
        if (a.last_branch) {
            one["last_branch"] = *a.last_branch;
        }
        one["last_toolkit"] = a.last_toolkit;
        archs.push_back(std::move(one));
    }
    j["architectures"] = archs;
    j["branches_source"] = s.branches_source;
    ojson branches = ojson::array();
    for (const auto& b : s.branches) {
        branches.push_back(
            ojson{{"branch", b.branch}, {"kind", b.kind}, {"end_of_life", b.end_of_life}});
    }
    j["branches"] = branches;
    return j;
}

} // namespace cudaenv::manifest
