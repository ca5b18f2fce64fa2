// Which manifests a command uses (docs/channel.md).
//
// The floor is the set cudaenv was shipped with (the package's /usr/share/cudaenv/manifests, or
// `manifests =` in /etc/cudaenv/config); `cudaenv update` adds verified sets from the channel to a
// root, under <root>/manifests/:
//
//   <root>/manifests/current.json       which set is in use (schema cudaenv.manifests/1), replaced
//                                       atomically: the switch is one rename
//   <root>/manifests/<serial>-<sha12>/  a set: the bundle's files, its release.json, and the
//                                       signed bundle itself (manifests.bundle, for mirrors)
//
// A command uses the set with the highest serial among the floor and the sets in use in its root
// and the roots below it (a user's view of the machine-wide root), the floor winning a tie: a
// newer package raises the floor, an update never lowers it. --manifests and CUDAENV_MANIFESTS
// name exactly one set and bypass the choice. Reading this costs a few small files and no
// library: the shim links it.
#pragma once

#include "../error.hpp"

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::channel {

/// The channel cudaenv uses when none is configured, and where a mirror carries its copy of a
/// channel (<mirror>/cudaenv-channel/manifests.bundle).
inline constexpr const char* k_default_channel = "https://channel.cudaenv.org/stable";
inline constexpr const char* k_mirror_channel_dir = "cudaenv-channel";
inline constexpr const char* k_release_file = "release.json";
inline constexpr const char* k_current_record = "current.json";
inline constexpr const char* k_current_schema = "cudaenv.manifests/1";

/// A set's release.json: what it is. The floor's is written by hand (the serial is bumped with
/// each change to the manifests); a channel set's is written by `update` from the bundle.
struct Release {
    std::uint64_t serial = 0; ///< 0: a set without release.json (made by hand, or a test's)
    std::string created;      ///< RFC 3339 UTC; empty when unknown
    std::string expires;      ///< a channel set's; empty for the floor
    std::string requires_version;
    std::string channel; ///< the URL a channel set came from; empty for the floor
    /// A channel set's: the public keys (64 hex each) whose signatures verified when `update`
    /// took it, checked against the keys trusted now whenever the set is chosen. Empty for the
    /// floor, and for a set an older cudaenv took (its bundle's header is read instead).
    std::vector<std::string> signed_by;
};

/// <dir>/release.json; a missing file is a Release with serial 0. A present but malformed one is
/// an integrity error (exit 4) naming the field.
Result<Release> read_release(const std::filesystem::path& dir);
std::string release_to_text(const Release& r);

/// <root>/manifests/current.json.
struct CurrentRecord {
    std::string set; ///< "<serial>-<12 hex>", a folder of <root>/manifests
    std::uint64_t serial = 0;
    std::string sha256;  ///< of the signed bundle the set was made from
    std::string channel; ///< where it was fetched
    std::string updated; ///< RFC 3339 UTC
};

/// None when the root has no current.json; errors (integrity) for a damaged one.
Result<std::optional<CurrentRecord>> read_current(const std::filesystem::path& root_dir);
std::string current_to_text(const CurrentRecord& r);
/// True for "<digits>-<12 lowercase hex>".
bool is_set_name(std::string_view name);

struct ManifestsInUse {
    enum class Origin { given, shipped, channel };
    Origin origin = Origin::shipped;
    std::filesystem::path dir;
    Release release;
    std::filesystem::path root; ///< channel: the root whose set it is
    /// A root's current.json that could not be used (damaged, its set missing): passed over,
    /// said by `doctor` and `--version`.
    std::vector<std::string> warnings;

    const char* origin_text() const;
};

/// Manifests older than this are said to be old (`--version`, `doctor`).
inline constexpr long k_stale_days = 90;

/// What is wrong with the age of the manifests in use at `now`: made more than k_stale_days ago,
/// or a channel set past its expiry (still used: it is newer than the floor; a fresh bundle is
/// what fixes it). Each a sentence with the command that fixes it; empty when fine.
std::vector<std::string> staleness(const ManifestsInUse& m, std::time_t now);

/// Exactly `dir` (--manifests, CUDAENV_MANIFESTS).
ManifestsInUse given_manifests(const std::filesystem::path& dir);
/// Whether a channel set may be used: empty when it may, else why not ("signed by a key this
/// machine has revoked"). The CLI judges signers against the trust state (channel/trust.hpp);
/// the shim, which links no crypto and only maps a framework pin to an installed version, sets
/// none.
using SetCheck = std::function<std::string(const ManifestsInUse&)>;

/// The highest-serial set `update` installed among `roots` (each root's current.json), whether or
/// not the floor is newer: what a mirror carries for hosts whose floor may be older than this
/// one's. A damaged record, a missing set, a planted link or a set `check` refuses is passed
/// over and said in `warnings`.
std::optional<ManifestsInUse> newest_channel_set(const std::vector<std::filesystem::path>& roots,
                                                 std::vector<std::string>& warnings,
                                                 const SetCheck& check = {});

/// The highest serial among `floor` and each root's set in use (`roots`: the command's own root
/// first, then its upstreams) that `check` accepts.
ManifestsInUse choose_manifests(const std::filesystem::path& floor,
                                const std::vector<std::filesystem::path>& roots,
                                const SetCheck& check = {});

/// The key ids a set's signed bundle names in its header (read, not verified): what judges a
/// set an older cudaenv took, which recorded no signers.
std::vector<std::string> claimed_signers(const std::filesystem::path& set_dir);

/// "2026-12-06T00:00:00Z" <-> seconds since the epoch (UTC only; nothing else is accepted:
/// exactly that shape, a real calendar day). The bundle's times and the staleness check share it.
std::optional<std::time_t> parse_utc(std::string_view text);
std::string format_utc(std::time_t t);

} // namespace cudaenv::channel
