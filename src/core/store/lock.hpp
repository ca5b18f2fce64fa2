// The one lock that serialises every state change (reliability.md R6): flock(2) on
// <root>/.lock, a file that is never deleted, opened O_CLOEXEC so no child inherits it. The
// kernel releases it when the holder dies, so a stale file is never a problem (C5). Waiting is
// bounded; on timeout the error names the holder, found in /proc/locks, without cudaenv ever
// writing to the lock file.
#pragma once

#include "../error.hpp"

#include <chrono>
#include <filesystem>

namespace cudaenv::store {

class Lock {
  public:
    /// Takes the lock, waiting up to `timeout`. lock_timeout (exit 75) names the holder's PID.
    static Result<Lock> acquire(const std::filesystem::path& file,
                                std::chrono::milliseconds timeout);

    Lock(Lock&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }

    Lock& operator=(Lock&&) = delete;
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

    /// Releases the lock (closing the descriptor).
    ~Lock();

  private:
    explicit Lock(int fd) : m_fd(fd) {}

    int m_fd;
};

/// "PID 1234 (cudaenv install tf-2.13)" for the process holding a flock on `file`, if any.
std::string lock_holder(const std::filesystem::path& file);

} // namespace cudaenv::store
