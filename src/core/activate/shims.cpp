#include "shims.hpp"

#include "../failpoint.hpp"
#include "../fs.hpp"
#include "../store/lock.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>

namespace cudaenv::activate {

namespace fs = std::filesystem;

std::vector<std::string> shimmable_tools(const store::Root& root) {
    std::set<std::string> tools;
    for (const auto& v : store::installed_versions(root)) {
        std::error_code ec;
        for (fs::directory_iterator it(root.version_dir(v) / "bin", ec), end; !ec && it != end;
             it.increment(ec)) {
            std::string name = it->path().filename().string();
            if (name == "cudaenv" || name.empty() || name[0] == '.') {
                continue;
            }
            if (fs::is_regular_file(it->path(), ec) && ::access(it->path().c_str(), X_OK) == 0) {
                tools.insert(name);
            }
        }
    }
    return {tools.begin(), tools.end()};
}

Result<Rehashed>
rehash(const store::Root& root, const fs::path& exe, std::chrono::milliseconds lock_timeout) {
    Rehashed out;
    CUDAENV_TRY(root.prepare());
    auto lock = CUDAENV_TRY(store::Lock::acquire(root.dir, lock_timeout));
    root.sweep(); // a run killed between swapping the shims and dropping the old ones left them
    out.tools = shimmable_tools(root);
    fs::path dir = shims_dir(root);
    std::error_code ec;
    // Already right? Same names, all links to exe.
    std::set<std::string> have;
    bool right = fs::is_directory(dir, ec);
    for (fs::directory_iterator it(dir, ec), end; right && !ec && it != end; it.increment(ec)) {
        have.insert(it->path().filename().string());
        right = right && fs::is_symlink(it->symlink_status(ec)) &&
                fs::read_symlink(it->path(), ec) == exe;
    }
    if (right && have == std::set<std::string>(out.tools.begin(), out.tools.end())) {
        return out;
    }
    TempDir staged = CUDAENV_TRY(root.make_stage("shims"));
    const fs::path& stage = staged.path();
    ::chmod(stage.c_str(), 0755);
    for (const auto& t : out.tools) {
        if (::symlink(exe.c_str(), (stage / t).c_str()) != 0) {
            return Error(ErrorCode::filesystem,
                         "cannot create shim '" + t + "': " + errno_text(errno));
        }
    }
    if (fs::exists(fs::symlink_status(dir, ec))) {
        if (::renameat2(AT_FDCWD, stage.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
            return Error(ErrorCode::filesystem,
                         "cannot replace '" + dir.string() + "': " + errno_text(errno));
        }
        failpoint::hit("shims-swapped");
        remove_tree(stage); // the old shims, gone before the sync below
        staged.release();
    } else {
        CUDAENV_TRY(store::publish_dir(stage, dir));
        staged.release();
    }
    CUDAENV_TRY(store::sync_dir(root.dir));
    out.changed = true;
    return out;
}

} // namespace cudaenv::activate
