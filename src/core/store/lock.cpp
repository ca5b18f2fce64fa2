#include "lock.hpp"

#include "../failpoint.hpp"
#include "../fs.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>

namespace cudaenv::store {

Lock::~Lock() {
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

std::string lock_holder(const std::filesystem::path& file) {
    struct stat st {};

    if (::stat(file.c_str(), &st) != 0) {
        return {};
    }
    // /proc/locks: "1: FLOCK  ADVISORY  WRITE 1234 fd:01:131090 0 EOF"
    std::ifstream locks("/proc/locks");
    std::string line;
    char want[64];
    std::snprintf(want,
                  sizeof want,
                  "%02x:%02x:%llu",
                  major(st.st_dev),
                  minor(st.st_dev),
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

Result<Lock> Lock::acquire(const std::filesystem::path& file, std::chrono::milliseconds timeout) {
    int fd = ::open(file.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        return Error(ErrorCode::filesystem,
                     "cannot open the lock file '" + file.string() + "': " + errno_text(errno));
    }
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            int err = errno;
            ::close(fd);
            return Error(ErrorCode::filesystem,
                         "cannot lock '" + file.string() + "': " + errno_text(err));
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            std::string holder = lock_holder(file);
            ::close(fd);
            return Error(ErrorCode::lock_timeout,
                         "another cudaenv" +
                             (holder.empty() ? std::string() : " (" + holder + ")") +
                             " holds the lock on '" + file.parent_path().string() +
                             "'; gave up after " + std::to_string(timeout.count() / 1000) + " s")
                .with_hint("wait for it to finish and run the command again, or raise "
                           "CUDAENV_LOCK_TIMEOUT (seconds)");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    failpoint::hit("lock-acquired");
    return Lock(fd);
}

} // namespace cudaenv::store
