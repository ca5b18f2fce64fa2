// `cudaenv gc`: what the root holds that nothing needs. Versions no recorded project pin, no
// global choice and no journal entry (rollback's target, a pending switch) needs; store entries
// no version uses (an install that failed after extracting leaves them); downloads in the cache
// (a failed or killed install's, resumable ones included). Planned without the lock (the dry run
// is the default), then done under it, with the plan recomputed there.
#pragma once

#include "../error.hpp"
#include "../store/root.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace cudaenv::install {

struct GcItem {
    enum class Kind { version, store_entry, download };
    Kind kind;
    std::string name;
    std::filesystem::path path;
    std::uint64_t bytes = 0; ///< what removing it frees (files no other entry links)
};

struct GcPlan {
    std::vector<GcItem> items;
    std::map<std::string, std::string> kept; ///< version -> why it stays
    std::uint64_t bytes = 0;
};

/// `needed`: version -> why (from activate::needed_versions). Only this root's own versions are
/// candidates; an upstream's belong to its administrator.
GcPlan plan_gc(const store::Root& root, const std::map<std::string, std::string>& needed);

/// Does what plan_gc says, under the root's lock (the plan is made again there). Returns what
/// was removed.
Result<GcPlan> run_gc(const store::Root& root,
                      const std::map<std::string, std::string>& needed,
                      std::chrono::milliseconds lock_timeout);

} // namespace cudaenv::install
