// The update operation: the channel this session uses (refused where the manifests are a fixed
// set, or the URL is not one), the keys this machine trusts, and core/channel/update run with
// them.
#pragma once

#include "core/channel/update.hpp"
#include "core/ops/session.hpp"

#include <string>

namespace cudaenv::ops {

struct UpdateReport {
    channel::UpdateOutcome outcome;
    std::string channel; ///< the URL it was fetched from
};

/// `check`: say what would change, write nothing. `cudaenv_version`: the running cudaenv's, for
/// the bundle's `requires`.
Result<UpdateReport>
update_manifests(Session& session, bool check, const std::string& cudaenv_version);

} // namespace cudaenv::ops
