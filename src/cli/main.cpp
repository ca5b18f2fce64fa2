// cudaenv's entry point: capture the process state once, run the CLI, map errors to exit codes.
#include "app.hpp"
#include "context.hpp"
#include "core/failpoint.hpp"
#include "core/fetch/download.hpp"
#include "proxy.hpp"

#include <malloc.h>
#include <unistd.h>

#include <csignal>
#include <exception>
#include <iostream>

extern char** environ;

int main(int argc, char** argv) {
    // Memory bounded by construction (issue 11, 10b): glibc gives each worker thread its own
    // arena (up to 8 per core) and, once a large block is freed, raises its mmap threshold so
    // later xz dictionaries (8-64 MiB) come from those arenas and stay there after use: peak RSS
    // grew with --jobs (48.8 MiB at 4, 73.5 at 16) and was bimodal between invocations. A fixed
    // threshold sends every block >= 1 MiB to mmap and back to the kernel on free, and two
    // arenas bound what small blocks can keep.
    ::mallopt(M_MMAP_THRESHOLD, 1 << 20);
    ::mallopt(M_ARENA_MAX, 2);
    // A closed pipe (Ansible, `| head`) must not kill a run half-way: writes fail instead.
    std::signal(SIGPIPE, SIG_IGN);
    cudaenv::cli::Context ctx;
    cudaenv::cli::capture_process(ctx, environ);
    if (auto fp = ctx.getenv("CUDAENV_FAILPOINTS")) {
        cudaenv::failpoint::configure(*fp);
    }
    try {
        // Started through a shim (a link named nvcc, ptxas, ...): proxy mode, before any parsing.
        std::string arg0 = cudaenv::cli::started_as(ctx, argv[0]);
        if (!arg0.empty() && arg0 != "cudaenv" && arg0.rfind("cudaenv", 0) != 0) {
            return cudaenv::cli::run_proxy(ctx, arg0, argc, argv);
        }
        return cudaenv::cli::run(ctx, argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "cudaenv: internal error: " << e.what() << "\n"
                  << "help: this is a bug; please report it with the command line you ran\n";
        return 70;
    }
}
