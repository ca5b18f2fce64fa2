// A manifests bundle: every manifest file of a release of cudaenv's knowledge, signed, so that an
// installed cudaenv learns about releases made after it was built (docs/channel.md).
//
//   cudaenv-bundle/1\n                                   the format; a newer one is refused (exit
//   8) signature <key id: 16 hex> <Ed25519: 128 hex>\n      one per signing key (1 to 8) \n
//   <payload>                                            JSON, to the end of the file
//
// Each signature is over "cudaenv-bundle/1\n" followed by the payload's exact bytes, so neither
// the payload nor the format line can change without breaking it. The payload:
//
//   {"schema": "cudaenv.bundle/1", "serial": 2026120601, "created": "2026-12-06T00:00:00Z",
//    "expires": "2027-03-06T00:00:00Z", "requires": "0.1.0",
//    "files": {"cuda/11.8.0.json": "<the file's text>", "profiles.json": "...", ...}}
//
// Nothing of the payload is read before a signature by a trusted key verifies.
#pragma once

#include "../error.hpp"
#include "envelope.hpp"
#include "sets.hpp" // parse_utc, format_utc
#include "signing.hpp"

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::channel {

inline constexpr std::string_view k_bundle_format = "cudaenv-bundle/1";
inline constexpr std::string_view k_bundle_schema = "cudaenv.bundle/1";
/// The file a channel (and a mirror's copy of it) serves.
inline constexpr const char* k_bundle_file = "manifests.bundle";
/// Bounds on what a channel may make cudaenv read: a real bundle is ~1.8 MB (serial
/// 2026120602); 8 MiB leaves room for years of releases, and no more.
inline constexpr std::size_t k_max_bundle_bytes = std::size_t{8} << 20;
inline constexpr std::size_t k_max_bundle_files = 20000;
/// How deep a bundle's payload (2 levels in format 1) and each manifest file in it (6 today)
/// may nest.
inline constexpr std::size_t k_max_payload_depth = 8;
inline constexpr std::size_t k_max_manifest_depth = 16;
/// The longest a bundle may be valid (`expires` - `created`).
inline constexpr long k_max_valid_days = 400;

/// What a bundle says of itself (also what a manifests set's release.json holds).
struct BundleInfo {
    std::uint64_t serial = 0;
    std::string created; ///< RFC 3339 UTC, "2026-12-06T00:00:00Z"
    std::string expires;
    std::string requires_version = "0.1.0"; ///< the oldest cudaenv that may use it
};

struct Bundle {
    BundleInfo info;
    /// Relative path (cuda/11.8.0.json, profiles.json) -> the file's text.
    std::map<std::string, std::string> files;
    std::string key_id;             ///< the first trusted key whose signature verified
    std::vector<PublicKey> signers; ///< every trusted key whose signature verified
};

/// The inputs a bundle is checked against.
struct Trust {
    KeyRing ring;
    std::time_t now = 0;
    std::string cudaenv_version; ///< this cudaenv's ("0.1.0")
};

/// Reads `bytes` (`origin` names it: the URL) and accepts it only when a signature by one of
/// `trust.ring` verifies (channel/envelope.hpp: a threshold of the root metadata's bundle keys,
/// or a site key), its schema is one this cudaenv reads, it does not need a newer cudaenv,
/// it has not expired, and its serial and validity stay within bounds (a serial no later than
/// its creation day's YYYYMMDD99, at most k_max_valid_days of validity, not made in the future).
/// Errors: integrity (exit 4: not a bundle, truncated, changed, signed by no trusted key, expired,
/// a file name outside the manifests' layout), incompatible (exit 8: a newer format or schema, or
/// `requires` above this cudaenv -- the message says which version).
Result<Bundle> open_bundle(std::string_view bytes, const Trust& trust, std::string_view origin);

/// Only the envelope and the signature (nothing of the payload, no expiry): whether a bundle
/// already in use is still signed by keys this machine trusts. Returns those keys.
Result<std::vector<PublicKey>>
check_signature(std::string_view bytes, const Trust& trust, std::string_view origin);

/// Makes a signed bundle of `files` (each checked as open_bundle checks it) with every key.
Result<std::string> make_bundle(const std::map<std::string, std::string>& files,
                                const BundleInfo& info,
                                const std::vector<SecretKey>& keys);

} // namespace cudaenv::channel
