// The channel's root of trust, in The Update Framework's manner (docs/channel.md, "Keys").
//
// Which keys may sign manifests bundles is itself a signed statement: root metadata, a document
// in the channel's envelope (channel/envelope.hpp), format cudaenv-root/1:
//
//   {"schema": "cudaenv.root/1", "version": 2,
//    "created": "2026-12-07T00:00:00Z", "expires": "2027-12-07T00:00:00Z",
//    "keys": {"<id>": {"public": "<64 hex>", "comment": "..."}, ...},
//    "roles": {"root":   {"keys": ["<id>", ...], "threshold": 2},
//              "bundle": {"keys": ["<id>", ...], "threshold": 1}}}
//
// cudaenv is built with the first one (version 1: the project's release key for both roles,
// threshold 1); a site that runs its own channel installs its own first one as
// /etc/cudaenv/channel.root instead. Version N+1 is published at <channel>/root/<N+1>.root and
// is taken only when `threshold` keys of version N's root role AND of its own root role sign
// it: rotation needs the old keys and the new ones, and a key dropped from a later version is
// trusted no more on every host that ran `cudaenv update` since -- revocation without a new
// package. The versions a host took are kept in its trust state, with the rollback floor: the
// highest serial it ever took and the keys that signed it.
//
// Where that lives (Anchors) does not move with the environment for root: a root process reads
// /etc/cudaenv/keys, /etc/cudaenv/channel.root and /var/lib/cudaenv/trust whatever
// CUDAENV_SYSROOT says, so an inherited environment (sudo -E, a CI job) cannot point it at keys
// or a floor of the caller's choosing. Reading the state needs no libcrypto: what was verified
// when it was written is trusted on read, as current.json is.
#pragma once

#include "../error.hpp"
#include "envelope.hpp"
#include "sets.hpp"
#include "signing.hpp"

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::channel {

inline constexpr std::string_view k_root_format = "cudaenv-root/1";
inline constexpr std::string_view k_root_schema = "cudaenv.root/1";
inline constexpr std::size_t k_max_root_bytes = 64 << 10;
/// A root metadata version is valid for at most this long (`expires` - `created`).
inline constexpr long k_max_root_days = 400;
/// The most root versions one `update` walks (a host years behind still catches up).
inline constexpr std::uint64_t k_max_root_steps = 1000;
inline constexpr const char* k_channel_root_file = "etc/cudaenv/channel.root";
inline constexpr const char* k_machine_trust_dir = "var/lib/cudaenv/trust";
inline constexpr const char* k_floor_schema = "cudaenv.floor/1";

/// A role: its keys, and how many of them must sign.
struct Role {
    std::vector<PublicKey> keys;
    unsigned threshold = 1;
};

struct RootMetadata {
    std::uint64_t version = 1;
    std::string created; ///< empty for the built-in one
    std::string expires; ///< empty: does not expire (the built-in one: the package replaces it)
    Role root;
    Role bundle;
    std::string origin; ///< "built in", a file, a URL: for messages
    std::string bytes;  ///< the signed document; empty for the built-in one
    /// The chain it belongs to: a 64-bit FNV-1a, in hex, of the first root metadata's bytes
    /// (built in, or /etc/cudaenv/channel.root).
    std::string anchor;
};

/// Where this process takes its trust from and records it.
struct Anchors {
    std::filesystem::path keys_dir;     ///< /etc/cudaenv/keys: a site's keys and revocations
    std::filesystem::path channel_root; ///< /etc/cudaenv/channel.root (absent: the built-in)
    std::filesystem::path state;        ///< written by `update`: /var/lib/cudaenv/trust (root)
    /// Read, never written: the machine's state, for a user's process.
    std::vector<std::filesystem::path> upstream_states;
    bool fixed = false; ///< root's: not moved by CUDAENV_SYSROOT
};

/// For root (euid 0) the machine's own paths, whatever `sysroot` says; for anyone else under
/// `sysroot`, the state in <root_dir>/trust and the machine's read beneath it.
Anchors anchors_for(bool is_root,
                    const std::filesystem::path& sysroot,
                    const std::filesystem::path& root_dir);

/// The public keys (64 hex digits each) of `keys`: what a set's release.json and the floor
/// record of their signers, compared without hashing (so without libcrypto) on every read.
std::vector<std::string> key_hexes(const std::vector<PublicKey>& keys);

/// The highest serial a host took, and the keys that signed it.
struct Floor {
    std::uint64_t serial = 0;
    std::string sha256;
    std::vector<std::string> signed_by; ///< public keys, hex
    std::string updated;
    std::filesystem::path file; ///< where it was read
};

/// What this process trusts now.
struct TrustState {
    Anchors anchors;
    RootMetadata root;              ///< the newest root metadata taken (or the first)
    std::vector<PublicKey> site;    ///< /etc/cudaenv/keys/*.pub
    std::vector<PublicKey> revoked; ///< /etc/cudaenv/keys/*.revoked, and those recorded in states
    std::vector<Floor> floors;      ///< own state first, then upstream; signers unchecked
    std::string first_root_bytes;   ///< /etc/cudaenv/channel.root as read (empty: built in)

    /// The keys a bundle or a mirror's index is checked with: the root metadata's bundle role
    /// and the site's keys, less every revoked key.
    KeyRing ring() const;
    /// Why a set (or a floor) signed by `signed_by` (public keys, hex) is no longer trusted;
    /// empty when it is (enough of the bundle role's keys, or a site key, none revoked).
    std::string distrust(const std::vector<std::string>& signed_by) const;
    /// The same for a set recorded before signers were (its bundle's header names key ids, of
    /// which the cudaenv that took it verified only one): trusted only when each id named is
    /// still trusted and enough alone. Hashes keys: loads libcrypto.
    std::string distrust_claimed(const std::vector<std::string>& ids) const;
    /// distrust() for a set by its release.json's signers, or distrust_claimed() by its
    /// bundle's header where an older cudaenv recorded none.
    std::string distrust_set(const Release& release, const std::filesystem::path& set_dir) const;
    /// The highest floor whose signers are still trusted.
    std::optional<Floor> floor() const;
};

/// The built-in first root metadata.
RootMetadata builtin_root();

/// Reads and checks root metadata `bytes` as version `trusted.version + 1` of `trusted`'s
/// chain: the envelope, the schema (exactly; depth-limited), threshold signatures of both
/// root roles, the version, key ids that match their keys, thresholds within the roles.
/// Keys this machine revoked (/etc/cudaenv/keys/*.revoked) count for neither role. Expiry is
/// checked by the caller, on the last version it takes. Errors: integrity (exit 4),
/// incompatible (a later format or schema: exit 8).
Result<RootMetadata> open_root(std::string_view bytes,
                               const RootMetadata& trusted,
                               std::string_view origin,
                               std::time_t now,
                               const std::vector<PublicKey>& revoked = {});

/// A first root metadata (/etc/cudaenv/channel.root): signed by its own root role.
Result<RootMetadata> open_first_root(std::string_view bytes, std::string_view origin);

/// The machine's first root metadata, its signatures checked (`update`, before it follows the
/// chain; other commands read the administrator's file without libcrypto). Errors: usage.
Status verify_first_root(const TrustState& trust);

/// Makes root metadata `next` signed by `keys` (maintainers: `cudaenv __bundle root`).
Result<std::string> make_root(const RootMetadata& next, const std::vector<SecretKey>& keys);

/// Reads the keys, the first root and every state: the newest root version of the same chain.
/// Needs no libcrypto (nothing is verified: each file was, when it was written or installed).
/// Errors: usage (a key file that is not a key), integrity (a damaged state file: fail closed,
/// the file named, with the fix).
Result<TrustState> load_trust(const Anchors& anchors);

/// Records root metadata versions taken (<state>/<anchor>/roots/<N>.root, atomically).
Status record_roots(const Anchors& anchors, const std::vector<RootMetadata>& taken);

/// Copies the keys revoked in /etc/cudaenv/keys into the state (<state>/revoked/), where they
/// outlive a purge of /etc/cudaenv; load_trust reads both.
Status record_revocations(const TrustState& trust);

/// Raises the floor in this process's state to `floor` (read again under the state's lock: a
/// higher floor stays, unless `trust` no longer trusts its signers).
Status raise_floor(const TrustState& trust, const Floor& floor);

/// The state's folder for a chain.
std::filesystem::path chain_dir(const std::filesystem::path& state, const std::string& anchor);

/// Every root metadata file of the chain in `state` (for a mirror), by version.
std::vector<std::pair<std::uint64_t, std::filesystem::path>>
recorded_roots(const std::filesystem::path& state, const std::string& anchor);

} // namespace cudaenv::channel
