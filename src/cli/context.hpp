// What every command gets: the environment captured once in main, the global options, and
// the output streams. Nothing below cli/ reads getenv or writes to stdout.
#pragma once

#include "core/channel/sets.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "core/fetch/download.hpp"
#include "core/manifest/model.hpp"
#include "core/store/root.hpp"

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::cli {

struct Context {
    std::map<std::string, std::string> env;
    std::filesystem::path exe_path;
    std::filesystem::path cwd;
    std::ostream* out = nullptr;
    std::ostream* err = nullptr;

    // global options
    bool json = false;
    bool no_color = false;
    std::string manifests_dir; ///< --manifests; empty: CUDAENV_MANIFESTS, then built-in
    std::string mirror;        ///< --mirror; empty: CUDAENV_MIRROR, then NVIDIA's host
    std::string channel;       ///< a command's --channel; empty: see channel_url()

    /// `exec`'s command line, taken verbatim from argv before CLI11 parses the rest: every
    /// argument after the tool's name belongs to the tool (`--`, `--version`, `-h` included).
    std::vector<std::string> exec_command;

    /// Set by the command that ran.
    int exit_code = 0;

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

    /// The machine's config file (<sysroot>/etc/cudaenv/config), read by load_config() before
    /// any command runs; empty until then.
    SystemConfig system;

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

    /// CUDAENV_LOCK_TIMEOUT seconds (default 600).
    std::chrono::milliseconds lock_timeout() const;

    /// CUDAENV_LDCONFIG_TIMEOUT seconds an ldconfig run may take before it is killed (default 120).
    std::chrono::seconds ldconfig_timeout() const;

    /// stderr is a terminal (progress bars), and colour is allowed.
    bool stderr_tty = false;
    /// stdout is a terminal and colour is allowed (NO_COLOR unset; --no-color is checked apart).
    bool stdout_color = false;

    /// Loads the catalog once per process.
    Result<const manifest::Catalog*> catalog();

    /// A catalog holding only the framework tables: all that selection (use, version, which,
    /// global, shell) needs, and far cheaper to load than the whole catalog.
    Result<const manifest::Catalog*> frameworks_catalog();

  private:
    /// root(), worked out once per process (the shims and the prompt hook call it on every run).
    mutable std::optional<store::Root> m_root;
    std::optional<manifest::Catalog> m_catalog;
    mutable std::optional<channel::ManifestsInUse> m_manifests;
    std::optional<manifest::Catalog> m_frameworks;
};

/// Fills a Context from this process, once, at the start of main: the environment, the
/// executable's path, the working directory, stdout/stderr and whether stderr is a terminal.
void capture_process(Context& ctx, char** environ_);

/// The name a process was started under (argv[0]'s file name, or CUDAENV_FORCE_ARG0 for tests).
std::string started_as(const Context& ctx, const char* argv0);

/// Prints an error as the contract says: one line "cudaenv: error: ..." and "help:" lines on
/// stderr; with --json also a document on stdout. Returns the exit code.
int report_error(Context& ctx, const Error& error, const std::string& command);

/// Writes one JSON document (with schema_version) to stdout.
void emit_json(Context& ctx, nlohmann::json doc);

/// 1536 -> "1.5 KiB"
std::string human_size(std::uint64_t bytes);

} // namespace cudaenv::cli
