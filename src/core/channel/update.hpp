// `cudaenv update`: the newest manifests from the update channel, verified, made the set in use
// by one atomic switch (docs/channel.md). The operation below the CLI: the command parses its
// options, builds an UpdateRequest, calls update() and prints the outcome.
//
// Order: follow the channel's root metadata (<channel>/root/<N+1>.root, ...: each version signed
// by the keys trusted now and by its own; recorded unless --check; the last one must not have
// expired) -> fetch the bundle (no lock held; one deadline for everything fetched) ->
// open_bundle (signatures by the keys the root metadata trusts, schema, requires, expiry) ->
// compare the serial with the set in use and the rollback floor (lower: refused; equal: up to
// date) -> what changes, and every changed pin, which must be declared (repins.json) ->
// (--check stops here, having written nothing) -> under the root's lock: check again, stage every
// file in .staging, read the staged set back as a catalog, publish it by rename, then replace
// current.json (the switch), then drop sets older than the one it replaced. A kill at any point
// leaves the previous set in use: before the switch nothing refers to the new files; after it,
// the new set is complete. Failpoints: update-fetched, update-staged, update-published,
// update-switched.
#pragma once

#include "../error.hpp"
#include "../fetch/download.hpp"
#include "../store/root.hpp"
#include "bundle.hpp"
#include "diff.hpp"
#include "sets.hpp"
#include "trust.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace cudaenv::channel {

struct UpdateRequest {
    store::Root root;            ///< where a new set goes (the command's own root)
    std::filesystem::path floor; ///< the shipped manifests
    std::string channel;         ///< the channel's folder URL (<channel>/manifests.bundle)
    fetch::Policy policy;
    TrustState trust; ///< what this machine trusts before the channel's root metadata is read
    std::time_t now = 0;
    std::string cudaenv_version;
    bool check = false; ///< say what would change; write nothing
    std::chrono::milliseconds lock_timeout{600000};
};

struct UpdateOutcome {
    enum class State { up_to_date, available, updated };
    State state = State::up_to_date;
    ManifestsInUse before;
    BundleInfo offered;
    std::string url;
    std::string key_id;
    std::vector<SetChange> changes; ///< releases and verdicts, then every repinned file
    /// Root metadata versions taken from the channel (recorded unless --check).
    std::vector<std::uint64_t> roots_taken;
    std::uint64_t root_version = 1; ///< the root metadata version in force after this update
    std::optional<Floor> floor;     ///< the rollback floor it was checked against
    std::filesystem::path set_dir;  ///< updated: the new set in use
    /// Said to the user: a set in use passed over because its signer is no longer trusted.
    std::vector<std::string> notes;
};

/// The bundle's URL for a channel folder URL.
std::string bundle_url(std::string_view channel);

/// Errors: network (3: unreachable, or past the deadline), integrity (4: a bad, unsigned,
/// tampered, truncated, expired or rolled-back bundle, manifests in it that do not load, a pin
/// changed without a declaration, root metadata that does not verify or has expired),
/// incompatible (8: it needs a newer cudaenv),
/// filesystem (6), lock_timeout (75). The set in use is unchanged by any error.
Result<UpdateOutcome> update(const UpdateRequest& request);

/// Verifies a signed bundle already on disk (a mirror's copy, a set's own copy) as update would,
/// without the rollback check.
Result<Bundle> verify_bundle_file(const std::filesystem::path& file, const Trust& trust);

} // namespace cudaenv::channel
