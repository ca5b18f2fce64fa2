// The mirror operation: which files a fleet's mirror needs for some SPECs on some platforms
// (every archive and NVIDIA's index files; what the manifests give on another host is said, not
// mirrored), the update channel's bundle carried beside them, and the files downloaded into the
// mirror's tree through the install's download engine.
#pragma once

#include "core/mirror/mirror.hpp"
#include "core/mirror/recompressed.hpp"
#include "core/ops/resolve_spec.hpp"
#include "core/ops/session.hpp"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cudaenv::ops {

struct MirrorRequest {
    std::vector<std::string> specs;
    std::string to;
    SpecOptions spec_options;           ///< its platform is ignored: see `platforms`
    std::vector<std::string> platforms; ///< empty: this machine's
    unsigned jobs = 4;
    bool dry_run = false;
    std::string cudaenv_version; ///< the running cudaenv's, for the bundle's `requires`
    /// "zstd": give every archive of the mirror a recompressed copy and a signed index
    /// (mirror/recompressed.hpp); empty: NVIDIA's archives only.
    std::string recompress;
    std::vector<std::string> sign_keys; ///< secret key files: one signature each
    int level = mirror::k_default_zstd_level;
};

struct MirrorReport {
    mirror::Outcome outcome;
    std::set<std::string> not_mirrored;      ///< URLs on another host
    std::optional<std::string> channel_file; ///< the bundle's path in the mirror, if carried
    std::string channel_note;                ///< why no bundle is carried
    std::optional<mirror::RecompressOutcome> recompressed;
};

/// Mirrors what `request` asks for, then recompresses when asked (the keys and level are checked
/// before anything is downloaded). Everything is resolved (and must be installable on each
/// platform) before a byte is downloaded. `observer` hears each file's progress (from worker
/// threads).
Result<MirrorReport> mirror_specs(Session& session,
                                  const MirrorRequest& request,
                                  const mirror::Observer& observer,
                                  const mirror::RecompressObserver& recompressing = {});

} // namespace cudaenv::ops
