// cudaenv exec [--] CMD ARGS...: run a command with the selected version's environment.
#include "common.hpp"
#include "core/activate/environment.hpp"
#include "core/fs.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cerrno>
#include <memory>

namespace cudaenv::cli {

namespace {

int run_exec(const std::vector<std::string>& cmd, Context& ctx) {
    if (cmd.empty()) {
        return report_error(
            ctx,
            Error(ErrorCode::usage, "exec needs a command: cudaenv exec nvcc --version"),
            "exec");
    }
    auto sel = ops::selection(ctx);
    if (!sel) {
        return report_error(ctx, sel.error(), "exec");
    }
    auto env = ctx.env;
    if (sel->version) {
        for (auto& [k, v] : activate::version_environment(ctx.root().version_dir(*sel->version),
                                                          ctx.root().version_dirs(),
                                                          ctx.env,
                                                          ctx.sysroot())) {
            env[k] = v;
        }
    }
    std::vector<std::string> env_store;
    for (const auto& [k, v] : env) {
        env_store.push_back(k + "=" + v);
    }
    std::vector<char*> envp;
    for (auto& e : env_store) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    std::vector<std::string> args = cmd;
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    // PATH lookup with the new PATH, so the version's tools win.
    std::string path = env.count("PATH") ? env["PATH"] : "/usr/bin:/bin";
    ::setenv("PATH", path.c_str(), 1);
    ::execvpe(argv[0], argv.data(), envp.data());
    int err = errno;
    report_error(
        ctx, Error(ErrorCode::failure, "cannot run '" + cmd[0] + "': " + errno_text(err)), "exec");
    return err == ENOENT ? 127 : 126; // as shells report a missing or unrunnable command
}

} // namespace

void setup_exec(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Everything after the command's name is the command's own, as typed.\n"
                "Examples:\n  cudaenv exec nvcc --version\n"
                "  cudaenv exec -- python train.py --epochs 3\n");
    // The command line itself is cut from argv before parsing (app.cpp, split_exec), so this
    // positional only documents it in --help.
    auto shown = std::make_shared<std::vector<std::string>>();
    sub->add_option("command", *shown, "the command and its arguments");
    sub->callback([&ctx] { ctx.exit_code = run_exec(ctx.exec_command, ctx); });
}

} // namespace cudaenv::cli
