// Probe: CUDA forward compatibility through the NVIDIA Container Toolkit. On the host: whether
// the toolkit lets an image's /usr/local/cuda/compat libraries replace the host's libcuda
// (/etc/nvidia-container-runtime/config.toml; the switch and its default changed: 1.17.4 turned
// it off and added the `allow-cuda-compat-libs-from-container` feature flag, 1.17.7 replaced it by
// `[nvidia-container-runtime.modes.legacy] cuda-compat-mode`, default "ldconfig"). In a
// container: whether the image ships compat libraries and which libcuda programs load, with what
// that means on this GPU and driver (error 35 when the host keeps its older libcuda, 804 on a GPU
// forward compatibility does not support, 803 when the compat library is older than the driver).
#include "probes.hpp"

#include <map>

namespace cudaenv::doctor::checks {

namespace {

constexpr const char* k_config = "/etc/nvidia-container-runtime/config.toml";
constexpr const char* k_compat = "/usr/local/cuda/compat";
constexpr const char* k_legacy = "nvidia-container-runtime.modes.legacy";

std::string trimmed(std::string_view s) {
    auto b = s.find_first_not_of(" \t\r");
    auto e = s.find_last_not_of(" \t\r");
    return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

std::string unquoted(std::string_view v) {
    std::string s = trimmed(v);
    if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
        return s.substr(1, s.size() - 2);
    }
    return s;
}

/// A value's end: a comment outside quotes.
std::string_view before_comment(std::string_view v) {
    char quote = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (quote == 0 && v[i] == '#') {
            return v.substr(0, i);
        }
        if (v[i] == '"' || v[i] == '\'') {
            quote = quote == 0 ? v[i] : quote == v[i] ? char(0) : quote;
        }
    }
    return v;
}

} // namespace

std::map<std::string, std::string> toml_keys(std::string_view text) {
    std::map<std::string, std::string> out;
    std::string section;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = std::min(text.find('\n', pos), text.size());
        std::string line = trimmed(text.substr(pos, end - pos));
        pos = end + 1;
        if (line.starts_with("[[")) {
            section = "\x01"; // an array of tables: not a section these keys live in
        } else if (line.starts_with("[") && line.find(']') != std::string::npos) {
            section = trimmed(std::string_view(line).substr(1, line.find(']') - 1));
        } else if (auto eq = line.find('='); eq != std::string::npos && line[0] != '#') {
            std::string key = unquoted(std::string_view(line).substr(0, eq));
            std::string value = unquoted(before_comment(std::string_view(line).substr(eq + 1)));
            out.emplace(section.empty() ? key : section + "." + key, value);
        }
    }
    return out;
}

namespace {

/// The installed toolkit's version from dpkg's status (no child: `nvidia-ctk --version` is not
/// run); none on an rpm machine or without the package.
std::optional<Version> container_toolkit_version(Host& h) {
    auto status = h.files().read("/var/lib/dpkg/status", 64u << 20);
    if (!status) {
        return std::nullopt;
    }
    for (const char* pkg : {"nvidia-container-toolkit-base", "nvidia-container-toolkit"}) {
        auto at = status->find("Package: " + std::string(pkg) + "\n");
        auto end = at == std::string::npos ? at : status->find("\n\n", at);
        auto v = at == std::string::npos ? at : status->find("\nVersion: ", at);
        if (v != std::string::npos && v < end) {
            std::string text = status->substr(v + 10, status->find('\n', v + 10) - v - 10);
            if (auto parsed = Version::try_parse(text.substr(0, text.find_first_of("-~+")))) {
                return parsed;
            }
        }
    }
    return std::nullopt;
}

struct CompatSetting {
    std::optional<bool> on; ///< none: depends on the toolkit's version, which is unknown
    std::string why;
};

/// What the hook does with an image's compat libraries, as the toolkit's own code decides it
/// (cmd/nvidia-container-runtime-hook/hook_config.go: nvidiaContainerCliCUDACompatModeFlags).
CompatSetting compat_setting(const std::map<std::string, std::string>& toml,
                             const std::optional<Version>& version) {
    auto get = [&](const std::string& key) -> std::optional<std::string> {
        auto it = toml.find(key);
        return it == toml.end() ? std::nullopt : std::optional(it->second);
    };
    auto mode = get(std::string(k_legacy) + ".cuda-compat-mode");
    bool flag = get("features.allow-cuda-compat-libs-from-container") == "true";
    std::string flag_text = std::string("allow-cuda-compat-libs-from-container ") +
                            (flag ? "= true" : "not set") + " in [features]";
    if (version && *version < Version::parse("1.17.4").value()) {
        return {true, "toolkit " + version->str() + " mounts them (no switch before 1.17.4)"};
    }
    bool modes = !version || !(*version < Version::parse("1.17.7").value());
    if (modes && mode && !mode->empty()) {
        std::string m = "cuda-compat-mode = \"" + *mode + "\" in [" + k_legacy + "]";
        if (*mode == "disabled") {
            return {false, m};
        }
        if (*mode == "hook" && get("features.disable-cuda-compat-lib-hook") == "true") {
            return {false, m + " with disable-cuda-compat-lib-hook = true"};
        }
        return {true,
                m + (*mode == "hook" ? " (through nvidia-container-runtime only, not "
                                       "--gpus alone)"
                                     : "")};
    }
    if (version && modes && !mode) {
        return {true, "cuda-compat-mode not set: \"ldconfig\", the default since 1.17.7"};
    }
    if (version || flag || mode) {
        return {flag, flag_text + (version ? " (toolkit " + version->str() + ")" : "")};
    }
    return {std::nullopt,
            "neither key set: on with toolkit >= 1.17.7 (cuda-compat-mode defaults to "
            "\"ldconfig\"), off with 1.17.4 to 1.17.6 (allow-cuda-compat-libs-from-container "
            "defaults to false); the toolkit's version is unknown (not in dpkg's status)"};
}

Finding on_host(Host& h) {
    auto text = h.files().read(k_config, 1u << 20);
    if (!text) {
        return skip("not in a container, and no NVIDIA Container Toolkit configuration (" +
                    std::string(k_config) + ")");
    }
    auto version = container_toolkit_version(h);
    auto setting = compat_setting(toml_keys(*text), version);
    std::vector<std::string> details{
        std::string("configuration: ") + k_config,
        "toolkit: " + (version ? version->str() : std::string("version unknown")),
        "setting: " + setting.why};
    if (setting.on == false) {
        details.push_back("an image that needs its /usr/local/cuda/compat libcuda (a CUDA newer "
                          "than this driver) fails with CUDA_ERROR_INSUFFICIENT_DRIVER (35); to "
                          "allow it: cuda-compat-mode = \"ldconfig\" in [" +
                          std::string(k_legacy) + "] (toolkit >= 1.17.7)");
    }
    std::string state = !setting.on   ? "depend on the toolkit's version"
                        : *setting.on ? "are used"
                                      : "are not used";
    return ok("NVIDIA Container Toolkit: images' CUDA forward-compatibility libraries " + state +
                  " (" + setting.why + ")",
              details);
}

/// The compat libcuda's driver version (libcuda.so.550.54.15), and its path.
std::pair<std::optional<Version>, std::string> compat_libcuda(Host& h) {
    for (const auto& name : h.files().list(k_compat)) {
        if (name.starts_with("libcuda.so.")) {
            auto v = Version::try_parse(name.substr(11));
            if (v && v->size() >= 2) {
                return {v, std::string(k_compat) + "/" + name};
            }
        }
    }
    return {std::nullopt, {}};
}

/// The first GPU forward compatibility does not run on (common.cpp); empty when all do.
std::string consumer_gpu(Host& h) {
    auto bad = gpus_without_forward_compat(h);
    return bad.empty() ? std::string() : bad.front();
}

/// The image has compat libraries but programs load the host's libcuda.
Finding host_keeps_its_libcuda(const Version& compat,
                               const std::optional<Version>& host,
                               const std::string& consumer,
                               std::vector<std::string> details) {
    if (!host) {
        return ok("the image ships the forward-compatibility libcuda " + compat.str() +
                      "; programs do not load it, and the host's driver version is unknown",
                  details);
    }
    if (!(*host < compat)) {
        return ok("the image's forward-compatibility libcuda " + compat.str() +
                      " is not needed: programs load the host's driver " + host->str() +
                      ", which is as new",
                  details);
    }
    std::string what = "the image ships the forward-compatibility libcuda " + compat.str() +
                       " for a newer driver than the host's " + host->str() + ", but ";
    std::string fails = ": a CUDA newer than the host's driver supports fails with "
                        "CUDA_ERROR_INSUFFICIENT_DRIVER (35, \"driver too old\")";
    if (!consumer.empty()) {
        return warn(what + "a " + consumer + " cannot use it" + fails,
                    "install a host driver >= " + compat.str() +
                        " (forward compatibility runs on data-center GPUs only)",
                    details);
    }
    return warn(what +
                    "programs load the host's libcuda: the host's NVIDIA Container Toolkit "
                    "does not use the image's compat libraries" +
                    fails,
                "on the host: cuda-compat-mode = \"ldconfig\" in [" + std::string(k_legacy) +
                    "] of " + k_config +
                    " (toolkit >= 1.17.7; 1.17.4 to 1.17.6: allow-cuda-compat-libs-from-container "
                    "= true in [features]), then restart the container; or "
                    "LD_LIBRARY_PATH=/usr/local/cuda/compat in the image",
                details);
}

Finding in_container(Host& h) {
    auto [compat, compat_path] = compat_libcuda(h);
    if (!compat) {
        return ok(std::string("no CUDA forward-compatibility libcuda in the image (") + k_compat +
                  "): programs use the host's driver libraries");
    }
    auto pick = h.loader().pick("libcuda.so.1");
    bool loads_compat = !pick.path.empty() &&
                        h.files().canonical(pick.path).starts_with(h.files().canonical(k_compat));
    auto host = h.facts().driver().version();
    std::vector<std::string> details{
        "image: " + compat_path,
        "libcuda.so.1 -> " + (pick.path.empty() ? std::string("not found") : pick.path),
        "host kernel driver: " + (host ? host->str() : std::string("unknown"))};
    std::string consumer = consumer_gpu(h);
    std::string take_out = "take " + std::string(k_compat) +
                           " out of the image's loader path (LD_LIBRARY_PATH, /etc/ld.so.conf.d) "
                           "or set cuda-compat-mode = \"disabled\" on the host";
    if (loads_compat && !consumer.empty()) {
        return fail("programs load the image's forward-compatibility libcuda " + compat->str() +
                        " on a " + consumer +
                        ", which forward compatibility does not support: cuInit fails with "
                        "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)",
                    take_out + ", and install a host driver new enough for the image's CUDA",
                    details);
    }
    if (loads_compat && host && *compat < *host) {
        return fail("programs load the image's forward-compatibility libcuda " + compat->str() +
                        ", older than the host's driver " + host->str() +
                        ": CUDA fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)",
                    take_out + " (the host's driver is newer: compat is not needed)",
                    details);
    }
    if (loads_compat) {
        return ok("programs load the image's forward-compatibility libcuda " + compat->str() +
                      (host ? " over the host's driver " + host->str() : std::string()),
                  details);
    }
    return host_keeps_its_libcuda(*compat, host, consumer, details);
}

} // namespace

Finding container_compat(Host& h) {
    if (h.facts().container().empty()) {
        return on_host(h);
    }
    return in_container(h);
}

} // namespace cudaenv::doctor::checks
