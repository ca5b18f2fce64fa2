// The machine's configuration file, <sysroot>/etc/cudaenv/config (docs/packaging.md): where the
// machine-wide root lives, which mirror to download from, and a site's own manifests. One
// `key = value` per line; `#` starts a comment. Written by an administrator or the fleet role,
// never by the package (so upgrades never ask about it).
//
//   root = /opt/cudaenv                  # the machine-wide root (default /opt/cudaenv)
//   mirror = http://mirror.example/cuda  # instead of NVIDIA's host
//   channel = https://channel.example/stable  # where `cudaenv update` fetches manifests bundles
//   manifests = /srv/cudaenv/manifests   # instead of the built-in manifests (the floor)
//   platform = linux-sbsa                # NVIDIA's platform to take, instead of this machine's
//   acknowledge = NVIDIA-5614 why        # an advisory this machine accepts, with the reason
//                                        # (one line each; docs/advisories.md)
#pragma once

#include "error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv {

inline constexpr const char* k_system_config = "etc/cudaenv/config";
inline constexpr const char* k_default_system_root = "/opt/cudaenv";

struct SystemConfig {
    std::filesystem::path file; ///< where it was read from (it may not exist)
    bool present = false;
    std::optional<std::string> root;      ///< absolute, as the machine sees it
    std::optional<std::string> mirror;    ///< http(s) URL
    std::optional<std::string> channel;   ///< http(s) URL of the update channel's folder
    std::optional<std::string> manifests; ///< absolute, as the machine sees it
    std::optional<std::string> platform;  ///< linux-x86_64, linux-sbsa or linux-aarch64

    /// Advisories acknowledged on this machine: reported with the reason, not counted.
    struct Acknowledged {
        std::string id;
        std::string reason;
        std::size_t line = 0;
    };

    std::vector<Acknowledged> acknowledged;
};

/// Parses a config file's text; `file` names it in errors ("<file>:<line>: ..."). Unknown keys,
/// lines without `=`, relative paths and non-http(s) mirrors are usage errors (exit 2).
Result<SystemConfig> parse_system_config(std::string_view text, const std::filesystem::path& file);

/// Reads <sysroot>/etc/cudaenv/config; a missing file is an empty configuration.
Result<SystemConfig> load_system_config(const std::filesystem::path& sysroot);

/// `inside` (absolute, as the machine sees it) as a path on this host: under the sysroot.
std::filesystem::path under_sysroot(const std::filesystem::path& sysroot, std::string_view inside);

} // namespace cudaenv
