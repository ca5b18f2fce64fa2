// The operations layer's view of one run: the environment captured once by the front end, the
// choices the user made (a manifests folder, a mirror, a channel) and the machine's config, and
// what follows from them -- the root with its upstream, the download base and policy, the
// manifests in use and their catalog. Precedence is decided here, once, for every command and
// the shim (docs/design.md, "Files and environment"); the CLI only fills the fields and prints.
#pragma once

#include "core/channel/sets.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "core/fetch/download.hpp"
#include "core/manifest/model.hpp"
#include "core/store/root.hpp"
#include "core/sys/platform.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cudaenv::ops {

struct Session {
    std::map<std::string, std::string> env;
    std::filesystem::path exe_path;
    std::filesystem::path cwd;

    std::string manifests_dir; ///< --manifests; empty: CUDAENV_MANIFESTS, then the sets in use
    std::string mirror;        ///< --mirror; empty: CUDAENV_MIRROR, then the config, then NVIDIA
    std::string channel;       ///< a command's --channel; empty: see channel_url()
    std::string platform;      ///< a command's --platform; empty: see forced_platform()

    /// The machine's config file (<sysroot>/etc/cudaenv/config), read by load_config() before
    /// any command runs; empty until then.
    SystemConfig system;

    std::optional<std::string> getenv(const std::string& name) const;

    /// Every numeric variable that is set parses (core/envnum.hpp): else a usage error naming it.
    Status check_environment() const;
    /// A numeric variable's value (in its unit; thousandths where it takes decimals), if set.
    std::optional<std::uint64_t> env_number_value(std::string_view name) const;

    /// The manifests in use (channel/sets.hpp): --manifests, else CUDAENV_MANIFESTS, exactly;
    /// otherwise the newest of the floor (manifests_floor()) and the sets `cudaenv update`
    /// installed in this root and the machine-wide root. Computed once.
    const channel::ManifestsInUse& manifests_in_use() const;

    std::filesystem::path manifests_path() const { return manifests_in_use().dir; }

    /// The config's `manifests`, else the built-in manifests next to the binary
    /// (<prefix>/share/cudaenv/manifests), else the source tree's (a build-tree binary).
    std::filesystem::path manifests_floor() const;
    /// The update channel: `channel` (update --channel, a mirror --channel), else
    /// CUDAENV_CHANNEL, else the config's `channel`, else the mirror's copy
    /// (<mirror>/cudaenv-channel) when a mirror is configured, else the default channel.
    std::string channel_url() const;

    /// The small shim executable (cudaenv-shim): where `cmake --install` puts it
    /// (<prefix>/libexec/cudaenv/), else next to this one (a build tree), else this one.
    std::filesystem::path shim_exe() const;

    /// Reads the machine's config file; a malformed one is a usage error (exit 2).
    Status load_config();

    /// CUDAENV_SYSROOT, else "/".
    std::filesystem::path sysroot() const;

    /// The machine-wide root: the config's `root` (default /opt/cudaenv), under the sysroot.
    std::filesystem::path system_root() const;

    /// CUDAENV_ROOT; else, for root (uid 0), the machine-wide root; else ~/.cudaenv. A root other
    /// than the machine-wide one has it as a read-only upstream layer when it exists.
    store::Root root() const;

    /// The download base: --mirror, else CUDAENV_MIRROR, else the config's `mirror`, else
    /// NVIDIA's host (no trailing '/').
    std::string base_url() const;

    /// Download behaviour, with the tuning variables (CUDAENV_CONNECT_TIMEOUT,
    /// CUDAENV_STALL_TIMEOUT, CUDAENV_RETRIES, CUDAENV_RETRY_BACKOFF_MS, CUDAENV_CACERT).
    /// Plain http only when the user configured an http mirror.
    fetch::Policy download_policy() const;

    /// CUDAENV_CHANNEL_TIMEOUT seconds (default 120): everything one update fetches, and a
    /// mirror's recompressed index.
    std::chrono::seconds channel_timeout() const;

    /// CUDAENV_LOCK_TIMEOUT seconds (default 600).
    std::chrono::milliseconds lock_timeout() const;

    /// CUDAENV_LDCONFIG_TIMEOUT seconds an ldconfig run may take before it is killed (default 120).
    std::chrono::seconds ldconfig_timeout() const;

    /// The machine as NVIDIA's archives see it, read once: with a CUDAENV_SYSROOT, the machine
    /// that sysroot's own files describe (a Jetson's nv_tegra_release, an arm64 driver...), else
    /// this one (sys::read_sysroot_machine) -- what the doctor diagnoses is what install serves.
    const sys::HostMachine& host() const;

    /// The platform the user forces for this run: --platform, else CUDAENV_PLATFORM, else the
    /// config's `platform`; empty when the host decides per release (cross-provisioning, a
    /// mirror built on x86 for Arm hosts). Checked by check_environment().
    std::string forced_platform() const;

    /// The platform this run takes for a CUDA release: forced_platform(), else the host's
    /// choice for that release (sys::platform_for), with its refusal when there is none.
    sys::PlatformChoice platform_for(const Version& cuda) const;

    /// Loads the catalog once per process.
    Result<const manifest::Catalog*> catalog();

    /// A catalog holding only the framework tables: all that selection (use, version, which,
    /// global, shell) needs, and far cheaper to load than the whole catalog.
    Result<const manifest::Catalog*> frameworks_catalog();

    /// The uid the root is chosen for (geteuid(); a unit test sets it).
    std::optional<unsigned> euid;

    /// Judges a channel set before manifests_in_use() takes it (ops/trust.hpp: its signers
    /// against the keys trusted now). The shim sets none: it links no crypto, and only maps a
    /// framework pin to a version already installed.
    channel::SetCheck set_check;

  private:
    /// root(), worked out once per process (the shims and the prompt hook call it on every run).
    mutable std::optional<store::Root> m_root;
    mutable std::optional<sys::HostMachine> m_host;
    std::optional<manifest::Catalog> m_catalog;
    mutable std::optional<channel::ManifestsInUse> m_manifests;
    std::optional<manifest::Catalog> m_frameworks;
};

} // namespace cudaenv::ops
