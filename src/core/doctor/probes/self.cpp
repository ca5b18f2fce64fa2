// Probe 18: cudaenv itself: its root writable, free space for another toolkit, and its shims on
// PATH ahead of any other CUDA bin folder.
#include "probes.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <ctime>

namespace cudaenv::doctor::checks {

namespace {

constexpr unsigned long long k_gib = 1ull << 30;
/// A CUDA toolkit with cuDNN takes 4 to 8 GiB once extracted.
constexpr unsigned long long k_enough = 8 * k_gib;

} // namespace

Finding self(Host& h) {
    const auto& root = h.config().root.dir;
    std::vector<std::string> details{"root: " + root.string()};
    // the root, or the nearest folder that exists above it (where install would create it)
    std::filesystem::path probe = root;
    std::error_code ec;
    while (!probe.empty() && !std::filesystem::exists(probe, ec) && probe != probe.parent_path()) {
        probe = probe.parent_path();
    }
    if (::access(probe.c_str(), W_OK) != 0) {
        return fail("cudaenv's root " + root.string() + " is not writable by this user",
                    "set CUDAENV_ROOT to a folder you own, or run cudaenv as the root's owner",
                    details);
    }
    std::vector<std::string> warns;
    std::string fix;

    struct statvfs fsinfo {};

    if (::statvfs(probe.c_str(), &fsinfo) == 0) {
        unsigned long long free =
            static_cast<unsigned long long>(fsinfo.f_bavail) * fsinfo.f_frsize;
        details.push_back("free space: " + std::to_string(free / k_gib) + " GiB");
        if (free < k_enough) {
            warns.push_back("only " + std::to_string(free / k_gib) + " GiB free under " +
                            probe.string() + " (a toolkit with cuDNN needs up to 8 GiB)");
            fix = "free space, or move the root (CUDAENV_ROOT) to a larger disk";
        }
    }
    // cudaenv's own files are read directly: its root need not be inside the sysroot
    auto shims_dir = h.config().root.shims();
    std::string shims = h.files().machine_path(shims_dir);
    if (std::filesystem::is_directory(shims_dir, ec) && !std::filesystem::is_empty(shims_dir, ec)) {
        auto path = h.files().path_list("PATH");
        std::optional<std::size_t> at;
        std::optional<std::string> other;
        for (std::size_t i = 0; i < path.size(); ++i) {
            if (path[i] == shims || path[i] == shims_dir.string() ||
                (h.files().is_dir(path[i]) &&
                 h.files().canonical(path[i]) == h.files().canonical(shims))) {
                at = at.value_or(i);
            } else if (!at && !other && h.files().exists(path[i] + "/nvcc")) {
                other = path[i];
            }
        }
        if (!at) {
            warns.push_back("the shims (" + shims +
                            ") are not on PATH: `nvcc` does not follow "
                            "cudaenv's selection");
            if (fix.empty()) {
                fix = "add to your shell's rc file: eval \"$(cudaenv init - bash)\" (zsh, fish "
                      "likewise)";
            }
        } else if (other) {
            warns.push_back(*other + " comes before the shims on PATH: its nvcc wins");
            if (fix.empty()) {
                fix = "put eval \"$(cudaenv init - bash)\" last in your shell's rc file, after "
                      "anything that adds " +
                      *other;
            }
        } else {
            details.push_back("shims on PATH: " + shims);
        }
    }
    // the manifests: how new cudaenv's knowledge is (docs/channel.md)
    const auto& m = h.config().manifests_in_use;
    std::string made = m.release.created.empty() ? "" : ", made " + m.release.created.substr(0, 10);
    std::string expires =
        m.release.expires.empty() ? "" : ", expires " + m.release.expires.substr(0, 10);
    details.push_back("manifests: serial " + std::to_string(m.release.serial) + " (" +
                      m.origin_text() + made + expires + ") in " + m.dir.string());
    auto old = channel::staleness(m, std::time(nullptr));
    for (const auto& w : m.warnings) {
        old.push_back(w);
    }
    details.insert(details.end(), h.config().trust_details.begin(), h.config().trust_details.end());
    if (!h.config().trust_problem.empty()) {
        old.push_back("the channel's trust cannot be read: " + h.config().trust_problem);
    }
    if (!old.empty()) {
        warns.insert(warns.end(), old.begin(), old.end());
        if (fix.empty()) {
            fix = "cudaenv update (as root for the machine-wide root; docs/channel.md)";
        }
    }
    if (!warns.empty()) {
        return warn(join(warns, "; "), fix, details);
    }
    return ok("root " + root.string() + " writable, enough free space, manifests serial " +
                  std::to_string(m.release.serial),
              details);
}

} // namespace cudaenv::doctor::checks
