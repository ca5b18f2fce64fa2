// The machine's selection (docs/design.md §3.2, docs/reliability.md R5, R7, R8):
// <sysroot>/usr/local/cuda repointed by a temporary symlink renamed over it, exactly one file of
// ours in <sysroot>/etc/ld.so.conf.d, ldconfig run under the lock and its cache checked, and a
// journal (state.json) that keeps the previous state for `rollback` and for finishing a switch that
// was interrupted. Every step that fails after the link moved puts the link and the conf file back.
#pragma once

#include "../error.hpp"
#include "../store/root.hpp"
#include "../sys/process.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::activate {

inline constexpr const char* k_ld_conf_name = "000-cudaenv.conf";

struct Machine {
    std::filesystem::path sysroot = "/";
    std::filesystem::path ldconfig; ///< absolute; empty: /sbin/ldconfig or /usr/sbin/ldconfig
    /// An ldconfig run longer than this is killed and the switch rolled back.
    std::chrono::seconds ldconfig_timeout{120};
    /// How ldconfig is run; null: for real (sys::real_processes()).
    const sys::ProcessRunner* processes = nullptr;

    std::filesystem::path link() const { return sysroot / "usr/local/cuda"; }

    std::filesystem::path conf() const { return sysroot / "etc/ld.so.conf.d" / k_ld_conf_name; }

    /// A path inside the sysroot as the machine sees it ("/opt/x" for <sysroot>/opt/x).
    std::string inside(const std::filesystem::path& p) const;
};

/// Resolves `inside` (a path as the machine sees it) to a real path under the sysroot, following
/// symlinks the way the machine would: an absolute target restarts at the sysroot. Empty when
/// the links loop (nothing is there).
std::filesystem::path resolve_in_sysroot(const std::filesystem::path& sysroot,
                                         const std::filesystem::path& inside);

/// What is at <sysroot>/usr/local/cuda.
struct LinkState {
    enum class Kind { absent, ours, foreign_link, alternatives, directory, other };
    Kind kind = Kind::absent;
    std::string target; ///< for links
    std::string describe() const;
};

LinkState read_link_state(const Machine& m, const store::Root& root);

struct SwitchOptions {
    bool force = false;
    bool dry_run = false;
    std::chrono::milliseconds lock_timeout{std::chrono::seconds(600)};
};

struct SwitchOutcome {
    bool changed = false;
    std::string version;
    std::string previous; ///< previous global ("system" when none)
    bool ldconfig_ran = false;
    /// Other ld.so.conf.d files naming CUDA library folders (docs/reliability.md L3): their
    /// libraries may shadow the switched version's.
    std::vector<std::string> warnings;
    /// `global system`: what was put back at the link, as cudaenv found it before it first
    /// replaced it (a link's target, or the directory's place while it was moved aside).
    std::string restored;
};

/// Makes `version` (installed) the machine's CUDA. conflict (7) for a link cudaenv does not own
/// without --force; filesystem (6) when ldconfig fails or its cache does not resolve libcudart
/// (and libcudnn) into the version, after putting everything back.
Result<SwitchOutcome> switch_global(const store::Root& root,
                                    const Machine& m,
                                    const std::string& version,
                                    const SwitchOptions& o);

/// Back to no cudaenv version (`global system`, `global --unset`): removes our link and our
/// ld.so.conf.d file, runs ldconfig and forgets the global choice, journalled like a switch (so
/// `rollback` brings the version back). A link cudaenv does not own is left as it is.
Result<SwitchOutcome>
unset_global(const store::Root& root, const Machine& m, const SwitchOptions& o);

/// Returns the machine to the state before the last switch (link, conf file, global choice).
Result<SwitchOutcome> rollback(const store::Root& root, const Machine& m, const SwitchOptions& o);

} // namespace cudaenv::activate
