#include "process.hpp"

#include "../fs.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <thread>

extern char** environ;

namespace cudaenv::sys {

Result<ProcessResult> run_process(const std::vector<std::string>& args,
                                  const ProcessOptions& options) {
    if (args.empty()) {
        return Error(ErrorCode::internal, "run_process: no program");
    }
    std::vector<std::string> arg_store(args);
    std::vector<char*> argv;
    for (auto& a : arg_store) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    std::vector<std::string> env_store;
    std::vector<char*> envp;
    if (options.env) {
        env_store = *options.env;
        for (auto& e : env_store) {
            envp.push_back(e.data());
        }
        envp.push_back(nullptr);
    }
    // The parent's ends live in Fds: every path out of here closes them.
    int raw_out[2], raw_err[2];
    if (::pipe2(raw_out, O_CLOEXEC) != 0) {
        return Error(ErrorCode::filesystem, "cannot create a pipe: " + errno_text(errno));
    }
    Fd out_read(raw_out[0]), out_write(raw_out[1]);
    if (::pipe2(raw_err, O_CLOEXEC) != 0) {
        return Error(ErrorCode::filesystem, "cannot create a pipe: " + errno_text(errno));
    }
    Fd err_read(raw_err[0]), err_write(raw_err[1]);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_write.get(), 1);
    posix_spawn_file_actions_adddup2(&fa, err_write.get(), 2);
    pid_t pid = 0;
    int rc = ::posix_spawn(
        &pid, argv[0], &fa, nullptr, argv.data(), options.env ? envp.data() : environ);
    posix_spawn_file_actions_destroy(&fa);
    out_write.reset(-1); // the child holds the write ends now: EOF comes when it exits
    err_write.reset(-1);
    if (rc != 0) {
        return Error(ErrorCode::filesystem, "cannot run '" + args[0] + "': " + errno_text(rc));
    }
    ProcessResult r;
    auto deadline = std::chrono::steady_clock::now() + options.timeout;
    auto remaining_ms = [&] {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        return static_cast<int>(std::max<long long>(0, left.count()));
    };
    Fd* ends[2] = {&out_read, &err_read};
    struct pollfd fds[2] = {{out_read.get(), POLLIN, 0}, {err_read.get(), POLLIN, 0}};
    int open_fds = 2;
    char buf[8192];
    while (open_fds > 0) {
        int wait = remaining_ms();
        if (wait == 0) {
            r.timed_out = true;
            break;
        }
        if (::poll(fds, 2, wait) < 0 && errno != EINTR) {
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR) {
                    continue;
                }
                if (n <= 0) {
                    ends[i]->reset(-1);
                    fds[i].fd = -1;
                    --open_fds;
                    continue;
                }
                auto& dst = i == 0 ? r.out : r.err;
                if (dst.size() < options.max_output) {
                    dst.append(buf, static_cast<std::size_t>(n));
                }
            }
        }
    }
    out_read.reset(-1);
    err_read.reset(-1);
    // Its pipes are closed (or the deadline passed); wait for the exit itself, up to the deadline.
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 && remaining_ms() > 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (done == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        r.timed_out = true;
    }
    r.status = WIFEXITED(status) ? WEXITSTATUS(status)
                                 : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return r;
}

namespace {

class RealProcesses final : public ProcessRunner {
  public:
    Result<ProcessResult> run(const std::vector<std::string>& argv,
                              const ProcessOptions& options) const override {
        return run_process(argv, options);
    }
};

} // namespace

std::uint64_t peak_rss_kib() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("VmHWM:", 0) == 0) {
            return std::strtoull(line.c_str() + 6, nullptr, 10); // "VmHWM:    9216 kB"
        }
    }
    return 0;
}

const ProcessRunner& real_processes() {
    static const RealProcesses real;
    return real;
}

} // namespace cudaenv::sys
