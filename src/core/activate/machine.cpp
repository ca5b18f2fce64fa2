#include "machine.hpp"

#include "../failpoint.hpp"
#include "../fs.hpp"
#include "../store/lock.hpp"
#include "../store/records.hpp"
#include "../store/state.hpp"
#include "../sys/ld_cache.hpp"
#include "../sys/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>

extern char** environ;

namespace cudaenv::activate {

namespace fs = std::filesystem;

std::string Machine::inside(const fs::path& p) const {
    if (sysroot == "/" || sysroot.empty()) {
        return p.string();
    }
    auto rel = p.lexically_relative(sysroot);
    if (rel.empty() || *rel.begin() == "..") {
        return p.string();
    }
    return "/" + rel.string();
}

std::string LinkState::describe() const {
    switch (kind) {
    case Kind::absent:
        return "absent";
    case Kind::ours:
        return "a cudaenv link to " + target;
    case Kind::foreign_link:
        return "a link cudaenv does not own (to " + target + ")";
    case Kind::alternatives:
        return "managed by update-alternatives (" + target + ")";
    case Kind::directory:
        return "a real directory (a runfile or manual install)";
    case Kind::other:
        return "a file that is neither a link nor a directory";
    }
    return "unknown";
}

LinkState read_link_state(const Machine& m, const store::Root& root) {
    LinkState s;

    struct stat st {};

    if (::lstat(m.link().c_str(), &st) != 0) {
        return s;
    }
    if (S_ISLNK(st.st_mode)) {
        std::error_code ec;
        s.target = fs::read_symlink(m.link(), ec).string();
        std::string ours = m.inside(root.versions()) + "/";
        if (s.target.rfind("/etc/alternatives", 0) == 0) {
            s.kind = LinkState::Kind::alternatives;
        } else if (s.target.rfind(ours, 0) == 0) {
            s.kind = LinkState::Kind::ours;
        } else {
            s.kind = LinkState::Kind::foreign_link;
        }
    } else if (S_ISDIR(st.st_mode)) {
        s.kind = LinkState::Kind::directory;
    } else {
        s.kind = LinkState::Kind::other;
    }
    return s;
}

/// Resolves `inside` (a path as the machine sees it) to a real path under the sysroot, following
/// symlinks the way the machine would: an absolute target restarts at the sysroot. Empty when
/// the links loop.
fs::path resolve_in_sysroot(const fs::path& sysroot, const fs::path& inside) {
    std::vector<std::string> todo;
    for (const auto& part : inside.relative_path()) {
        todo.push_back(part.string());
    }
    std::reverse(todo.begin(), todo.end());
    fs::path cur = sysroot;
    int hops = 0;
    while (!todo.empty()) {
        std::string part = todo.back();
        todo.pop_back();
        if (part.empty() || part == ".") {
            continue;
        }
        if (part == "..") {
            if (cur != sysroot) {
                cur = cur.parent_path();
            }
            continue;
        }
        fs::path next = cur / part;
        std::error_code ec;
        if (fs::is_symlink(fs::symlink_status(next, ec))) {
            if (++hops > 40) {
                // a loop (ELOOP): nothing is there. Returning the link itself would let the
                // caller's own lookup follow it, out of the sysroot.
                return {};
            }
            fs::path target = fs::read_symlink(next, ec);
            std::vector<std::string> parts;
            for (const auto& t : target.relative_path()) {
                parts.push_back(t.string());
            }
            for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
                todo.push_back(*it);
            }
            if (target.is_absolute()) {
                cur = sysroot;
            }
            continue;
        }
        cur = next;
    }
    return cur;
}

namespace {

/// Runs ldconfig (with -r for a sysroot) with the machine's timeout, capturing its output.
Result<sys::ProcessResult> run_ldconfig(const Machine& m, const std::vector<std::string>& extra) {
    return sys::run_ldconfig({m.ldconfig, m.sysroot, m.ldconfig_timeout, m.processes}, extra);
}

Status ldconfig_and_verify(const Machine& m, const fs::path& version_dir, bool has_cudnn) {
    auto ran = CUDAENV_TRY(run_ldconfig(m, {}));
    if (ran.status != 0) {
        std::string why = ran.err.substr(0, ran.err.find('\n'));
        return Error(ErrorCode::filesystem,
                     "ldconfig failed (exit " + std::to_string(ran.status) + ")" +
                         (why.empty() ? "" : ": " + why));
    }
    auto cache = CUDAENV_TRY(run_ldconfig(m, {"-p"}));
    fs::path want = resolve_in_sysroot(m.sysroot, m.inside(version_dir));
    std::vector<std::string> libs{"libcudart.so."};
    if (has_cudnn) {
        libs.push_back("libcudnn.so.");
    }
    for (const auto& lib : libs) {
        bool found = false;
        std::string first;
        std::set<std::string> seen; // the loader takes the first entry of each SONAME
        for (const auto& [name, flags, path] : sys::parse_ld_cache(cache.out)) {
            if (name.rfind(lib, 0) != 0 || !seen.insert(name).second) {
                continue;
            }
            fs::path real = resolve_in_sysroot(m.sysroot, path);
            if (first.empty()) {
                first = path;
            }
            auto rel = real.lexically_relative(want);
            if (!rel.empty() && *rel.begin() != "..") {
                found = true;
                break;
            }
        }
        if (!found) {
            return Error(
                ErrorCode::filesystem,
                "after ldconfig, " + lib + "* does not resolve into " + version_dir.string() +
                    (first.empty() ? " (not in the cache)" : " (the cache has " + first + ")"));
        }
    }
    return Ok{};
}

/// Points the link at `target` in one rename (or removes it for an empty target).
Status set_link(const Machine& m, const std::string& target) {
    fs::path link = m.link();
    std::error_code ec;
    (void)make_dirs(link.parent_path());
    if (target.empty()) {
        if (::unlink(link.c_str()) != 0 && errno != ENOENT) {
            return Error(ErrorCode::filesystem,
                         "cannot remove '" + link.string() + "': " + errno_text(errno));
        }
    } else {
        // An unpredictable name; one that is taken is never touched, another is tried.
        fs::path tmp;
        for (int tries = 0;; ++tries) {
            tmp = link.parent_path() / temp_name(link.filename().string());
            if (::symlink(target.c_str(), tmp.c_str()) == 0) {
                break;
            }
            if (errno != EEXIST || tries >= 16) {
                return Error(ErrorCode::filesystem,
                             "cannot create '" + tmp.string() + "': " + errno_text(errno));
            }
        }
        failpoint::hit("switch-after-tmplink");
        if (::rename(tmp.c_str(), link.c_str()) != 0) {
            int err = errno;
            ::unlink(tmp.c_str());
            return Error(ErrorCode::filesystem,
                         "cannot switch '" + link.string() + "': " + errno_text(err));
        }
    }
    return store::sync_dir(link.parent_path());
}

Status set_conf(const Machine& m, const std::optional<std::string>& content) {
    std::error_code ec;
    if (!content) {
        fs::remove(m.conf(), ec);
        return Ok{};
    }
    (void)make_dirs(m.conf().parent_path());
    return write_file_atomic(m.conf(), *content, 0644);
}

/// What a killed switch left, under the lock: temporary links next to the link — only symlinks
/// with cudaenv's temporary name that point into this root's versions, never anything else at
/// such a name — and temporary copies of our conf file and of state.json.
void sweep_after_kill(const Machine& m, const store::Root& root) {
    std::error_code ec;
    fs::path link = m.link();
    std::string versions = fs::weakly_canonical(root.versions(), ec).string();
    for (fs::directory_iterator it(link.parent_path(), ec), end; !ec && it != end;
         it.increment(ec)) {
        if (!is_temp_name(it->path().filename().string(), link.filename().string())) {
            continue;
        }

        struct stat st {};

        if (::lstat(it->path().c_str(), &st) != 0 || !S_ISLNK(st.st_mode) ||
            st.st_uid != ::geteuid()) {
            continue;
        }
        std::error_code rec;
        auto target = fs::read_symlink(it->path(), rec).string();
        fs::path sys = fs::weakly_canonical(m.sysroot, rec);
        std::string in_root =
            sys == "/" ? target : (sys / fs::path(target).relative_path()).string();
        if (!rec && !versions.empty() && in_root.rfind(versions + "/", 0) == 0) {
            ::unlink(it->path().c_str());
        }
    }
    sweep_temp_files(m.conf().parent_path(), m.conf().filename().string());
    sweep_temp_files(root.dir, root.state_file().filename().string());
}

/// Conf files other than ours that list CUDA library folders (NVIDIA's packages write
/// 000_cuda.conf, 988_cuda-12.conf, ...): the loader's choice between copies is not guaranteed.
std::vector<std::string> foreign_cuda_confs(const Machine& m) {
    std::vector<std::string> out;
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(m.conf().parent_path(), ec), end; !ec && it != end;
         it.increment(ec)) {
        if (it->path().extension() == ".conf" && it->path().filename() != k_ld_conf_name) {
            files.push_back(it->path());
        }
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        auto text = read_text_file(f);
        if (!text) {
            continue;
        }
        std::size_t pos = 0;
        while (pos < text->size()) {
            auto end = text->find('\n', pos);
            std::string line =
                text->substr(pos, end == std::string::npos ? std::string::npos : end - pos);
            pos = end == std::string::npos ? text->size() : end + 1;
            std::string lower = line;
            std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) {
                return static_cast<char>(std::tolower(c));
            });
            if (!line.empty() && line[0] != '#' && lower.find("cuda") != std::string::npos) {
                out.push_back(m.inside(f) + " also lists " + printable(line) +
                              "; which copy of a CUDA library loads first is not guaranteed");
                break;
            }
        }
    }
    return out;
}

/// What the journal records of the machine now: the global choice, the link and our conf file.
store::Snapshot snapshot(const Machine& m, const store::Root& root, const std::string& global) {
    static const char* names[] = {
        "absent", "ours", "foreign_link", "alternatives", "directory", "other"};
    auto cur = read_link_state(m, root);
    store::Snapshot s;
    s.global = global;
    s.link_kind = names[static_cast<int>(cur.kind)];
    s.link_target = cur.target;
    if (auto conf = read_text_file(m.conf())) {
        s.conf = *conf;
    }
    return s;
}

/// Puts link and conf back as `prev` (from the journal) describes them, then runs ldconfig.
/// Every step is tried; the first failure is returned.
Status restore(const Machine& m, const store::Snapshot& prev) {
    Status first = Ok{};
    auto keep = [&](Status st) {
        if (!st && first) {
            first = std::move(st);
        }
    };
    if (prev.link_kind == "directory" && prev.moved_to) {
        ::unlink(m.link().c_str());
        if (::rename(prev.moved_to->c_str(), m.link().c_str()) != 0) {
            keep(Error(ErrorCode::filesystem,
                       "cannot move '" + *prev.moved_to + "' back to '" + m.link().string() +
                           "': " + errno_text(errno)));
        }
    } else if (prev.link_kind == "absent") {
        keep(set_link(m, ""));
    } else if (prev.link_kind != "directory" && prev.link_kind != "other") {
        keep(set_link(m, prev.link_target));
    }
    keep(set_conf(m, prev.conf));
    auto ran = run_ldconfig(m, {});
    if (!ran) {
        keep(std::move(ran).error());
    } else if (ran->status != 0) {
        keep(Error(ErrorCode::filesystem, "ldconfig failed while putting the machine back"));
    }
    return first;
}

/// What <sysroot>/usr/local/cuda was before cudaenv last took it over from another tool (`global
/// --force` over NVIDIA's runfile or .deb layout): ROOT/machine-before, plain `key value` lines
/// so that the package's postrm (a shell script; the binary is gone by then) can put it back
/// on purge, as `global system` does. Paths as the machine sees them.
struct Before {
    std::string kind;     ///< foreign_link, alternatives or directory
    std::string target;   ///< a link's target
    std::string moved_to; ///< a directory's place while cudaenv's link stands there
};

fs::path before_file(const store::Root& root) {
    return root.dir / "machine-before";
}

/// "/usr/local/cuda.cudaenv-moved-" and 16 hex digits: the only name cudaenv moves a directory
/// to, so a record naming anything else (written by hand, or by someone who can write the root)
/// is never acted on.
bool is_moved_name(const Machine& m, const std::string& inside) {
    std::string prefix = m.inside(m.link()) + ".cudaenv-moved-";
    return inside.size() == prefix.size() + 16 && inside.compare(0, prefix.size(), prefix) == 0 &&
           inside.find_first_not_of("0123456789abcdef", prefix.size()) == std::string::npos;
}

std::optional<Before> read_before(const store::Root& root, const Machine& m) {
    struct stat st {};

    if (::lstat(before_file(root).c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != ::geteuid()) {
        return std::nullopt; // none, or not cudaenv's (a link, another owner's file)
    }
    auto text = read_text_file(before_file(root));
    if (!text) {
        return std::nullopt;
    }
    Before b;
    std::size_t at = 0;
    while (at < text->size()) {
        auto nl = std::min(text->find('\n', at), text->size());
        std::string_view line(text->data() + at, nl - at);
        at = nl + 1;
        auto sp = line.find(' ');
        if (line.empty() || line[0] == '#' || sp == std::string_view::npos) {
            continue;
        }
        auto key = line.substr(0, sp);
        std::string value(line.substr(sp + 1));
        if (key == "kind") {
            b.kind = value;
        } else if (key == "target") {
            b.target = value;
        } else if (key == "moved_to") {
            b.moved_to = value;
        }
    }
    bool ok = b.kind == "directory"
                  ? is_moved_name(m, b.moved_to)
                  : (b.kind == "foreign_link" || b.kind == "alternatives") && !b.target.empty();
    return ok ? std::optional<Before>(b) : std::nullopt;
}

void forget_before(const store::Root& root) {
    std::error_code ec;
    fs::remove(before_file(root), ec);
}

/// Puts back what `before` describes at the link (now absent or cudaenv's): the directory moved
/// aside, or the link. Returns what was put back ("" when the directory is no longer there).
Result<std::string> hand_back(const Machine& m, const Before& before) {
    if (before.kind == "directory") {
        auto moved = m.sysroot / fs::path(before.moved_to).relative_path();

        struct stat st {};

        if (::lstat(moved.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
            return std::string(); // gone meanwhile: nothing to put back
        }
        ::unlink(m.link().c_str()); // cudaenv's link, if it is still there
        if (::rename(moved.c_str(), m.link().c_str()) != 0) {
            return Error(ErrorCode::filesystem,
                         "cannot move '" + moved.string() + "' back to '" + m.link().string() +
                             "': " + errno_text(errno));
        }
        return before.moved_to;
    }
    CUDAENV_TRY(set_link(m, before.target)); // one rename over cudaenv's link: never missing
    return before.target;
}

/// Records `prev` when it is something another tool made (cudaenv is about to replace it).
Status record_before(const store::Root& root, const Machine& m, const store::Snapshot& prev) {
    bool link = prev.link_kind == "foreign_link" || prev.link_kind == "alternatives";
    bool dir = prev.link_kind == "directory" && prev.moved_to;
    std::string moved = dir ? m.inside(*prev.moved_to) : "";
    if ((!link && !dir) || prev.link_target.find('\n') != std::string::npos ||
        moved.find('\n') != std::string::npos) {
        return Ok{};
    }
    std::string text = "# " + m.inside(m.link()) +
                       " before cudaenv replaced it (global --force); `cudaenv global system` "
                       "and the package's purge put it back\nkind " +
                       prev.link_kind + "\n" +
                       (link ? "target " + prev.link_target + "\n" : "moved_to " + moved + "\n");
    return write_file_atomic(before_file(root), text, 0644);
}

/// Takes the link over from what another tool made (`prev` describes it): a directory gets its
/// aside name in `prev.moved_to`; the record is written before anything moves, so that after a
/// crash from here on it says where it is, for `global system` and the package's purge.
Status take_over(const store::Root& root, const Machine& m, store::Snapshot& prev) {
    if (prev.link_kind == "directory") {
        fs::path moved = m.link();
        moved += ".cudaenv-moved-" + random_hex();
        prev.moved_to = moved.string();
    }
    CUDAENV_TRY(record_before(root, m, prev));
    if (prev.moved_to && ::rename(m.link().c_str(), prev.moved_to->c_str()) != 0) {
        int err = errno;
        forget_before(root);
        return Error(ErrorCode::filesystem,
                     "cannot move '" + m.link().string() + "' aside: " + errno_text(err));
    }
    return Ok{};
}

/// A switch (or unset) failed after the journal recorded it: puts link and conf back as the
/// journal's `previous` says, clears `pending`, and returns `e` with what else went wrong.
Error undo_switch(const store::Root& root, const Machine& m, store::State& state, Error e) {
    if (state.previous) {
        if (auto st = restore(m, *state.previous); !st) {
            return std::move(e).with_hint("putting the machine back failed too: " +
                                          st.error().message + "; cudaenv rollback tries again");
        }
        const auto& kind = state.previous->link_kind;
        if (kind == "foreign_link" || kind == "alternatives" || kind == "directory") {
            forget_before(root); // what another tool made is in place again
        }
    }
    state.pending.reset();
    if (auto st = store::save_state(root, state); !st) {
        return std::move(e).with_hint("the journal could not be updated: " + st.error().message);
    }
    return e;
}

} // namespace

Result<SwitchOutcome> switch_global(const store::Root& root,
                                    const Machine& m,
                                    const std::string& version,
                                    const SwitchOptions& o) {
    SwitchOutcome out;
    out.version = version;
    const store::Root own{root.dir, {}, root.platforms};
    fs::path vdir =
        own.version_dir(version); // versions/<platform>/<name>; not migrated yet: versions/<name>
    std::error_code ec;
    if (auto up = root.upstream_of(version)) {
        return Error(ErrorCode::conflict,
                     "'" + version + "' is in the machine-wide root '" + up->string() +
                         "': only root switches the machine to it")
            .with_hint("sudo cudaenv global " + version);
    }
    if (!fs::exists(vdir / store::k_version_record, ec)) {
        if (auto other = store::other_platform_error(root, version)) {
            return std::move(*other);
        }
        return Error(ErrorCode::conflict,
                     "version '" + version + "' is not installed (or incomplete)")
            .with_hint("cudaenv install " + version);
    }
    // Read before anything changes: a damaged record stops the switch here.
    auto record = CUDAENV_TRY(store::read_version_record(vdir));
    bool has_cudnn = !record.cudnn.empty();
    // /usr/local/cuda serves every user of the machine: a version only its owner can read would
    // break everyone else's programs, silently.
    if (auto why = store::unreadable_by_others(vdir)) {
        return Error(ErrorCode::conflict,
                     "refusing to point " + m.inside(m.link()) + " at '" + version +
                         "': other users could not load it: " + *why)
            .with_hint("install it into the machine-wide root as root (sudo cudaenv install " +
                       version +
                       "; docs/packaging.md), or let others in: chmod o+rx each "
                       "folder named, chmod -R o+rX the version");
    }
    // The link's target is the canonical path (a root reached through a symlink included), so that
    // the link works from any directory and does not depend on that symlink staying (S8).
    Machine canon = m;
    canon.sysroot = fs::weakly_canonical(m.sysroot, ec);
    std::string target = canon.inside(fs::weakly_canonical(vdir, ec));
    std::string conf_content = m.inside(m.link()) + "/lib64\n";
    // Decides from what is there now; called without the lock for --dry-run, and again under
    // it, where the journal and the machine can no longer change behind our back.
    auto plan = [&](const store::State& state, const LinkState& cur) -> Result<bool> {
        out.previous = state.global.value_or("system");
        auto conf_now = read_text_file(m.conf());
        if (cur.kind == LinkState::Kind::ours && cur.target == target && conf_now &&
            *conf_now == conf_content && out.previous == version && !state.pending) {
            return false; // already so: nothing written, no ldconfig
        }
        bool foreign = cur.kind != LinkState::Kind::absent && cur.kind != LinkState::Kind::ours;
        if (foreign && !o.force) {
            return Error(ErrorCode::conflict,
                         "'" + m.link().string() + "' is " + cur.describe() +
                             "; cudaenv will not replace it")
                .with_hint("pass --force to replace it (what is there now is recorded, and "
                           "`cudaenv rollback` puts it back)");
        }
        if (cur.kind == LinkState::Kind::other && o.force) {
            return Error(ErrorCode::conflict,
                         "'" + m.link().string() + "' is " + cur.describe() +
                             "; move it away by hand");
        }
        return true;
    };
    if (o.dry_run) {
        auto state = CUDAENV_TRY(store::load_state(root));
        out.changed = CUDAENV_TRY(plan(state, read_link_state(m, root)));
        return out;
    }
    CUDAENV_TRY(root.prepare());
    auto lock = CUDAENV_TRY(store::Lock::acquire(root.dir, o.lock_timeout));
    sweep_after_kill(m, root);
    // a root of the layout before platforms moves to versions/<platform>/<name> first, so the
    // link and the conf file name the new path (the old one stays a link to it)
    if (vdir.parent_path() == root.versions()) {
        CUDAENV_TRY(root.migrate_layout());
        vdir = own.version_dir(version);
        target = canon.inside(fs::weakly_canonical(vdir, ec));
    }
    auto state = CUDAENV_TRY(store::load_state(root));
    auto cur = read_link_state(m, root);
    out.changed = CUDAENV_TRY(plan(state, cur));
    if (!out.changed) {
        return out;
    }
    store::Snapshot prev = snapshot(m, root, out.previous);
    CUDAENV_TRY(take_over(root, m, prev)); // nothing to do unless another tool's is there
    // The journal first: an interrupted switch is finished or rolled back from it.
    if (!state.pending) {
        state.previous = prev;
    }
    state.pending = version;
    CUDAENV_TRY(store::save_state(root, state));
    auto undo = [&](Error e) { return undo_switch(root, m, state, std::move(e)); };
    if (auto st = set_link(m, target); !st) {
        return undo(std::move(st).error());
    }
    failpoint::hit("switch-after-rename");
    if (auto st = set_conf(m, conf_content); !st) {
        return undo(std::move(st).error());
    }
    out.ldconfig_ran = true;
    if (auto st = ldconfig_and_verify(canon, fs::weakly_canonical(vdir, ec), has_cudnn); !st) {
        return undo(std::move(st).error().with_context("switching to " + version +
                                                       " (put back as it was)"));
    }
    state.global = version;
    state.pending.reset();
    CUDAENV_TRY(store::save_state(root, state));
    out.warnings = foreign_cuda_confs(m);
    return out;
}

Result<SwitchOutcome>
unset_global(const store::Root& root, const Machine& m, const SwitchOptions& o) {
    SwitchOutcome out;
    out.version = "system";
    auto plan = [&](const store::State& state, const LinkState& cur) {
        out.previous = state.global.value_or("system");
        std::error_code ec;
        bool mine_or_absent =
            cur.kind == LinkState::Kind::ours || cur.kind == LinkState::Kind::absent;
        return state.global || state.pending || cur.kind == LinkState::Kind::ours ||
               fs::exists(m.conf(), ec) || (mine_or_absent && read_before(root, m));
    };
    if (o.dry_run) {
        auto state = CUDAENV_TRY(store::load_state(root));
        out.changed = plan(state, read_link_state(m, root));
        return out;
    }
    CUDAENV_TRY(root.prepare());
    auto lock = CUDAENV_TRY(store::Lock::acquire(root.dir, o.lock_timeout));
    sweep_after_kill(m, root);
    auto state = CUDAENV_TRY(store::load_state(root));
    auto cur = read_link_state(m, root);
    out.changed = plan(state, cur);
    if (!out.changed) {
        return out;
    }
    if (!state.pending) {
        state.previous = snapshot(m, root, out.previous);
    }
    state.pending = "system";
    CUDAENV_TRY(store::save_state(root, state));
    auto undo = [&](Error e) { return undo_switch(root, m, state, std::move(e)); };
    // Only what is ours goes: a link another tool made stays (it was never cudaenv's choice).
    bool mine_or_absent = cur.kind == LinkState::Kind::ours || cur.kind == LinkState::Kind::absent;
    auto before = mine_or_absent ? read_before(root, m) : std::nullopt;
    if (cur.kind == LinkState::Kind::ours && !before) {
        if (auto st = set_link(m, ""); !st) {
            return undo(std::move(st).error());
        }
    }
    if (auto st = set_conf(m, std::nullopt); !st) {
        return undo(std::move(st).error());
    }
    out.ldconfig_ran = true;
    auto ran = run_ldconfig(m, {});
    if (!ran || ran->status != 0) {
        return undo(Error(ErrorCode::filesystem,
                          "ldconfig failed after removing " + m.inside(m.conf()) +
                              " (put back as it was)"));
    }
    state.global.reset();
    state.pending.reset();
    CUDAENV_TRY(store::save_state(root, state));
    // Then what `global --force` replaced comes back in cudaenv's link's place (a crash before
    // this leaves the record, and the next `global system` or the purge does it).
    if (before) {
        auto what = CUDAENV_TRY(hand_back(m, *before));
        forget_before(root);
        out.restored = what;
        if (!what.empty()) {
            auto again = run_ldconfig(m, {}); // NVIDIA's loader entries see it again
            if (!again || again->status != 0) {
                return Error(ErrorCode::filesystem,
                             "ldconfig failed after putting back " + m.inside(m.link()) +
                                 " as cudaenv found it");
            }
        }
    }
    return out;
}

Result<SwitchOutcome> rollback(const store::Root& root, const Machine& m, const SwitchOptions& o) {
    SwitchOutcome out;
    auto nothing = [&] {
        return Error(ErrorCode::not_found,
                     "nothing to roll back: no switch was recorded in '" +
                         root.state_file().string() + "'");
    };
    if (o.dry_run) {
        auto state = CUDAENV_TRY(store::load_state(root));
        if (!state.previous) {
            return nothing();
        }
        out.previous = state.global.value_or("system");
        out.version = state.previous->global;
        out.changed = true;
        return out;
    }
    CUDAENV_TRY(root.prepare());
    auto lock = CUDAENV_TRY(store::Lock::acquire(root.dir, o.lock_timeout));
    sweep_after_kill(m, root);
    auto state = CUDAENV_TRY(store::load_state(root)); // under the lock
    if (!state.previous) {
        return nothing();
    }
    store::Snapshot prev = *state.previous;
    out.previous = state.global.value_or("system");
    out.version = prev.global;
    out.changed = true;
    store::Snapshot now = snapshot(m, root, out.previous);
    if (prev.link_kind == "ours" &&
        (now.link_kind == "directory" || now.link_kind == "foreign_link" ||
         now.link_kind == "alternatives")) {
        // `global system` put back what another tool made: going back to cudaenv's version
        // replaces it again, recorded as `global --force` records it.
        CUDAENV_TRY(take_over(root, m, now));
    }
    out.ldconfig_ran = true;
    if (auto st = restore(m, prev); !st) {
        // what could be put back is; the journal keeps `previous` so that a rerun tries again
        return std::move(st).error().with_context("rolling back to " + out.version);
    }
    if (out.version == "system") {
        state.global.reset();
    } else {
        state.global = out.version;
    }
    state.previous = now;
    state.pending.reset();
    CUDAENV_TRY(store::save_state(root, state));
    return out;
}

} // namespace cudaenv::activate
