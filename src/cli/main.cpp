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
    for (char** e = environ; *e; ++e) {
        std::string kv = *e;
        auto eq = kv.find('=');
        if (eq != std::string::npos) {
            ctx.env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
        }
    }
    if (auto it = ctx.env.find("CUDAENV_FAILPOINTS"); it != ctx.env.end()) {
        cudaenv::failpoint::configure(it->second);
    }
    ctx.stderr_tty = ::isatty(2) == 1 && ctx.env.find("NO_COLOR") == ctx.env.end();
    std::error_code ec;
    ctx.exe_path = std::filesystem::read_symlink("/proc/self/exe", ec);
    ctx.cwd = std::filesystem::current_path(ec);
    ctx.out = &std::cout;
    ctx.err = &std::cerr;
    try {
        // Started through a shim (a link named nvcc, ptxas, ...): proxy mode, before any parsing.
        std::string arg0 = ctx.env.count("CUDAENV_FORCE_ARG0")
                               ? ctx.env["CUDAENV_FORCE_ARG0"]
                               : std::filesystem::path(argv[0]).filename().string();
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
