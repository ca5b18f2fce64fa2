// `cudaenv __refresh` (maintainers, docs/refresh.md): NVIDIA's newer indexes and bulletins from
// folders into a new copy of the reference data, the manifests regenerated from it by the real
// generator, what changed against the manifests in use (releases, verdicts, advisories, cuBLAS
// patches, pins), and a manifests folder ready for `__bundle make`. Everything is made in a stage
// beside the output folder and renamed into place whole, or nothing is left.
#pragma once

#include "core/channel/diff.hpp"
#include "core/ops/session.hpp"
#include "core/refresh/refresh.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cudaenv::ops {

struct RefreshRequest {
    std::string reference; ///< the reference data (data/reference)
    refresh::Inputs inputs;
    std::string out;      ///< the folder to make: out/reference, out/manifests
    std::string previous; ///< the manifests to compare with; empty: the manifests in use
    std::string today;    ///< YYYYMMDD for the serial; empty: today (UTC)
};

struct RefreshReport {
    std::vector<refresh::Addition> added;
    std::vector<channel::SetChange> changes;
    std::size_t bulletins_seen = 0;
    std::size_t bulletins_skipped = 0;
    std::string previous; ///< the manifests compared with
    std::uint64_t previous_serial = 0;
    std::uint64_t serial = 0; ///< the new set's; 0 when nothing is new
    std::string out;          ///< empty when nothing is new (nothing written)
    std::string manifests;    ///< out/manifests
};

Result<RefreshReport> refresh_reference(Session& session, const RefreshRequest& request);

} // namespace cudaenv::ops
