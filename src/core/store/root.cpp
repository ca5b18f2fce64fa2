#include "root.hpp"

#include "../failpoint.hpp"
#include "../fs.hpp"
#include "../sha256.hpp"
#include "records.hpp"
#include "state.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string_view>
#include <tuple>

namespace cudaenv::store {

namespace fs = std::filesystem;

Status sync_dir(const fs::path& dir) {
    Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) {
        return Error(ErrorCode::filesystem,
                     "cannot open '" + dir.string() + "': " + errno_text(errno));
    }
    if (::fsync(fd.get()) != 0) {
        return Error(ErrorCode::filesystem,
                     "cannot sync '" + dir.string() + "': " + errno_text(errno));
    }
    return Ok{};
}

Status sync_tree(const fs::path& dir) {
    // What cudaenv wrote, and only that: every regular file and folder of the tree (links are
    // in their folder's data). syncfs(2) flushed every user's dirty data on the filesystem, and
    // was skipped without a word when the open failed. Writeback of the files already started
    // while they were written (sync_file_range), so most fsyncs find little left: dpkg's way.
    std::vector<fs::path> dirs{dir};
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
         !ec && it != end;
         it.increment(ec)) {
        auto st = it->symlink_status(ec);
        if (fs::is_directory(st)) {
            dirs.push_back(it->path());
        } else if (fs::is_regular_file(st)) {
            Fd fd(::open(it->path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
            if (!fd.valid() || ::fsync(fd.get()) != 0) {
                return Error(ErrorCode::filesystem,
                             "cannot sync '" + it->path().string() + "': " + errno_text(errno));
            }
        }
    }
    if (ec) {
        return Error(ErrorCode::filesystem,
                     "cannot walk '" + dir.string() + "' to sync it: " + ec.message());
    }
    // children before parents: a folder's entry is durable once the folder below it is
    for (auto d = dirs.rbegin(); d != dirs.rend(); ++d) {
        CUDAENV_TRY(sync_dir(*d));
    }
    return Ok{};
}

Status publish_dir(const fs::path& from, const fs::path& to) {
    if (::rename(from.c_str(), to.c_str()) != 0) {
        int err = errno;
        return Error(ErrorCode::filesystem,
                     "cannot publish '" + to.string() + "': " + errno_text(err) +
                         (err == EXDEV ? " (staging and the root must be on "
                                         "one filesystem)"
                                       : ""));
    }
    return sync_dir(to.parent_path());
}

Status Root::prepare() const {
    // Every folder of the layout is 0755 whatever the umask (what versions live in must be
    // reachable by every user: a machine-wide root behind /usr/local/cuda); folders that exist
    // keep their mode. The root itself may be a link (the user's choice), the folders cudaenv
    // makes in it never are: a planted one would send installs, downloads and gc elsewhere.
    for (const auto& d :
         {dir, dir / "cache", downloads(), store(), versions(), staging(), trash(), manifests()}) {
        struct stat st {};

        if (d != dir && ::lstat(d.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
            std::error_code ec;
            auto to = fs::read_symlink(d, ec);
            return Error(S_ISLNK(st.st_mode) ? ErrorCode::unsafe_archive : ErrorCode::filesystem,
                         "refusing the root '" + dir.string() + "': '" + d.string() + "' is " +
                             (S_ISLNK(st.st_mode) ? "a link (to '" + printable(to.string()) +
                                                        "') that cudaenv did not make"
                                                  : std::string("not a folder")))
                .with_hint("move it away: cudaenv makes this folder itself");
        }
        if (auto made = make_dirs(d); !made) {
            return std::move(made).error().with_hint(
                "set CUDAENV_ROOT to a directory you can write");
        }
    }

    struct stat st {};

    if (::stat(dir.c_str(), &st) != 0) {
        return Error(ErrorCode::filesystem,
                     "cannot stat '" + dir.string() + "': " + errno_text(errno));
    }
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
        char mode[16];
        std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
        return Error(ErrorCode::filesystem,
                     "refusing the root '" + dir.string() + "': anyone may write it (mode " + mode +
                         ")")
            .with_hint("chmod o-w '" + dir.string() + "'");
    }
    if (st.st_uid != ::geteuid() && st.st_uid != 0) {
        return Error(ErrorCode::filesystem,
                     "refusing the root '" + dir.string() + "': it belongs to another user")
            .with_hint("use a CUDAENV_ROOT of your own");
    }
    if (::access(dir.c_str(), W_OK) != 0) {
        return Error(ErrorCode::filesystem,
                     "cannot write the root '" + dir.string() + "': " + errno_text(errno));
    }
    return Ok{};
}

namespace {

/// Downloads a killed run left: a verified one whose archive is already in the store (the run
/// died after extracting, before deleting it), and any download or partial one untouched for
/// k_stale (a resume that never came). Only names cudaenv gives downloads are considered.
void sweep_downloads(const Root& root) {
    constexpr auto k_stale = std::chrono::hours(24 * 14);
    std::error_code ec;
    std::set<std::string> extracted; // sha256[:12] of every store entry
    for (fs::directory_iterator it(root.store(), ec), end; !ec && it != end; it.increment(ec)) {
        auto name = it->path().filename().string();
        if (name.size() > 13 && name[name.size() - 13] == '-') {
            extracted.insert(name.substr(name.size() - 12));
        }
    }
    auto now = fs::file_time_type::clock::now();
    for (fs::directory_iterator it(root.downloads(), ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        bool partial = name.size() == 72 && name.ends_with(".partial");
        std::string sha = partial ? name.substr(0, 64) : name;
        std::error_code fec;
        if (!is_sha256_hex(sha) || !it->is_regular_file(fec) || it->is_symlink(fec)) {
            continue;
        }
        auto age = now - it->last_write_time(fec);
        if ((!partial && extracted.count(sha.substr(0, 12))) || (!fec && age > k_stale)) {
            fs::remove(it->path(), fec);
        }
    }
}

} // namespace

namespace {

/// Moves what is not a published entry (a folder with its record) out of `area` and removes it;
/// links are unlinked, never followed.
void sweep_entries(const Root& root, const fs::path& area, const char* record) {
    std::error_code ec;
    for (fs::directory_iterator it(area, ec), end; !ec && it != end; it.increment(ec)) {
        auto st = it->symlink_status(ec);
        if (fs::is_symlink(st)) {
            fs::remove(it->path(), ec); // planted link: unlink, never follow
            continue;
        }
        if (!fs::is_directory(st) || !fs::exists(it->path() / record, ec)) {
            auto moved = root.trash() / ("swept-" + it->path().filename().string());
            if (::rename(it->path().c_str(), moved.c_str()) == 0) {
                remove_tree(moved);
            }
        }
    }
}

bool has_record(const fs::path& dir) {
    std::error_code ec;
    return fs::is_directory(fs::symlink_status(dir, ec)) && fs::exists(dir / k_version_record, ec);
}

/// versions/<name> left by the migration: a link whose text is exactly "<platform>/<name>".
bool migration_link(const fs::path& link) {
    std::error_code ec;
    auto to = fs::read_symlink(link, ec);
    auto name = link.filename().string();
    auto text = to.string();
    auto slash = text.find('/');
    return !ec && slash != std::string::npos && text.substr(slash + 1) == name &&
           is_platform_folder(text.substr(0, slash));
}

} // namespace

void Root::sweep() const {
    std::error_code ec;
    sweep_downloads(*this);
    sweep_temp_files(dir, state_file().filename().string());
    for (const auto& area : {staging(), trash()}) {
        for (fs::directory_iterator it(area, ec), end; !ec && it != end; it.increment(ec)) {
            remove_tree(it->path());
        }
    }
    sweep_entries(*this, store(), k_complete_record);
    for (fs::directory_iterator it(versions(), ec), end; !ec && it != end; it.increment(ec)) {
        auto name = it->path().filename().string();
        auto st = it->symlink_status(ec);
        if (fs::is_symlink(st)) {
            // the migration's links stay while their version does; any other link was planted
            if (!migration_link(it->path()) || !fs::exists(it->path() / k_version_record, ec)) {
                fs::remove(it->path(), ec);
            }
            continue;
        }
        if (fs::is_directory(st) && is_platform_folder(name)) {
            sweep_entries(*this, it->path(), k_version_record);
            continue;
        }
        if (!fs::is_directory(st) || !fs::exists(it->path() / k_version_record, ec)) {
            auto moved = trash() / ("swept-" + name);
            if (::rename(it->path().c_str(), moved.c_str()) == 0) {
                remove_tree(moved);
            }
        }
    }
    (void)migrate_layout(); // what cannot move now stays readable where it is; the next run tries
}

Status Root::migrate_layout() const {
    std::error_code ec;
    std::vector<std::pair<std::string, std::string>> todo; // (name, platform)
    for (fs::directory_iterator it(versions(), ec), end; !ec && it != end; it.increment(ec)) {
        auto name = it->path().filename().string();
        if (is_platform_folder(name) || !fs::is_directory(it->symlink_status(ec))) {
            continue;
        }
        auto rec = read_version_record(it->path());
        if (!rec || !is_platform_folder(rec->platform) || rec->name != name) {
            continue; // stays where it is: nothing says where it would go
        }
        todo.emplace_back(name, rec->platform);
    }
    for (const auto& [name, platform] : todo) {
        fs::path from = versions() / name;
        fs::path to = versions(platform) / name;
        CUDAENV_TRY(make_dirs(versions(platform)));
        auto there = fs::symlink_status(to, ec);
        if (fs::is_symlink(there) || (fs::exists(there) && !has_record(to))) {
            // a killed migration's link, or a folder never published: not a version
            auto moved = trash() / ("swept-" + platform + "-" + name);
            if (::rename(to.c_str(), moved.c_str()) == 0) {
                remove_tree(moved);
            }
        }
        if (fs::exists(fs::symlink_status(to, ec))) {
            // A copy in the new layout already (installed by a newer cudaenv, then this name
            // again by an older one): the older layout's copy goes to the trash.
            auto moved = trash() / ("migrated-" + name);
            if (::rename(from.c_str(), moved.c_str()) != 0) {
                return Error(ErrorCode::filesystem,
                             "cannot move '" + from.string() + "' aside: " + errno_text(errno));
            }
            CUDAENV_TRY(sync_dir(versions()));
            remove_tree(moved);
            failpoint::hit("migrate-link");
            if (::symlink((platform + "/" + name).c_str(), from.c_str()) != 0 && errno != EEXIST) {
                return Error(ErrorCode::filesystem,
                             "cannot link '" + from.string() + "': " + errno_text(errno));
            }
            CUDAENV_TRY(sync_dir(versions()));
            continue;
        }
        // The link is made where the folder goes, then the two are exchanged in one step: a
        // kill leaves the old layout (and a stray link the next sweep unlinks) or the new one.
        if (::symlink((platform + "/" + name).c_str(), to.c_str()) != 0) {
            return Error(ErrorCode::filesystem,
                         "cannot link '" + to.string() + "': " + errno_text(errno));
        }
        CUDAENV_TRY(sync_dir(versions(platform)));
        failpoint::hit("migrate-exchange");
        if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_EXCHANGE) != 0) {
            int err = errno;
            ::unlink(to.c_str());
            return Error(ErrorCode::filesystem,
                         "cannot move '" + from.string() + "' to '" + to.string() +
                             "': " + errno_text(err));
        }
        CUDAENV_TRY(sync_dir(versions(platform)));
        CUDAENV_TRY(sync_dir(versions()));
        failpoint::hit("migrate-after");
    }
    return Ok{};
}

Result<TempDir> Root::make_stage(const std::string& hint) const {
    return TempDir::make(staging(), hint);
}

bool is_platform_folder(std::string_view name) {
    return name.size() > 6 && name.substr(0, 6) == "linux-" &&
           name.find('/') == std::string_view::npos;
}

sys::HostMachine HostPlatforms::native_host() {
    sys::HostMachine h;
#if defined(__x86_64__)
    h.kind = sys::HostKind::x86_64;
    h.machine = "x86_64";
#elif defined(__aarch64__)
    h.kind = sys::HostKind::arm_server;
    h.machine = "aarch64";
#endif
    return h;
}

std::string HostPlatforms::of(std::string_view name) const {
    if (!forced.empty()) {
        return forced;
    }
    // "<cuda>[+cudnn<v>]": the CUDA release's major and minor lead the name
    int part[2] = {0, 0};
    std::size_t i = 0;
    for (int k = 0; k < 2; ++k) {
        std::size_t start = i;
        while (i < name.size() && name[i] >= '0' && name[i] <= '9' && i - start < 4) {
            part[k] = part[k] * 10 + (name[i] - '0');
            ++i;
        }
        if (i == start) {
            return {};
        }
        if (k == 0) {
            if (i >= name.size() || name[i] != '.') {
                return {};
            }
            ++i;
        }
    }
    return sys::platform_for(host, part[0], part[1]).platform;
}

std::vector<fs::path> Root::version_dirs() const {
    std::vector<fs::path> out{versions()};
    for (const auto& u : upstreams) {
        out.push_back(u / "versions");
    }
    return out;
}

namespace {

bool plain_name(const std::string& name) {
    return !name.empty() && name.find('/') == std::string::npos && name != "." && name != ".." &&
           !is_platform_folder(name);
}

/// `name` of `platform` in one layer's versions folder: where it is, if it is there.
std::optional<fs::path>
find_version(const fs::path& versions_dir, const std::string& name, const std::string& platform) {
    if (!plain_name(name) || !is_platform_folder(platform)) {
        return std::nullopt;
    }
    if (has_record(versions_dir / platform / name)) {
        return versions_dir / platform / name;
    }
    // a layer not migrated yet (a read-only upstream, or no write has run since the upgrade)
    if (has_record(versions_dir / name)) {
        auto rec = read_version_record(versions_dir / name);
        if (rec && rec->platform == platform) {
            return versions_dir / name;
        }
    }
    return std::nullopt;
}

} // namespace

fs::path Root::version_dir(const std::string& name) const {
    return version_dir(name, platforms.of(name));
}

fs::path Root::version_dir(const std::string& name, const std::string& platform) const {
    for (const auto& d : version_dirs()) {
        if (auto found = find_version(d, name, platform)) {
            return *found;
        }
    }
    return versions() / (platform.empty() ? std::string("unknown-platform") : platform) / name;
}

std::optional<fs::path> Root::upstream_of(const std::string& name) const {
    return upstream_of(name, platforms.of(name));
}

std::optional<fs::path> Root::upstream_of(const std::string& name,
                                          const std::string& platform) const {
    if (find_version(versions(), name, platform)) {
        return std::nullopt;
    }
    for (const auto& u : upstreams) {
        if (find_version(u / "versions", name, platform)) {
            return u;
        }
    }
    return std::nullopt;
}

void drop_if_empty(const fs::path& platform_dir) {
    // rmdir(2) removes only an empty folder; an install that publishes into it holds the lock
    if (is_platform_folder(platform_dir.filename().string()) &&
        ::rmdir(platform_dir.c_str()) == 0) {
        (void)sync_dir(platform_dir.parent_path());
    }
}

fs::path root_of_version(const fs::path& version_dir) {
    fs::path up = version_dir.parent_path();
    if (is_platform_folder(up.filename().string())) {
        up = up.parent_path();
    }
    return up.parent_path();
}

std::vector<PlacedVersion> placed_versions_in(const fs::path& versions_dir,
                                              const HostPlatforms& platforms,
                                              std::size_t layer) {
    std::vector<PlacedVersion> out;
    std::set<std::pair<std::string, std::string>> seen;
    auto add = [&](const std::string& name, const std::string& platform, const fs::path& dir) {
        if (seen.emplace(name, platform).second) {
            out.push_back({name, platform, dir, layer, platforms.of(name) == platform});
        }
    };
    std::error_code ec;
    std::vector<fs::path> legacy;
    for (fs::directory_iterator it(versions_dir, ec), end; !ec && it != end; it.increment(ec)) {
        auto st = it->symlink_status(ec);
        auto name = it->path().filename().string();
        if (!fs::is_directory(st)) {
            continue; // the migration's links name a version listed in its platform folder
        }
        if (!is_platform_folder(name)) {
            legacy.push_back(it->path());
            continue;
        }
        std::error_code pec;
        for (fs::directory_iterator v(it->path(), pec), vend; !pec && v != vend; v.increment(pec)) {
            auto vname = v->path().filename().string();
            if (plain_name(vname) && has_record(v->path())) {
                add(vname, name, v->path());
            }
        }
    }
    for (const auto& p : legacy) {
        if (has_record(p)) {
            if (auto rec = read_version_record(p); rec && is_platform_folder(rec->platform)) {
                add(p.filename().string(), rec->platform, p);
            }
        }
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return std::tie(a.name, a.platform) < std::tie(b.name, b.platform);
    });
    return out;
}

std::vector<PlacedVersion> placed_versions(const Root& root) {
    std::vector<PlacedVersion> out;
    auto dirs = root.version_dirs();
    for (std::size_t i = 0; i < dirs.size(); ++i) {
        auto layer = placed_versions_in(dirs[i], root.platforms, i);
        out.insert(out.end(), layer.begin(), layer.end());
    }
    return out;
}

std::vector<std::string> installed_versions(const Root& root) {
    std::set<std::string> out;
    for (auto& v : placed_versions(root)) {
        if (v.this_host) {
            out.insert(std::move(v.name));
        }
    }
    return {out.begin(), out.end()};
}

std::optional<Error> other_platform_error(const Root& root, const std::string& name) {
    std::vector<std::string> others;
    for (auto& v : placed_versions(root)) {
        if (v.name == name && v.this_host) {
            return std::nullopt; // this host has its own
        }
        if (v.name == name && std::find(others.begin(), others.end(), v.platform) == others.end()) {
            others.push_back(std::move(v.platform));
        }
    }
    if (others.empty()) {
        return std::nullopt;
    }
    std::sort(others.begin(), others.end());
    std::string list;
    for (const auto& p : others) {
        list += (list.empty() ? "" : ", ") + p;
    }
    auto mine = root.platforms.of(name);
    return Error(ErrorCode::not_found,
                 "version '" + name + "' is installed for " + list + " only; this host takes " +
                     (mine.empty() ? std::string("no platform") : mine) + " for it")
        .with_hint(mine.empty() ? "CUDAENV_PLATFORM=" + others[0] + " reads that platform's copy"
                                : "cudaenv install " + name + " installs the " + mine + " one");
}

std::vector<std::string> other_platforms_of(const Root& root, const std::string& name) {
    std::set<std::string> out;
    for (auto& v : placed_versions(root)) {
        if (!v.this_host && v.name == name) {
            out.insert(std::move(v.platform));
        }
    }
    return {out.begin(), out.end()};
}

namespace {

/// Folders 0755; regular files 0755 or 0644 (0555 or 0444 without `writable_files`) by their
/// execute bits; links left alone.
Status set_tree_modes(const fs::path& dir, bool writable_files) {
    mode_t file_w = writable_files ? 0200 : 0;
    auto fix = [file_w](const fs::path& p, const struct stat& st) -> Status {
        mode_t want;
        if (S_ISDIR(st.st_mode)) {
            want = 0755;
        } else if (S_ISREG(st.st_mode)) {
            want = ((st.st_mode & 0111) ? 0555 : 0444) | file_w;
        } else {
            return Ok{}; // links have no mode of their own
        }
        if ((st.st_mode & 07777) != want && ::chmod(p.c_str(), want) != 0) {
            return Error(ErrorCode::filesystem,
                         "cannot chmod '" + p.string() + "': " + errno_text(errno));
        }
        return Ok{};
    };

    struct stat st {};

    if (::lstat(dir.c_str(), &st) != 0) {
        return Error(ErrorCode::filesystem,
                     "cannot stat '" + dir.string() + "': " + errno_text(errno));
    }
    CUDAENV_TRY(fix(dir, st));
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        if (::lstat(it->path().c_str(), &st) != 0) {
            return Error(ErrorCode::filesystem,
                         "cannot stat '" + it->path().string() + "': " + errno_text(errno));
        }
        CUDAENV_TRY(fix(it->path(), st));
    }
    if (ec) {
        return Error(ErrorCode::filesystem, "cannot read '" + dir.string() + "': " + ec.message());
    }
    return Ok{};
}

} // namespace

Status make_world_readable(const fs::path& dir) {
    return set_tree_modes(dir, true);
}

Status make_read_only(const fs::path& dir) {
    return set_tree_modes(dir, false);
}

Status replace_dir(const fs::path& from, const fs::path& to) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(to, ec))) {
        return publish_dir(from, to);
    }
    // one step for readers: they see the old folder or the new one, never neither
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_EXCHANGE) != 0) {
        return Error(ErrorCode::filesystem,
                     "cannot replace '" + to.string() + "': " + errno_text(errno));
    }
    CUDAENV_TRY(sync_dir(to.parent_path()));
    remove_tree(from); // now the old one
    return Ok{};
}

std::optional<std::string> unreadable_by_others(const fs::path& prefix) {
    auto mode_text = [](mode_t m) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%04o", m & 07777);
        return std::string(buf);
    };

    struct stat st {};

    std::error_code ec;
    fs::path abs = fs::absolute(prefix, ec);
    // every folder above: others must be able to pass through (x)
    fs::path walk = abs.root_path();
    for (const auto& part : abs.relative_path().parent_path()) {
        walk /= part;
        if (::stat(walk.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH)) {
            return "'" + walk.string() + "' (mode " + mode_text(st.st_mode) +
                   ") does not let other users through";
        }
    }
    auto check = [&](const fs::path& p, const struct stat& s) -> std::optional<std::string> {
        if (S_ISDIR(s.st_mode) && (s.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH)) {
            return "'" + p.string() + "' (mode " + mode_text(s.st_mode) +
                   ") cannot be listed by other users";
        }
        if (S_ISREG(s.st_mode) && !(s.st_mode & S_IROTH)) {
            return "'" + p.string() + "' (mode " + mode_text(s.st_mode) +
                   ") cannot be read by other users";
        }
        return std::nullopt;
    };
    if (::stat(abs.c_str(), &st) != 0) {
        return "'" + abs.string() + "' cannot be read: " + errno_text(errno);
    }
    if (auto bad = check(abs, st)) {
        return bad;
    }
    fs::recursive_directory_iterator it(abs, fs::directory_options::none, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        if (::lstat(it->path().c_str(), &st) == 0) {
            if (auto bad = check(it->path(), st)) {
                return bad;
            }
        }
    }
    return std::nullopt;
}

Result<std::optional<std::string>> global_version(const Root& root) {
    auto state = CUDAENV_TRY(load_state(root));
    return state.global;
}

Result<GlobalChoice> effective_global(const Root& root) {
    Root own{root.dir, {}, root.platforms};
    if (auto g = CUDAENV_TRY(global_version(own))) {
        return GlobalChoice{std::move(g), own};
    }
    for (const auto& up : root.upstreams) {
        Root layer{up, {}, root.platforms};
        if (auto g = global_version(layer); g && *g) {
            return GlobalChoice{std::move(*g), layer};
        }
    }
    return GlobalChoice{std::nullopt,
                        root.upstreams.empty() ? own : Root{root.upstreams[0], {}, root.platforms}};
}

} // namespace cudaenv::store
