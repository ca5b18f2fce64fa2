#include "advisory_subjects.hpp"

#include "../fs.hpp"
#include "../install/install.hpp"
#include "../manifest/codec.hpp"
#include "../manifest/gpu_support.hpp"
#include "../store/records.hpp"
#include "../store/root.hpp"
#include "host.hpp"
#include "pci_chips.hpp"
#include "probes/probes.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace cudaenv::doctor {

using manifest::AdvisoryProduct;

namespace {

std::string_view line_value(std::string_view line, std::string_view key) {
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':') {
        auto v = line.substr(key.size() + 1);
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) {
            v.remove_prefix(1);
        }
        while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) {
            v.remove_suffix(1);
        }
        return v;
    }
    return {};
}

/// "1:1.17.8-1ubuntu1" -> 1.17.8: the epoch and the Debian revision off.
std::optional<Version> upstream_version(std::string_view v) {
    if (auto colon = v.find(':'); colon != std::string_view::npos) {
        v.remove_prefix(colon + 1);
    }
    if (auto dash = v.rfind('-'); dash != std::string_view::npos) {
        v = v.substr(0, dash);
    }
    // "1.19.0~rc.7" (a pre-release): the release it comes before
    if (auto tilde = v.find('~'); tilde != std::string_view::npos) {
        v = v.substr(0, tilde);
    }
    return Version::try_parse(v);
}

std::optional<Version> cublas_of_record(const store::VersionRecord& r) {
    for (const auto& c : r.components) {
        if (c.component == "libcublas") {
            return Version::try_parse(c.version);
        }
    }
    return std::nullopt;
}

std::vector<unsigned> gpu_ccs(Host& h) {
    std::vector<unsigned> out;
    for (const auto& g : h.facts().pci_gpus()) {
        if (auto chip = chip_of_device(g.device_id)) {
            if (std::find(out.begin(), out.end(), chip->compute_capability) == out.end()) {
                out.push_back(chip->compute_capability);
            }
        }
    }
    return out;
}

std::optional<Version> container_toolkit(Host& h) {
    if (auto status = h.files().read("/var/lib/dpkg/status", 64u << 20)) {
        // the CLI moved to -base in 1.11; either says which release is installed
        for (std::string_view pkg : {"nvidia-container-toolkit", "nvidia-container-toolkit-base"}) {
            if (auto v = dpkg_installed_version(*status, pkg)) {
                return v;
            }
        }
    }
    if (auto ctk = h.files().which("nvidia-ctk")) {
        if (auto ran = h.files().run({*ctk, "--version"}); ran && ran->status == 0) {
            return parse_nvidia_ctk_version(ran->out);
        }
    }
    return std::nullopt;
}

/// The release's own libcublas, to tell a patch from the toolkit's.
bool is_patched(Host& h, const store::VersionRecord& r, const Version& cublas) {
    auto cuda = Version::try_parse(r.cuda);
    if (!cuda) {
        return false;
    }
    const auto* release = h.manifests().cuda_release_for(*cuda);
    const auto* own = release ? release->component("libcublas") : nullptr;
    return own && Version::compare_numeric(own->version, cublas) != 0;
}

advisory::Subject subject(AdvisoryProduct product, const Version& v, std::string where) {
    advisory::Subject s;
    s.product = product;
    s.version = v;
    s.where = std::move(where);
    return s;
}

} // namespace

std::optional<Version> dpkg_installed_version(std::string_view status, std::string_view package) {
    // stanzas are separated by blank lines; fields are "Name: value" at the start of a line
    std::size_t pos = 0;
    while (pos < status.size()) {
        auto end = status.find("\n\n", pos);
        auto stanza =
            status.substr(pos, end == std::string_view::npos ? status.size() - pos : end - pos);
        pos = end == std::string_view::npos ? status.size() : end + 2;
        std::string_view name, state, version;
        std::size_t at = 0;
        while (at < stanza.size()) {
            auto nl = stanza.find('\n', at);
            auto line =
                stanza.substr(at, nl == std::string_view::npos ? stanza.size() - at : nl - at);
            at = nl == std::string_view::npos ? stanza.size() : nl + 1;
            if (auto v = line_value(line, "Package"); !v.empty()) {
                name = v;
            } else if (auto s = line_value(line, "Status"); !s.empty()) {
                state = s;
            } else if (auto ver = line_value(line, "Version"); !ver.empty()) {
                version = ver;
            }
        }
        if (name == package && state.ends_with(" installed") &&
            state.find("not-installed") == std::string_view::npos) {
            return upstream_version(version);
        }
    }
    return std::nullopt;
}

std::optional<Version> parse_nvidia_ctk_version(std::string_view out) {
    constexpr std::string_view key = "version ";
    auto at = out.find("Container Toolkit CLI version ");
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    auto rest = out.substr(out.find(key, at) + key.size());
    auto end = rest.find_first_of(" \n\r");
    return upstream_version(rest.substr(0, end));
}

std::optional<Version> toolkit_cublas(Host& h, const std::string& prefix) {
    std::string base = prefix.ends_with('/') ? prefix : prefix + "/";
    if (auto text = h.files().read(base + "version.json")) {
        auto doc = nlohmann::json::parse(*text, nullptr, false);
        if (doc.is_object() && doc.contains("libcublas") && doc["libcublas"].is_object()) {
            if (auto v = Version::try_parse(doc["libcublas"].value("version", ""))) {
                return v;
            }
        }
    }
    // a toolkit put together from NVIDIA's pip wheels keeps their dist-info folders
    constexpr std::string_view wheel = "nvidia_cublas-";
    for (const auto& name : h.files().list(base + "dist-info")) {
        if (name.starts_with(wheel) && name.ends_with(".dist-info")) {
            auto v = name.substr(wheel.size(), name.size() - wheel.size() - 10);
            if (auto parsed = Version::try_parse(v)) {
                return parsed;
            }
        }
    }
    for (std::string dir : {"lib64", "lib"}) {
        for (const auto& name : h.files().list(base + dir)) {
            constexpr std::string_view so = "libcublas.so.";
            if (name.starts_with(so)) {
                auto v = Version::try_parse(std::string_view(name).substr(so.size()));
                if (v && v->size() >= 3) {
                    return v;
                }
            }
        }
    }
    return std::nullopt;
}

std::vector<advisory::Subject> advisory_subjects(Host& h, const AdvisoryScope& scope) {
    std::vector<advisory::Subject> out;
    auto ccs = gpu_ccs(h);
    if (scope.machine) {
        if (auto v = h.facts().driver().version()) {
            auto s = subject(AdvisoryProduct::driver, *v, "this machine");
            s.datacenter =
                !h.facts().pci_gpus().empty() && checks::gpus_without_forward_compat(h).empty();
            out.push_back(std::move(s));
        }
        if (auto v = container_toolkit(h)) {
            out.push_back(subject(AdvisoryProduct::container_toolkit, *v, "this machine"));
        }
        const auto& m = h.files().machine();
        if (m.jetson && !m.jetson->l4t.empty()) {
            if (auto v = Version::try_parse(m.jetson->l4t)) {
                out.push_back(subject(AdvisoryProduct::jetson_l4t, *v, "this machine"));
            }
        }
    }
    const auto& tk = h.facts().toolkit();
    if (scope.selected && !tk.prefix.empty() && !tk.cudaenv_version && tk.cuda) {
        std::string where = "the selected toolkit " + tk.prefix;
        // one that says only its major.minor (nvcc's banner) counts where all of that minor is
        // affected (advisory::match)
        out.push_back(subject(AdvisoryProduct::toolkit, *tk.cuda, where));
        if (auto cublas = toolkit_cublas(h, tk.prefix)) {
            auto s = subject(AdvisoryProduct::cublas, *cublas, where);
            s.gpu_ccs = ccs;
            s.cuda = tk.cuda->str();
            out.push_back(std::move(s));
        }
    }
    if (scope.installed) {
        for (const auto& iv : install::list_installed(h.config().root)) {
            if (!iv.shadowed_by.empty()) {
                continue;
            }
            std::string where = "version " + iv.name;
            if (tk.cudaenv_version && *tk.cudaenv_version == iv.name) {
                where += " (selected)";
            }
            if (auto cuda = Version::try_parse(iv.cuda)) {
                auto s = subject(AdvisoryProduct::toolkit, *cuda, where);
                s.version_name = iv.name;
                out.push_back(std::move(s));
            }
            auto text = read_text_file(iv.prefix / store::k_version_record);
            auto record = text ? store::decode_version_record(*text, iv.prefix.string())
                               : Result<store::VersionRecord>(std::move(text).error());
            if (!record) {
                continue;
            }
            if (auto cublas = cublas_of_record(*record)) {
                auto s = subject(AdvisoryProduct::cublas, *cublas, where);
                s.gpu_ccs = ccs;
                s.cuda = record->cuda;
                s.patched = is_patched(h, *record, *cublas);
                s.version_name = iv.name;
                out.push_back(std::move(s));
            }
        }
    }
    return out;
}

} // namespace cudaenv::doctor
