#include "lock.hpp"

#include "../failpoint.hpp"
#include "../fs.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

// glibc's major()/minor() are macros: they would rename every `.major` member (Version's)
// compiled after this file in the same unit (the CI presets' unity builds). The functions stay.
#undef major
#undef minor

#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>

namespace cudaenv::store {

std::string lock_holder(const std::filesystem::path& path) {
    struct stat st {};

    if (::stat(path.c_str(), &st) != 0) {
        return {};
    }
    // /proc/locks: "1: FLOCK  ADVISORY  WRITE 1234 fd:01:131090 0 EOF"
    std::ifstream locks("/proc/locks");
    std::string line;
    char want[64];
    std::snprintf(want,
                  sizeof want,
                  "%02x:%02x:%llu",
                  ::gnu_dev_major(st.st_dev),
                  ::gnu_dev_minor(st.st_dev),
                  static_cast<unsigned long long>(st.st_ino));
    while (std::getline(locks, line)) {
        std::istringstream in(line);
        std::string id, kind, mode, rw, pid, where;
        in >> id >> kind;
        if (kind == "->") {
            continue; // a waiter, not the holder
        }
        in >> mode >> rw >> pid >> where;
        if (kind != "FLOCK" || where != want) {
            continue;
        }
        std::string cmd;
        std::ifstream cmdline("/proc/" + pid + "/cmdline", std::ios::binary);
        std::string arg;
        while (std::getline(cmdline, arg, '\0')) {
            cmd += (cmd.empty() ? "" : " ") + arg;
        }
        return "PID " + pid + (cmd.empty() ? "" : " (" + cmd + ")");
    }
    return {};
}

Result<Lock> Lock::acquire(const std::filesystem::path& dir, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    int replaced = 0;
    while (true) {
        // a root reached through a symlink is fine (S8): the lock is on the directory it names
        Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!fd.valid()) {
            return Error(ErrorCode::filesystem,
                         "cannot open '" + dir.string() + "' to lock it: " + errno_text(errno));
        }
        failpoint::hit("lock-opened");
        while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK && errno != EINTR) {
                int err = errno;
                return Error(ErrorCode::filesystem,
                             "cannot lock '" + dir.string() + "': " + errno_text(err));
            }
            if (std::chrono::steady_clock::now() >= deadline) {
                std::string holder = lock_holder(dir);
                fd.reset(-1);
                return Error(ErrorCode::lock_timeout,
                             "another cudaenv" +
                                 (holder.empty() ? std::string() : " (" + holder + ")") +
                                 " holds the lock on '" + dir.string() + "'; gave up after " +
                                 std::to_string(timeout.count() / 1000) + " s")
                    .with_hint("wait for it to finish and run the command again, or raise "
                               "CUDAENV_LOCK_TIMEOUT (seconds)");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }

        // Everyone must lock the same inode: if the path was replaced between open and flock
        // (the root moved aside and recreated), this lock guards nothing. Retry on the new one.
        struct stat held {
        }, now{};

        if (::fstat(fd.get(), &held) == 0 && ::stat(dir.c_str(), &now) == 0 &&
            held.st_dev == now.st_dev && held.st_ino == now.st_ino) {
            failpoint::hit("lock-acquired");
            return Lock(std::move(fd));
        }
        fd.reset(-1);
        if (++replaced > 100) {
            return Error(ErrorCode::lock_timeout,
                         "'" + dir.string() + "' kept changing while cudaenv tried to lock it")
                .with_hint("something is replacing the cudaenv root; stop it and run again");
        }
    }
}

} // namespace cudaenv::store
