// `__bundle keygen|make|verify` (maintainers, docs/channel.md): a signing key pair written once,
// a signed bundle of a manifests folder that loads as every cudaenv would load it, and a bundle
// checked as `cudaenv update` checks one. Each loads libcrypto itself; the front end prints.
#pragma once

#include "core/channel/bundle.hpp"
#include "core/channel/signing.hpp"
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
};

struct MadeBundle {
    channel::BundleInfo info;
    std::size_t files = 0;
    std::size_t bytes = 0;
    std::size_t signatures = 0;
};

Result<MadeBundle> make_bundle(Session& session, const MakeBundle& request);

/// The bundle `file` verified with the machine's trusted keys plus the public key files `keys`,
/// for this cudaenv (`cudaenv_version`).
Result<channel::Bundle> verify_bundle(Session& session,
                                      const std::string& file,
                                      const std::vector<std::string>& keys,
                                      const std::string& cudaenv_version);

} // namespace cudaenv::ops
