#include "root.hpp"

#include "../fs.hpp"
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

namespace cudaenv::store {

namespace fs = std::filesystem;

void remove_tree(const fs::path& p) {
    std::error_code ec;
    // remove_all does not follow symlinks: a link is removed, not its target.
    fs::remove_all(p, ec);
}

Status sync_dir(const fs::path& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return Error(ErrorCode::filesystem,
                     "cannot open '" + dir.string() + "': " + errno_text(errno));
    }
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) {
        return Error(ErrorCode::filesystem,
                     "cannot sync '" + dir.string() + "': " + errno_text(err));
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
            int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
            if (fd < 0 || ::fsync(fd) != 0) {
                int err = errno;
                if (fd >= 0) {
                    ::close(fd);
                }
                return Error(ErrorCode::filesystem,
                             "cannot sync '" + it->path().string() + "': " + errno_text(err));
            }
            ::close(fd);
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
    std::error_code ec;
    for (const auto& d : {dir, downloads(), store(), versions(), staging(), trash()}) {
        fs::create_directories(d, ec);
        if (ec) {
            return Error(ErrorCode::filesystem,
                         "cannot create '" + d.string() + "': " + ec.message())
                .with_hint("set CUDAENV_ROOT to a directory you can write");
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

bool is_sha256_name(std::string_view s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

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
        if (!is_sha256_name(sha) || !it->is_regular_file(fec) || it->is_symlink(fec)) {
            continue;
        }
        auto age = now - it->last_write_time(fec);
        if ((!partial && extracted.count(sha.substr(0, 12))) || (!fec && age > k_stale)) {
            fs::remove(it->path(), fec);
        }
    }
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
    for (const auto& [area, record] :
         {std::pair{store(), k_complete_record}, std::pair{versions(), k_version_record}}) {
        for (fs::directory_iterator it(area, ec), end; !ec && it != end; it.increment(ec)) {
            auto st = it->symlink_status(ec);
            if (fs::is_symlink(st)) {
                fs::remove(it->path(), ec); // planted link: unlink, never follow
                continue;
            }
            if (!fs::is_directory(st) || !fs::exists(it->path() / record, ec)) {
                auto moved = trash() / ("swept-" + it->path().filename().string());
                if (::rename(it->path().c_str(), moved.c_str()) == 0) {
                    remove_tree(moved);
                }
            }
        }
    }
}

Result<fs::path> Root::make_stage(const std::string& hint) const {
    std::string tmpl = (staging() / (hint + "-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data())) {
        return Error(ErrorCode::filesystem,
                     "cannot create a staging directory in '" + staging().string() +
                         "': " + errno_text(errno));
    }
    return fs::path(tmpl);
}

std::vector<std::string> installed_versions(const Root& root) {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(root.versions(), ec), end; !ec && it != end; it.increment(ec)) {
        auto st = it->symlink_status(ec);
        if (fs::is_directory(st) && fs::exists(it->path() / k_version_record, ec)) {
            out.push_back(it->path().filename().string());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

Result<std::optional<std::string>> global_version(const Root& root) {
    auto state = CUDAENV_TRY(load_state(root));
    return state.global;
}

} // namespace cudaenv::store
