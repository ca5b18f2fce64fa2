// `__bundle keygen|make|root|verify` (maintainers, docs/channel.md): a signing key pair written
// once, a signed bundle of a manifests folder that loads as every cudaenv would load it, and a
// bundle checked as `cudaenv update` checks one. Each loads libcrypto itself; the front end prints.
#pragma once

#include "core/channel/bundle.hpp"
#include "core/channel/signing.hpp"
#include "core/channel/trust.hpp"
#include "core/ops/session.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cudaenv::ops {

/// A new key pair: `out`.secret (0600) and `out`.pub (0644), neither ever overwritten
/// (conflict). Returns the public key.
Result<channel::PublicKey> keygen(const std::string& out, const std::string& comment);

struct MakeBundle {
    std::string out;               ///< the bundle file to write
    std::vector<std::string> keys; ///< secret key files: one signature each
    std::string from;              ///< the manifests folder; empty: the shipped floor
    std::uint64_t serial = 0;      ///< 0: the folder's release.json
    unsigned valid_days = 90;
    std::string requires_version; ///< empty: release.json's, else 0.1.0
    /// The previous release's manifests folder: a pin it holds that this set changes must be
    /// declared in repins.json, or nothing is signed (usage).
    std::string previous;
};

struct MadeBundle {
    channel::BundleInfo info;
    std::size_t files = 0;
    std::size_t bytes = 0;
    std::size_t signatures = 0;
};

Result<MadeBundle> make_bundle(Session& session, const MakeBundle& request);

/// Root metadata for a channel (docs/channel.md, "Keys"): the keys of each role and how many
/// must sign, signed by `sign` -- for version 2 and later, enough of the previous version's root
/// keys and of its own. Refuses what a host would refuse (a threshold above its keys, a key
/// twice, validity over 400 days).
struct MakeRoot {
    std::string out;
    std::uint64_t version = 1;
    std::vector<std::string> root_keys; ///< public key files
    unsigned root_threshold = 1;
    std::vector<std::string> bundle_keys; ///< public key files
    unsigned bundle_threshold = 1;
    std::vector<std::string> sign; ///< secret key files
    unsigned valid_days = 365;
    std::string created; ///< empty: now
};

Result<channel::RootMetadata> make_root(const MakeRoot& request);

/// The bundle `file` verified with the machine's trusted keys plus the public key files `keys`,
/// for this cudaenv (`cudaenv_version`).
Result<channel::Bundle> verify_bundle(Session& session,
                                      const std::string& file,
                                      const std::vector<std::string>& keys,
                                      const std::string& cudaenv_version);

} // namespace cudaenv::ops
