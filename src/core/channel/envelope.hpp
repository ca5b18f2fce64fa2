// A signed document: the one envelope the update channel's bundles and a mirror's index of
// recompressed archives share (docs/channel.md, docs/fleet.md).
//
//   <format line>\n                                   "cudaenv-bundle/1", "cudaenv-recompressed/1"
//   signature <key id: 16 hex> <Ed25519: 128 hex>\n   one per signing key (1 to 8)
//   \n
//   <payload>                                         JSON, to the end of the file
//
// Each signature is over the format line, a newline, and the payload's exact bytes, so neither
// can change without breaking it. Nothing of the payload is to be read before a signature by a
// trusted key verifies (check_signatures).
#pragma once

#include "../error.hpp"
#include "signing.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudaenv::channel {

inline constexpr std::size_t k_max_signatures = 8;

/// Which kind of signed document, for its checks and its messages.
struct EnvelopeKind {
    std::string_view format;        ///< the first line: "cudaenv-bundle/1"
    std::string_view format_prefix; ///< "cudaenv-bundle/": a later "/N" needs a newer cudaenv
    std::string_view noun;          ///< "manifests bundle": in "<noun> '<origin>': why"
    std::string_view short_noun;    ///< "bundle": in "the bundle was changed"
    std::size_t max_bytes = 0;
    std::string_view newer_hint; ///< the hint when it needs a newer cudaenv
};

/// The keys a signed document is checked with: `threshold` of a role's `keys` must sign, or any
/// one of a site's own keys (a site's keys are its administrator's decision, one each). Revoked
/// keys are left out of both by whoever builds it, and listed for messages.
struct KeyRing {
    std::vector<PublicKey> keys;
    unsigned threshold = 1;
    std::vector<PublicKey> site;
    std::vector<PublicKey> revoked;
    std::string from = "the built-in keys"; ///< where `keys` come from, for messages

    /// One key, threshold 1 (tests, a maintainer's `verify --key`).
    static KeyRing of(std::vector<PublicKey> keys);
};

struct Envelope {
    std::string_view payload;
    std::vector<std::pair<std::string, SignatureBytes>> signatures; ///< key id, signature
};

/// "<noun> '<origin>': <why>" (integrity, exit 4).
Error envelope_error(const EnvelopeKind& kind, std::string_view origin, const std::string& why);

/// "cudaenv-bundle/<n>" -> n, for a name with `prefix`; 0 when it is not such a name.
unsigned long format_number(std::string_view s, std::string_view prefix);

/// Splits the header from the payload. Errors: integrity (not this kind, truncated, malformed
/// or no signatures, too large), incompatible (a later format: exit 8, "upgrade cudaenv").
Result<Envelope>
split_envelope(std::string_view bytes, const EnvelopeKind& kind, std::string_view origin);

/// The trusted keys whose signatures verify, when they are enough: `threshold` of the
/// ring's keys, or one site key. Errors: integrity (a trusted key's signature does not verify:
/// changed or cut short; signed by no trusted key, or by too few, or by a revoked one -- each
/// said, with a hint).
Result<std::vector<PublicKey>> check_signatures(const Envelope& envelope,
                                                const EnvelopeKind& kind,
                                                const KeyRing& ring,
                                                std::string_view origin);

/// The whole document: the format line, one signature per key (1 to k_max_signatures), the
/// payload. Errors: usage (no keys, too many), failure (libcrypto).
Result<std::string>
seal(const EnvelopeKind& kind, std::string_view payload, const std::vector<SecretKey>& keys);

} // namespace cudaenv::channel
