// Where a symlink really leads. The extraction filter refuses a link whose target, read as text,
// leaves the tree; but text is not what the kernel follows: a target that goes through another
// link and then climbs with ".." lands wherever that link points ("s -> ../..", then
// "x -> s/../../etc/passwd" is harmless as text and reaches /etc/passwd). So after an archive is
// unpacked, and again when a version is composed from several, every link is resolved here the
// way the kernel resolves it — component by component, each link's target spliced in, at most
// 40 links (the kernel's MAXSYMLINKS) — and refused if any step climbs above the tree's root, if
// a target is absolute, or if it loops.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cudaenv::archive {

enum class Resolution { inside, escapes, loops };

/// Resolves `rel` (a path relative to `root`, no leading '/') as the kernel would from inside
/// `root`. A component that does not exist, or a non-directory followed by more components,
/// ends the walk inside: the kernel would fail there with ENOENT/ENOTDIR, not go further.
Resolution resolve_beneath(const std::filesystem::path& root, std::string_view rel);

struct BadLink {
    std::string path;   ///< the link, relative to the root
    std::string target; ///< what it says
    Resolution why = Resolution::escapes;

    std::string reason() const; ///< "resolves outside the tree" / "is a symlink loop"
};

/// The first symlink under `root` (not following links while walking) that escapes or loops;
/// none when every link stays inside. Walks in sorted order, so the answer is deterministic.
std::optional<BadLink> find_bad_link(const std::filesystem::path& root);

} // namespace cudaenv::archive
