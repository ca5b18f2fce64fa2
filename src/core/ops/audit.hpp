// `cudaenv audit`: the advisories (docs/advisories.md) that apply to this machine -- its driver,
// container toolkit, Jetson Linux -- and to every installed version (its CUDA and its cuBLAS),
// each with the version that fixes it, those the machine's config acknowledges apart. The same
// subjects and the same matching as the doctor's advisories probe (doctor/advisory_subjects).
#pragma once

#include "core/advisory/match.hpp"
#include "core/manifest/advisories.hpp"
#include "core/ops/session.hpp"
#include "core/resolve/resolve.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudaenv::ops {

struct AuditRequest {
    /// The lowest severity that fails the audit (exit 1); none: any advisory that applies.
    std::optional<manifest::Severity> fail_on;
};

struct Audit {
    manifest::Advisories advisories; ///< what was checked against (the manifests in use)
    std::vector<advisory::Subject> subjects;
    std::vector<advisory::Hit> hits; ///< point into `advisories`
    /// Driver branches the later bulletins stopped listing: "R550: not listed by NVIDIA-5670, ..."
    std::vector<std::string> notes;
    bool failed = false; ///< an advisory at or above fail_on applies and is not acknowledged

    Audit() = default;
    Audit(const Audit&) = delete; // hits point into advisories
    Audit& operator=(const Audit&) = delete;
    Audit(Audit&&) = default; // a vector's move keeps its elements where they are
    Audit& operator=(Audit&&) = default;
};

/// Errors: integrity (the advisories manifest in use does not load), usage (a sysroot that is
/// not a directory).
Result<Audit> audit(Session& session, const AuditRequest& request);

/// An advisory that applies to what `resolve`/`install` pick, said in one line.
struct AdvisoryNote {
    std::string id;
    std::string severity; ///< none, low, medium, high, critical
    bool critical = false;
    std::string text; ///< "NVIDIA-5755 (high, CVSS 7.3): CUDA 12.4.1 is affected; fixed in 13.1"
    std::string fix;  ///< the step that fixes it
    std::string acknowledged; ///< the config's reason; empty: counts
};

/// The advisories that apply to a resolution's CUDA release and to the cuBLAS it installs (the
/// patch's, else the release's own). None when the manifests carry no (loadable) advisories:
/// resolving never fails for them.
std::vector<AdvisoryNote> advisories_for(const Session& session, const Resolution& r);

} // namespace cudaenv::ops
