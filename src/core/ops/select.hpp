// The selection as the commands that read it need it: what is selected here and why, a
// version's prefix, the machine the global commands change, a version the project's framework
// refuses, and the installed versions with what each one is to this directory (selected,
// global, shadowed). The front ends print them.
#pragma once

#include "core/activate/machine.hpp"
#include "core/activate/selection.hpp"
#include "core/install/install.hpp"
#include "core/manifest/model.hpp"
#include "core/ops/session.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::ops {

/// The current selection; `system` when nothing is chosen.
Result<activate::Selection> selection(Session& session);

/// The directory of the version `spec` names (installed), or of the selected one for an empty
/// spec; not_found when nothing is selected.
Result<std::filesystem::path> prefix_of(Session& session, const std::string& spec);

/// The machine the global commands change (CUDAENV_SYSROOT, CUDAENV_LDCONFIG,
/// CUDAENV_LDCONFIG_TIMEOUT).
activate::Machine machine_of(const Session& session);

/// The refusal of a version the project's framework cannot use (use, shell), worded for the
/// command; none with `force` or when the project pins no framework.
std::optional<Error> refuse_for_project(Session& session,
                                        const manifest::Catalog& catalog,
                                        const std::string& version,
                                        const std::string& spec,
                                        bool force);

struct ListedVersion {
    install::InstalledVersion version;
    bool wins = false;       ///< the copy every command uses (no copy in a root searched first)
    bool copy_below = false; ///< wins over a copy of the same name in an upstream root
    bool selected = false;   ///< what this directory selects
    bool global = false;     ///< the global version
};

/// `cudaenv list`: every installed version in every root, and what selects one here. A broken
/// pin is told (selection_error), not fatal: the list still shows what is there.
struct InstalledList {
    store::Root root;
    std::vector<ListedVersion> versions; ///< sorted by name; damaged ones with their problem
    std::optional<std::string> selected;
    std::string selected_by;     ///< why it is selected (or that nothing selects one)
    std::string selection_error; ///< the selection could not be worked out: why
    bool selected_by_global = false;
    std::optional<std::string> global;
    std::filesystem::path global_file; ///< the state file that records the global version
    /// Versions the root (and its upstreams) hold for platforms other than this host's, by
    /// platform: counted, never listed (a shared root of x86_64 and Arm hosts).
    std::map<std::string, std::size_t> other_platforms;
    std::string platform; ///< this host's platform (its newest CUDA line's; or the forced one)
};

Result<InstalledList> installed_versions(Session& session);

} // namespace cudaenv::ops
