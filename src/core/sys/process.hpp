// Running a child process and capturing what it prints, with a deadline: the only way cudaenv
// asks other programs (ldconfig, nvcc, gcc, its own library-probe child) anything.
#pragma once

#include "../error.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::sys {

struct ProcessResult {
    /// The exit status; 128 + N when killed by signal N.
    int status = -1;
    std::string out;
    std::string err;
    bool timed_out = false; ///< killed at the deadline; status is then 128 + SIGKILL
};

struct ProcessOptions {
    /// The child's whole environment; none: this process's.
    std::optional<std::vector<std::string>> env;
    std::chrono::milliseconds timeout{std::chrono::seconds(120)};
    /// Output beyond this is read and dropped (a runaway child cannot exhaust memory).
    std::size_t max_output = 4u << 20;
};

/// Runs argv[0] (an absolute path; no PATH search) with stdin closed to /dev/null. An error only
/// when it cannot be started; a child that fails or times out is a result.
Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const ProcessOptions& options = {});

/// The seam for code that runs other programs (rustup's Process, ninja's DiskInterface): the
/// machine switch takes one, so unit tests can play an ldconfig that fails, hangs, or prints a
/// cache that points elsewhere, without a real one.
class ProcessRunner {
  public:
    virtual ~ProcessRunner() = default;
    virtual Result<ProcessResult> run(const std::vector<std::string>& argv,
                                      const ProcessOptions& options) const = 0;
};

/// run_process, as a ProcessRunner.
const ProcessRunner& real_processes();

/// This process's peak resident set (KiB): /proc/self/status's VmHWM, which exec resets --
/// unlike getrusage's ru_maxrss, which a process spawned by a large parent inherits across
/// execve (a cudaenv started by a 300 MiB Python would report 310 MiB). 0 when unknown.
std::uint64_t peak_rss_kib();

} // namespace cudaenv::sys
