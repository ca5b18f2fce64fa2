// The one lock that serialises every state change (docs/reliability.md R6): flock(2) on the root
// directory itself, opened O_CLOEXEC so no child inherits it. A lock file could be deleted or
// replaced while a run holds it, and the next run would lock a new inode and proceed beside the
// first; a directory cannot be replaced under its own entries, and after locking, the path must
// still name the locked inode (else the lock is retried on the new one). The kernel releases it
// when the holder dies, so nothing stale is ever left (C5). Waiting is bounded; on timeout the
// error names the holder, found in /proc/locks. (`.lock`, which earlier builds locked, is left
// alone.)
#pragma once

#include "../error.hpp"
#include "../fs.hpp"

#include <chrono>
#include <filesystem>
#include <utility>

namespace cudaenv::store {

class Lock {
  public:
    /// Locks the directory `dir` (a cudaenv root), waiting up to `timeout`. lock_timeout (exit
    /// 75) names the holder's PID.
    static Result<Lock> acquire(const std::filesystem::path& dir,
                                std::chrono::milliseconds timeout);

    Lock(Lock&& other) noexcept = default;

    Lock& operator=(Lock&&) = delete;
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

    /// Releases the lock (closing the descriptor).
    ~Lock() = default;

  private:
    explicit Lock(Fd fd) : m_fd(std::move(fd)) {}

    Fd m_fd;
};

/// "PID 1234 (cudaenv install tf-2.13)" for the process holding a flock on `path`, if any.
std::string lock_holder(const std::filesystem::path& path);

} // namespace cudaenv::store
