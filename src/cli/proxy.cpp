#include "proxy.hpp"

#include "core/activate/compat.hpp"
#include "core/activate/environment.hpp"
#include "core/activate/selection.hpp"
#include "core/activate/shims.hpp"
#include "core/install/install.hpp"
#include "core/text.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ostream>

namespace cudaenv::cli {

namespace {

namespace fs = std::filesystem;

constexpr int k_max_depth = 8;

/// `tool` on PATH, skipping the shims folder (for `system`).
std::string
find_on_path(const std::string& path, const std::string& tool, const std::string& shims) {
    for (const auto& dir : activate::split_path_list(path)) {
        if (dir == shims) {
            continue;
        }
        std::string candidate = dir + "/" + tool;
        if (::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
    }
    return {};
}

/// With no cudaenv version selected: the machine's own `tool`, found on PATH past the shims.
int exec_system(Context& ctx,
                const std::string& tool,
                const std::string& shims,
                std::vector<char*>& args) {
    std::string real = find_on_path(ctx.getenv("PATH").value_or(""), tool, shims);
    if (real.empty()) {
        *ctx.err << "cudaenv: error: '" << tool
                 << "' is not on PATH and no cudaenv version is selected\n"
                 << "help: cudaenv use SPEC, or cudaenv global SPEC\n";
        return 127;
    }
    args[0] = real.data(); // the tool sees where it really is (nvcc finds its toolkit so)
    ::execv(real.c_str(), args.data());
    *ctx.err << "cudaenv: error: cannot run '" << real << "': " << std::strerror(errno) << "\n";
    return 126;
}

/// `tool` of the selected version, with CUDA_HOME and CUDA_PATH set to it.
int exec_in_version(Context& ctx,
                    const store::Root& root,
                    const activate::Selection& sel,
                    const std::string& tool,
                    std::vector<char*>& args) {
    auto prefix = root.version_dir(*sel.version);
    auto real = prefix / "bin" / tool;
    if (::access(real.c_str(), X_OK) != 0) {
        std::string have = join(install::versions_having(root, fs::path("bin") / tool));
        *ctx.err << "cudaenv: error: '" << tool << "' is not in " << *sel.version << " (set by "
                 << sel.origin_text() << ")\n"
                 << (have.empty() ? "help: no installed version has it\n"
                                  : "help: it is in: " + have + "\n");
        return 127;
    }
    ::setenv("CUDA_HOME", prefix.c_str(), 1);
    ::setenv("CUDA_PATH", prefix.c_str(), 1);
    // cuda-gdb, compute-sanitizer and the profilers load libcuda: a version installed with
    // --compat gives them its compat libcuda where this machine's driver is too old for it, and
    // on a Jetson Orin a CUDA 13 version its compat_orin (Orin's driver for CUDA 13) first
    std::string first;
    if (activate::has_compat_libraries(prefix)) { // one access(2) for every other version
        if (auto compat = activate::compat_state(prefix, ctx.sysroot()); compat.use()) {
            first = compat.dir.string();
        }
    }
    if (auto orin = activate::compat_orin_dir(prefix, ctx.sysroot())) { // one stat
        first = orin->string() + (first.empty() ? "" : ":" + first);
    }
    if (!first.empty()) {
        auto ld = ctx.getenv("LD_LIBRARY_PATH").value_or("");
        auto list = first + (ld.empty() ? "" : ":" + ld);
        ::setenv("LD_LIBRARY_PATH", list.c_str(), 1);
    }
    // argv[0] is the tool's real path, not the shim's name: nvcc (and every tool that finds its
    // toolkit from argv[0]) would otherwise search PATH, find the shim, and take the shims
    // folder for its bin/ -- no headers, or another CUDA's nvcc.profile.
    std::string real_str = real.string();
    args[0] = real_str.data();
    ::execv(real.c_str(), args.data());
    *ctx.err << "cudaenv: error: cannot run '" << real.string() << "': " << std::strerror(errno)
             << "\n";
    return 126;
}

} // namespace

int run_proxy(Context& ctx, const std::string& tool, int argc, char** argv) {
    // set by the shims themselves; an unreadable value counts as the deepest
    auto raw = ctx.getenv("CUDAENV_RECURSION_COUNT");
    auto count = ctx.env_number_value("CUDAENV_RECURSION_COUNT");
    int depth = !raw || raw->empty() ? 0 : count ? static_cast<int>(*count) : k_max_depth;
    if (depth >= k_max_depth) {
        *ctx.err << "cudaenv: error: the '" << tool << "' shim called itself " << depth
                 << " times; is a shim folder inside a version's bin/?\n";
        return 127;
    }
    ::setenv("CUDAENV_RECURSION_COUNT", std::to_string(depth + 1).c_str(), 1);
    if (auto cfg = ctx.load_config(); !cfg) {
        report_error(ctx, cfg.error(), tool);
        return 127;
    }
    auto root = ctx.root();
    // Exact version names need no manifests; a SPEC in .cuda-version reads the framework tables.
    auto sel = activate::select_lazily(
        root, [&ctx] { return ctx.manifests_path(); }, ctx.env, ctx.cwd);
    if (!sel) {
        report_error(ctx, sel.error(), tool);
        return 127;
    }
    std::vector<char*> args(argv, argv + argc);
    args.push_back(nullptr);
    if (!sel->version) {
        return exec_system(ctx, tool, activate::shims_dir(root).string(), args);
    }
    return exec_in_version(ctx, root, *sel, tool, args);
}

} // namespace cudaenv::cli
