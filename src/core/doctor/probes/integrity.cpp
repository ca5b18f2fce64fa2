// Probe: the selected cudaenv version's files as they were installed (install/verify.hpp): each
// still the store's object, of its recorded size and mode, not written since its store record
// was; its links where they pointed, nothing added. `doctor --deep` re-hashes every file too.
// cudaenv's own files are read directly, as the self probe reads them: its root need not be
// inside the sysroot.
#include "../../install/verify.hpp"
#include "probes.hpp"

namespace cudaenv::doctor::checks {

namespace {

/// At most this many changes are findings of their own; the rest are counted in the last.
constexpr std::size_t k_listed = 8;

} // namespace

Finding integrity(Host& h) {
    const auto& t = h.facts().toolkit();
    if (!t.cudaenv_version) {
        return skip("no cudaenv version is selected: the toolkit is not cudaenv's to check");
    }
    const std::string& name = *t.cudaenv_version;
    auto depth = h.config().deep ? install::Depth::content : install::Depth::metadata;
    auto check = install::check_version(h.config().root, name, depth, 2);
    if (!check) {
        return skip(check.error().message); // not installed: the toolkit probe's finding
    }
    std::vector<std::string> details{
        "checked " + std::to_string(check->files) + " files of " + name + " in " +
        check->prefix.string() + ": " +
        (h.config().deep
             ? "content re-hashed (" + std::to_string(check->bytes_hashed >> 20) + " MiB read), "
             : std::string()) +
        "still the store's objects, sizes, modes, not written since installed, links, nothing "
        "added" +
        (h.config().deep ? "" : " (--deep also re-hashes every file)")};
    std::string fix = install::repair_command(*check);
    if (!check->unhashed.empty()) {
        details.push_back("recorded by an older cudaenv, without each file's sha256: " +
                          join(check->unhashed));
    }
    std::vector<Issue> issues;
    for (std::size_t i = 0; i < check->damage.size() && i < k_listed; ++i) {
        const auto& d = check->damage[i];
        std::string more = i + 1 == k_listed && check->damage.size() > k_listed
                               ? " (and " + std::to_string(check->damage.size() - k_listed) +
                                     " more: cudaenv verify " + name + ")"
                               : "";
        issues.push_back({Status::fail,
                          name + ": " + printable(d.path) + " " + install::to_string(d.kind) +
                              ": " + printable(d.what) + more,
                          fix});
    }
    if (!check->unhashed.empty()) {
        issues.push_back({Status::warn,
                          name + ": " + std::to_string(check->unhashed.size()) +
                              " of its store entries have no per-file sha256 (an older cudaenv "
                              "installed them): checked by size, mode and link only",
                          fix});
    }
    return verdict(std::move(issues),
                   ok(name + ": " + std::to_string(check->files) + " files as installed" +
                          (h.config().deep ? " (re-hashed)" : ""),
                      details));
}

} // namespace cudaenv::doctor::checks
