// Probe: the host's CDI specs (Container Device Interface: /etc/cdi, /var/run/cdi), which
// Podman, containerd and Docker use to hand GPUs to containers. nvidia-ctk writes one naming
// every device node and driver file by path; after a driver upgrade, a GPU removed or MIG
// changed, paths it names are gone and containers started with it fail. Every path the spec names
// is checked: JSON parsed, YAML read line by line (the `path:` and `hostPath:` keys nvidia-ctk
// writes; no YAML library in the tree).
#include "../text.hpp"
#include "probes.hpp"

#include <nlohmann/json.hpp>

#include <set>

namespace cudaenv::doctor::checks {

namespace {

using detail::trim;

/// The host paths a spec names: every `path:` and `hostPath:` value (YAML) or "path"/"hostPath"
/// member (JSON), in order, each once.
std::vector<std::string> spec_paths(std::string_view text) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const auto& raw : detail::lines_of(text)) {
        std::string line = trim(raw);
        if (line.rfind("- ", 0) == 0) {
            line = trim(line.substr(2));
        }
        for (const char* key : {"hostPath", "path"}) {
            std::string k = key;
            std::size_t at = std::string::npos;
            if (line.rfind(k + ":", 0) == 0) {
                at = k.size() + 1;
            } else if (line.rfind("\"" + k + "\":", 0) == 0) {
                at = k.size() + 3;
            }
            if (at == std::string::npos) {
                continue;
            }
            std::string v = trim(line.substr(at));
            while (!v.empty() && (v.back() == ',' || v.back() == '"' || v.back() == '\'')) {
                v.pop_back();
            }
            while (!v.empty() && (v.front() == '"' || v.front() == '\'')) {
                v.erase(0, 1);
            }
            if (!v.empty() && v.front() == '/' && seen.insert(v).second) {
                out.push_back(v);
            }
            break;
        }
    }
    return out;
}

/// The same for a JSON spec, parsed: every "path" and "hostPath" string anywhere in it.
void json_paths(const nlohmann::json& j,
                std::vector<std::string>& out,
                std::set<std::string>& seen) {
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            if ((k == "path" || k == "hostPath") && v.is_string()) {
                auto p = v.get<std::string>();
                if (!p.empty() && p.front() == '/' && seen.insert(p).second) {
                    out.push_back(p);
                }
            } else {
                json_paths(v, out, seen);
            }
        }
    } else if (j.is_array()) {
        for (const auto& v : j) {
            json_paths(v, out, seen);
        }
    }
}

std::vector<std::string> paths_of(const std::string& spec, const std::string& text) {
    if (spec.ends_with(".json")) {
        std::vector<std::string> out;
        std::set<std::string> seen;
        auto j = nlohmann::json::parse(text, nullptr, false);
        if (!j.is_discarded()) {
            json_paths(j, out, seen);
            return out;
        }
    }
    return spec_paths(text);
}

} // namespace

Finding cdi(Host& h) {
    std::vector<std::string> specs;
    for (const char* dir : {"/etc/cdi", "/var/run/cdi"}) {
        for (const auto& name : h.files().list(dir)) {
            bool spec =
                name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json");
            std::string path = std::string(dir) + "/" + name;
            if (spec && (name.find("nvidia") != std::string::npos ||
                         h.files().file_contains(path, "nvidia.com/"))) {
                specs.push_back(path);
            }
        }
    }
    if (specs.empty()) {
        return skip("no NVIDIA CDI spec in /etc/cdi or /var/run/cdi (containers get the GPUs "
                    "another way, or not at all)");
    }
    std::vector<Issue> issues;
    std::vector<std::string> details;
    for (const auto& spec : specs) {
        auto text = h.files().read(spec);
        if (!text) {
            details.push_back(spec + ": cannot be read");
            continue;
        }
        auto paths = paths_of(spec, *text);
        std::vector<std::string> gone;
        for (const auto& p : paths) {
            if (!h.files().exists(p)) {
                gone.push_back(p);
            }
        }
        details.push_back(spec + ": " + std::to_string(paths.size()) + " paths, " +
                          std::to_string(gone.size()) + " gone");
        if (!gone.empty()) {
            std::string shown = join(std::vector<std::string>(
                gone.begin(),
                gone.begin() + static_cast<long>(std::min<std::size_t>(gone.size(), 3))));
            issues.push_back(
                {Status::fail,
                 "the CDI spec " + spec + " is stale: " + std::to_string(gone.size()) + " path" +
                     (gone.size() == 1 ? "" : "s") + " it names " +
                     (gone.size() == 1 ? "is" : "are") + " gone (" + shown +
                     (gone.size() > 3 ? ", ..." : "") +
                     "): containers started with it fail (a driver upgrade, a GPU or MIG change "
                     "since it was made)",
                 "regenerate it: sudo nvidia-ctk cdi generate --output=" + spec +
                     " (and after every driver upgrade or MIG change; the NVIDIA Container "
                     "Toolkit's nvidia-cdi-refresh service does it on boot)"});
        }
    }
    return verdict(std::move(issues),
                   ok(std::to_string(specs.size()) + " NVIDIA CDI spec" +
                          (specs.size() == 1 ? "" : "s") + ": every path " +
                          (specs.size() == 1 ? "it names" : "they name") + " is there",
                      details));
}

} // namespace cudaenv::doctor::checks
