// cudaenv shell SPEC | --unset: this shell's version. The shell function `init` defines runs
// `__shell` and evaluates what it prints; `shell` reaching the binary means that function is not
// defined, which is said with how to enable it.
#include "../hook.hpp"
#include "common.hpp"
#include "completion.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct ShellCli {
    std::string spec;
    bool unset = false;
    bool force = false;
};

int run_shell(const ShellCli& o, Context& ctx) {
    std::string shell = shell_of(ctx, "");
    if (o.unset || o.spec == "system") {
        *ctx.out << set_var(shell, "CUDAENV_VERSION", std::nullopt);
        return 0;
    }
    if (o.spec.empty()) {
        auto cur = ctx.getenv("CUDAENV_VERSION");
        if (!cur || cur->empty()) {
            return report_error(ctx,
                                Error(ErrorCode::not_found, "no shell version is set")
                                    .with_hint("cudaenv shell SPEC"),
                                "shell");
        }
        *ctx.out << "echo " << q(*cur) << ";\n";
        return 0;
    }
    auto cat = ctx.frameworks_catalog();
    if (!cat) {
        return report_error(ctx, cat.error(), "shell");
    }
    auto v = activate::match_installed(ctx.root(), (*cat)->frameworks, o.spec);
    if (!v) {
        return report_error(ctx, v.error(), "shell");
    }
    if (auto refused = ops::refuse_for_project(ctx, **cat, *v, o.spec, o.force)) {
        return report_error(ctx, *refused, "shell");
    }
    *ctx.out << set_var(shell, "CUDAENV_VERSION", *v);
    return 0;
}

void add_shell_options(CLI::App& sub, ShellCli& o) {
    sub.add_option("spec", o.spec, "an installed version, a SPEC, or system");
    sub.add_flag("--unset", o.unset, "back to the project's or the global version");
    sub.add_flag("--force", o.force, "use it even if the project's framework cannot");
}

} // namespace

void setup_shell(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<ShellCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Needs shell integration (cudaenv init): the shell function sets CUDAENV_VERSION.\n"
                "Examples:\n  cudaenv shell 12.4\n  cudaenv shell --unset\n");
    add_shell_options(*sub, *o);
    sub->callback([o, &ctx] { // `o` owns what the options write into
        (void)o;
        ctx.exit_code = report_error(
            ctx,
            Error(ErrorCode::usage,
                  "shell integration is not enabled: `cudaenv shell` changes this shell's "
                  "environment, which only the shell function can do")
                .with_hint(enable_hint(ctx)),
            "shell");
    });
}

void setup_shell_helper(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<ShellCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->group("");
    add_shell_options(*sub, *o);
    sub->callback([o, &ctx] { ctx.exit_code = run_shell(*o, ctx); });
}

} // namespace cudaenv::cli
