// The install operation: what `cudaenv install` decides between parsing its arguments and
// printing -- which SPECs (given, the environment's match, or the project's request), every
// SPEC resolved and every --archive file matched before anything is written, a local archive
// staged where the download would have put it, each version installed, the shims rehashed and,
// for --match, the project pinned. The front end tells the user what the observer hears.
#pragma once

#include "core/activate/project.hpp"
#include "core/install/install.hpp"
#include "core/ops/resolve_spec.hpp"
#include "core/ops/session.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudaenv::ops {

struct InstallRequest {
    std::vector<std::string> specs; ///< empty: what the project asks for
    SpecOptions spec_options;
    unsigned jobs = 4;
    bool dry_run = false;
    bool repair = false; ///< re-hash an installed version and repair what changed (install.hpp)
    bool allow_unpinned = false;
    bool match = false;                ///< what the active Python environment's framework needs
    std::vector<std::string> archives; ///< --archive FILE: artifacts known only by their hash
};

/// What an install tells as it goes. Called on the calling thread, except event(), which the
/// pipeline's workers call (install::Observer: it must be thread-safe).
class InstallObserver {
  public:
    virtual ~InstallObserver() = default;
    /// What was chosen for the user ("installing tf-2.13 (from /p/.cuda-version)").
    virtual void note(const std::string& text) = 0;
    /// Something the user must hear though nothing failed (an index trusted without a pin, shims
    /// that could not be rehashed).
    virtual void warning(const std::string& text) = 0;
    /// What this machine's GPUs and driver say about the release about to be installed.
    virtual void machine_warning(const std::string& text) = 0;
    /// One version's install starts; then events; then finished() with its outcome, or with
    /// null when it failed (the error is then install()'s).
    virtual void starting(const Resolution& res) = 0;
    virtual void event(const install::Event& e) = 0;
    virtual void finished(const install::Outcome* outcome) = 0;
};

struct InstallReport {
    std::vector<install::Outcome> outcomes; ///< one per SPEC, in order
    bool changed = false;
    /// install --match: what was found and the pin written (not with --dry-run).
    std::optional<activate::EnvironmentMatch> match;
    std::optional<activate::PinWrite> pin;
};

/// The install options the session's environment tunes (CUDAENV_EXTRACT_MAX_BYTES,
/// CUDAENV_EXTRACT_MAX_ENTRIES, the download policy, the lock timeout), with the dlopen check
/// run by this executable in a child.
install::Options install_options(const Session& session, unsigned jobs, bool dry_run);

/// The shims regenerated after versions came or went; a failure is only a warning (the versions
/// are in place; `cudaenv rehash` retries).
void rehash_after_change(Session& session, const Warn& warn);

/// Installs what `request` asks for. Nothing is written before every SPEC resolved and every
/// --archive matched one of the archives (else usage, exit 2).
Result<InstallReport>
install(Session& session, const InstallRequest& request, InstallObserver& observer);

} // namespace cudaenv::ops
