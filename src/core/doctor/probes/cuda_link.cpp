// Probe 6: /usr/local/cuda: missing, dangling, a real directory, managed by update-alternatives,
// a link cudaenv does not own, or cudaenv's; and what version it holds.
#include "../../activate/machine.hpp"
#include "../../fs.hpp"
#include "../../store/root.hpp"
#include "../../store/state.hpp"
#include "probes.hpp"

#include <nlohmann/json.hpp>

namespace cudaenv::doctor::checks {

namespace fs = std::filesystem;

namespace {

std::string installed_hint(Host& h) {
    auto names = store::installed_versions(h.config().link_root()); // this host's platform
    return names.empty() ? "cudaenv install <version> && cudaenv global <version>"
                         : "cudaenv global " + names.back();
}

Finding link_finding(Host& h, const activate::LinkState& state, std::vector<std::string> details);

} // namespace

Finding cuda_link(Host& h) {
    activate::Machine m;
    m.sysroot = h.config().sysroot;
    auto state = activate::read_link_state(m, h.config().link_root());
    using Kind = activate::LinkState::Kind;
    std::vector<std::string> details;
    // the journal (docs/reliability.md F11): an interrupted switch names the version it was going
    // to
    auto journal = store::load_state(h.config().link_root());
    if (!journal) {
        return warn(journal.error().message,
                    journal.error().hints.empty() ? std::string() : journal.error().hints[0]);
    }
    // every problem is reported: the journal's and the link's are different things to fix
    std::vector<Issue> issues;
    if (journal->pending) {
        issues.push_back(
            {Status::warn,
             "an interrupted `cudaenv global " + *journal->pending +
                 "`: the link, ld.so.conf.d and the loader cache may disagree",
             "cudaenv global " + *journal->pending + " (finishes it), or cudaenv rollback"});
    }
    std::optional<std::string> global = journal->global;
    // the machine changed behind cudaenv's back (a scripted `ln -sf`, a package's postinst)
    if (global) {
        // versions/<platform>/<name>; a link `global` wrote before the root was migrated names
        // versions/<name>, now the migration's link to the same folder
        const auto& lroot = h.config().link_root();
        std::string want = h.files().machine_path(lroot.version_dir(*global));
        std::string before = h.files().machine_path(lroot.versions() / *global);
        std::error_code lec;
        if (state.target == before &&
            fs::equivalent(lroot.versions() / *global, lroot.version_dir(*global), lec)) {
            want = before;
        }
        std::string conf = "/etc/ld.so.conf.d/" + std::string(activate::k_ld_conf_name);
        details.push_back("journal: " + h.config().link_root().state_file().string());
        if (state.kind != Kind::ours || state.target != want) {
            issues.push_back({Status::warn,
                              "cudaenv's journal says the global version is " + *global +
                                  ", but /usr/local/cuda is " + state.describe() +
                                  ": something changed it behind cudaenv's back",
                              "cudaenv global " + *global +
                                  " --force (back to the journal), or "
                                  "cudaenv global <the version you want>"});
        }
        if (!h.files().exists(conf)) {
            issues.push_back(
                {Status::warn,
                 "the global version is " + *global + " but " + conf +
                     " is missing: the loader does not look in /usr/local/cuda/lib64",
                 "cudaenv global " + *global + " --force (writes it again and runs ldconfig)"});
        }
    }
    auto link = link_finding(h, state, details);
    if (link.status == Status::warn || link.status == Status::fail) {
        issues.insert(issues.begin(), {link.status, link.summary, link.fix});
    }
    return verdict(std::move(issues), std::move(link));
}

namespace {

/// What /usr/local/cuda itself is, judged alone.
Finding link_finding(Host& h, const activate::LinkState& state, std::vector<std::string> details) {
    using Kind = activate::LinkState::Kind;
    if (state.kind == Kind::absent && h.facts().toolkit().prefix.empty()) {
        return skip("/usr/local/cuda does not exist, and no CUDA toolkit is installed");
    }
    if (state.kind == Kind::absent) {
        return warn("/usr/local/cuda does not exist: build scripts and frameworks that hard-code "
                    "it find no CUDA",
                    installed_hint(h));
    }
    if (state.kind == Kind::other) {
        return fail("/usr/local/cuda is neither a link nor a folder",
                    "sudo rm /usr/local/cuda && " + installed_hint(h));
    }
    std::string real = h.files().canonical("/usr/local/cuda");
    if (state.kind != Kind::directory) {
        details.push_back("/usr/local/cuda -> " + state.target + " (resolves to " + real + ")");
        if (!h.files().is_dir(real)) {
            return fail("/usr/local/cuda points to " + state.target +
                            ", which does not exist (a removed toolkit?)",
                        installed_hint(h) + " (or cudaenv rollback)",
                        details);
        }
    }
    auto version = h.facts().toolkit_version("/usr/local/cuda");
    std::string holds = version ? "CUDA " + version->str() : "an unknown CUDA version";
    switch (state.kind) {
    case Kind::ours:
        // every user's programs load through it: a version only its owner can read (a 0700
        // home above it, a version published before cudaenv made them world-readable) fails
        // for everyone else, silently
        if (auto why = store::unreadable_by_others(h.files().at("/usr/local/cuda"))) {
            return warn("/usr/local/cuda points to " + state.target + " (" + holds +
                            "), which other users cannot load: " + *why,
                        "sudo chmod -R o+rX '" + real +
                            "' (and o+x on each folder above it), or install the version into "
                            "the machine-wide root: sudo cudaenv install <spec>",
                        details);
        }
        return ok("cudaenv's link to " + state.target + " (" + holds + ")", details);
    case Kind::alternatives:
        return ok("managed by update-alternatives (" + state.target + " -> " + real + ", " + holds +
                      "); `cudaenv global` takes it over only with --force",
                  details);
    case Kind::foreign_link:
        return ok("a link to " + state.target + " (" + holds +
                      ") not made by cudaenv; `cudaenv global` replaces it only with --force",
                  details);
    case Kind::directory:
        return warn("/usr/local/cuda is a real directory (" + holds +
                        ", a runfile or manual install): switching versions means moving it",
                    "sudo mv /usr/local/cuda /usr/local/cuda-" +
                        (version ? version->truncated(2).str() : std::string("old")) +
                        " && cudaenv global <version> --force (cudaenv rollback restores it)",
                    details);
    default:
        return ok(holds, details);
    }
}

} // namespace

} // namespace cudaenv::doctor::checks
