// `cudaenv verify [VERSION...]`: every file of each version re-hashed and compared with the
// store's records (install/verify.hpp), and for each version that changed, what changed and the
// command that repairs it. Reads only: the machine-wide root's versions are checked like the
// user's own (their fix needs root).
#pragma once

#include "core/install/verify.hpp"
#include "core/ops/session.hpp"

#include <string>
#include <vector>

namespace cudaenv::ops {

struct VerifyRequest {
    std::vector<std::string> specs; ///< installed versions or SPECs; empty: every installed one
    unsigned jobs = 4;              ///< files re-hashed at once
};

struct VerifiedVersion {
    install::VersionCheck check;
    std::string fix; ///< the command that repairs it; empty when intact and fully hashed
};

struct VerifyReport {
    std::vector<VerifiedVersion> versions; ///< sorted by name
    std::uint64_t bytes_hashed = 0;        ///< each shared object once

    /// No version has damage (some may still lack per-file hashes: `unhashed`).
    bool intact() const;
};

/// Checks the versions asked (each SPEC matched to one installed version first, as uninstall
/// matches them; a SPEC naming none is the error), or every installed version of the root and
/// its upstreams, with their content re-hashed.
Result<VerifyReport> verify(Session& session, const VerifyRequest& request);

} // namespace cudaenv::ops
