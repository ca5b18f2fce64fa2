// The operations that take versions away: `uninstall` (every SPEC matched before anything goes,
// each version removed in turn, the shims rehashed after any change) and `gc` (what nothing
// needs: planned, or done under the lock, with the records of vanished pins dropped).
#pragma once

#include "core/install/gc.hpp"
#include "core/install/install.hpp"
#include "core/ops/session.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::ops {

struct UninstallTarget {
    std::string version;
    std::optional<std::uint64_t> bytes; ///< from its record, when readable
};

/// Each SPEC matched to one installed version (each version once), before anything is removed:
/// a SPEC that names nothing is the error, with the installed versions as its hint.
Result<std::vector<UninstallTarget>> uninstall_targets(Session& session,
                                                       const std::vector<std::string>& specs);

struct Uninstalled {
    std::string version;
    install::Removed removed;
};

/// What a removal tells as it goes: each version as it is done, and warnings (shims that could
/// not be rehashed).
struct RemoveObserver {
    std::function<void(const Uninstalled&)> removed;
    std::function<void(const std::string&)> warning;
};

struct UninstallReport {
    std::vector<Uninstalled> removed; ///< in order
    bool changed = false;
};

/// Removes the targets in order (the global version is refused unless `force`). After any
/// change the shims are rehashed -- also when a later removal fails, whose error is returned.
Result<UninstallReport> uninstall(Session& session,
                                  const std::vector<UninstallTarget>& targets,
                                  bool force,
                                  const RemoveObserver& observer);

/// `gc`: what nothing needs (versions no pin, global or journal needs; store entries no version
/// uses; downloads). With `apply` it is removed under the lock, the shims rehashed when a
/// version went, and the records of pins whose project is gone dropped; else only planned.
Result<install::GcPlan>
collect_garbage(Session& session, bool apply, const RemoveObserver& observer);

} // namespace cudaenv::ops
