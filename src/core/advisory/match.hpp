// Which advisories (manifest/advisories.hpp) apply to what a machine runs: its driver, a toolkit,
// a cuBLAS, its container toolkit, its Jetson Linux. A subject is one of those with its version
// and where it was found; a hit is an advisory that applies to a subject, with the version that
// fixes it there and, when the machine's configuration acknowledges the advisory, the reason
// given (docs/advisories.md). Pure: the doctor and `audit` gather the subjects, this decides.
#pragma once

#include "../manifest/advisories.hpp"
#include "../version.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudaenv::advisory {

struct Subject {
    manifest::AdvisoryProduct product = manifest::AdvisoryProduct::driver;
    Version version;
    /// Where it was found: "this machine", "version 12.4 (/opt/cudaenv/versions/...)", "the
    /// selected toolkit /usr/local/cuda-13.0".
    std::string where;
    /// driver: the GPUs are data-center products (NVIDIA's "Tesla" rows of a bulletin).
    bool datacenter = false;
    /// cublas: the compute capabilities of the GPUs present (90 for 9.0); empty: not known, and
    /// a range limited to some GPUs applies (the same files run on whatever GPU a host has).
    std::vector<unsigned> gpu_ccs;
    /// cublas: the toolkit the cuBLAS belongs to, and whether it is a patch release.
    std::string cuda;
    bool patched = false;
    /// toolkit, cublas: the cudaenv version holding it ("12.4"); empty: not one of cudaenv's.
    std::string version_name;

    /// "driver 535.183.01", "CUDA 12.4.1", "cuBLAS 13.4.0.1 (CUDA 13.2.1)".
    std::string label() const;
};

/// An acknowledged advisory (the config's `acknowledge = ID reason`): reported, not counted.
struct Acknowledgement {
    std::string id;
    std::string reason;
};

struct Hit {
    const manifest::Advisory* advisory = nullptr;
    Subject subject;
    /// The version that fixes it for this subject: the highest first fixed among the ranges that
    /// hold it (a toolkit below 12.9.1 and below 13.0 needs 13.0). None: NVIDIA names no fix.
    std::optional<Version> fix;
    std::vector<std::string> notes; ///< the matching ranges' notes
    std::string acknowledged;       ///< the reason, when acknowledged; empty: counts

    bool counts() const { return acknowledged.empty(); }

    /// The step that fixes it, in one line.
    std::string fix_text() const;
    /// "NVIDIA-5614 (high, CVSS 7.8): driver 535.183.01 on this machine is affected"
    std::string summary() const;
};

/// Every advisory that applies to a subject, by advisory id then subject, one hit per pair.
std::vector<Hit> match(const manifest::Advisories& advisories,
                       const std::vector<Subject>& subjects,
                       const std::vector<Acknowledgement>& acknowledged = {});

/// A driver branch the newer bulletins stopped naming: bulletins published after the last one
/// that lists `branch` (NVIDIA does not say whether such a branch is affected, unaffected or no
/// longer serviced). Their ids, oldest first; empty when the newest bulletin lists it.
std::vector<std::string> bulletins_not_listing(const manifest::Advisories& advisories,
                                               unsigned branch);

/// Counted hits (not acknowledged).
std::size_t counted(const std::vector<Hit>& hits);

} // namespace cudaenv::advisory
