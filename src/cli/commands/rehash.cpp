// cudaenv rehash: a shim for every tool in the installed versions.
#include "core/activate/shims.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <ostream>

namespace cudaenv::cli {

void setup_rehash(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("install and uninstall rehash by themselves; run it after copying versions in.\n"
                "Examples:\n  cudaenv rehash\n  cudaenv rehash --json\n");
    sub->callback([&ctx] {
        auto r = activate::rehash(ctx.root(), ctx.shim_exe(), ctx.lock_timeout());
        if (!r) {
            ctx.exit_code = report_error(ctx, r.error(), "rehash");
            return;
        }
        if (ctx.json) {
            emit_json(ctx,
                      {{"command", "rehash"},
                       {"ok", true},
                       {"changed", r->changed},
                       {"shims", r->tools}});
        } else {
            *ctx.out << r->tools.size() << " shims in " << activate::shims_dir(ctx.root()).string()
                     << "\n";
        }
        ctx.exit_code = 0;
    });
}

} // namespace cudaenv::cli
