// cudaenv's entry point: capture the process state once, run the CLI, map errors to exit codes.
#include "app.hpp"
#include "context.hpp"
#include "core/failpoint.hpp"
#include "core/fetch/download.hpp"
#include "proxy.hpp"

#include <unistd.h>

#include <csignal>
#include <exception>
#include <iostream>

extern char** environ;

int main(int argc, char** argv) {
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
