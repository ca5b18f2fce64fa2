// cudaenv-shim: what every link in <root>/shims points to. Started as `nvcc` (or any tool) it
// picks the version and execs the real tool; `cudaenv-shim __hook SHELL` serves the prompt hook.
// It links no libcurl, libarchive or OpenSSL, so it starts in about a millisecond.
#include "context.hpp"
#include "hook.hpp"
#include "proxy.hpp"

#include <exception>
#include <filesystem>
#include <iostream>

extern char** environ;

int main(int argc, char** argv) {
    cudaenv::cli::Context ctx;
    cudaenv::cli::capture_process(ctx, environ);
    try {
        std::string arg0 = cudaenv::cli::started_as(ctx, argv[0]);
        if (arg0 == "cudaenv-shim") {
            if (argc >= 2 && std::string(argv[1]) == "__hook") {
                return cudaenv::cli::run_hook(argc >= 3 ? argv[2] : "", ctx);
            }
            std::cerr << "cudaenv-shim: run it through a shim (a link named after a tool), or as "
                         "'cudaenv-shim __hook SHELL'\n";
            return 2;
        }
        return cudaenv::cli::run_proxy(ctx, arg0, argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "cudaenv: internal error: " << e.what() << "\n";
        return 70;
    }
}
