// cudaenv-shim: what every link in <root>/shims points to. Started as `nvcc` (or any tool) it
// picks the version and execs the real tool; `cudaenv-shim __hook SHELL` serves the prompt hook,
// `cudaenv-shim __compat PREFIX` tells a modulefile whether the version's compat/ is used here.
// It links no libcurl, libarchive or OpenSSL, and no <iostream>: nothing is built before main
// (cli/context.hpp's LazyStream), so it starts about as fast as a static no-op.
#include "context.hpp"
#include "core/activate/compat.hpp"
#include "hook.hpp"
#include "proxy.hpp"

#include <exception>
#include <filesystem>
#include <ostream>

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
            if (argc == 3 && std::string(argv[1]) == "__compat") {
                // what a modulefile asks at load time: the folder to put first on
                // LD_LIBRARY_PATH, or nothing
                // (a Jetson Orin's compat_orin, else --compat's compat/ when it is used)
                if (auto orin = cudaenv::activate::compat_orin_dir(argv[2], ctx.sysroot())) {
                    *ctx.out << orin->string() << "\n";
                    return 0;
                }
                auto compat = cudaenv::activate::compat_state(argv[2], ctx.sysroot());
                *ctx.out << (compat.use() ? compat.dir.string() + "\n" : "");
                return 0;
            }
            *ctx.err << "cudaenv-shim: run it through a shim (a link named after a tool), or as "
                        "'cudaenv-shim __hook SHELL'\n";
            return 2;
        }
        return cudaenv::cli::run_proxy(ctx, arg0, argc, argv);
    } catch (const std::exception& e) {
        *ctx.err << "cudaenv: internal error: " << e.what() << "\n";
        return 70;
    }
}
