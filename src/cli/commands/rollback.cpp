// cudaenv rollback: the machine as it was before the last `global`.
#include "common.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>

#include <memory>

namespace cudaenv::cli {

namespace {

int run_rollback(bool dry_run, Context& ctx) {
    auto m = ops::machine_of(ctx);
    activate::SwitchOptions so;
    so.dry_run = dry_run;
    so.lock_timeout = ctx.lock_timeout();
    auto out = activate::rollback(ctx.root(), m, so);
    if (!out) {
        return report_error(ctx, out.error(), "rollback");
    }
    return report_switch(ctx, "rollback", *out, m, dry_run);
}

} // namespace

void setup_rollback(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto dry = std::make_shared<bool>(false);
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Puts back the link, the ld.so.conf.d entry and the global choice as they were\n"
                "before the last `cudaenv global` (a second rollback undoes the first).\n"
                "Examples:\n  cudaenv rollback --dry-run\n  sudo cudaenv rollback\n");
    sub->add_flag("--dry-run", *dry, "say what would change; change nothing");
    sub->callback([dry, &ctx] { ctx.exit_code = run_rollback(*dry, ctx); });
}

} // namespace cudaenv::cli
