// announced.json: CUDA releases NVIDIA has published (or previewed) whose index the manifests do
// not know -- CUDA 13.5, the 13.4.0 developer preview --, with what is known of each and the
// basis of every value (docs/manifests.md). The model is in model.hpp (AnnouncedRelease); this is
// its codec and the one rule of when an announcement answers a request.
#pragma once

#include "../error.hpp"
#include "model.hpp"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::manifest {

inline constexpr const char* k_announced_file = "announced.json";
inline constexpr const char* k_announced_kind = "announced";

/// Every field checked: the version, the status ("released" or "preview", a preview naming the
/// release that supersedes it), why its index is not known, the driver branch with its basis
/// ("inferred" or "stated") and source, the component table, what is not known. Sorted by
/// version; a version twice is refused.
Result<std::vector<AnnouncedRelease>> parse_announced(const nlohmann::json& doc,
                                                      std::string_view origin);
nlohmann::ordered_json announced_to_json(const std::vector<AnnouncedRelease>& releases);

/// The announcement that answers a request for CUDA `asked` (a prefix: 13.5, 13.5.0, 13): one
/// the catalog has no release or pinned index for that `asked` matches -- the newest whose
/// version `asked` is a prefix of, or whose version is a prefix of `asked` (13.5 for 13.5.1).
/// Null when the catalog can answer, or nothing is announced.
const AnnouncedRelease* announced_for(const Catalog& catalog, const Version& asked);

/// The newest released (not preview) announcement `asked` is a prefix of that is newer than
/// `picked` -- what `resolve 13` passes over to an installable release, to be said. Null if none.
const AnnouncedRelease*
announced_newer(const Catalog& catalog, const Version& asked, const Version& picked);

/// The one line `install` refuses an announced release with (exit 9): "CUDA 13.5 is released,
/// but NVIDIA's index for it is not known to the manifests: cudaenv cannot install it yet", or,
/// for a preview, "CUDA 13.4.0 was a developer preview, superseded by 13.4.1: NVIDIA published
/// no index for it". With its hints: what to install instead (the GA release; the newest
/// installable release of the major), and how to see what is known.
Error announced_error(const Catalog& catalog, const AnnouncedRelease& release);

/// "released; driver R620 (inferred)" -- what `list --available` says of it on one line.
std::string announced_summary(const AnnouncedRelease& release);

} // namespace cudaenv::manifest
