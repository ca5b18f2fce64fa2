// cudaenv prefix [SPEC]: a version's directory.
#include "common.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>

namespace cudaenv::cli {

void setup_prefix(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto s = std::make_shared<std::string>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Examples:\n  cudaenv prefix                   the selected version's directory\n"
                "  cudaenv prefix tf-2.13 --json\n"
                "  export CUDA_HOME=$(cudaenv prefix)\n");
    sub->add_option("spec", *s, "a version (default: the selected one)");
    sub->callback([s, &ctx] {
        auto p = ops::prefix_of(ctx, *s);
        if (!p) {
            ctx.exit_code = report_error(ctx, p.error(), "prefix");
            return;
        }
        if (ctx.json) {
            emit_json(ctx,
                      {{"command", "prefix"},
                       {"ok", true},
                       {"prefix", p->string()},
                       {"version", p->filename().string()}});
        } else {
            *ctx.out << p->string() << "\n";
        }
        ctx.exit_code = 0;
    });
}

} // namespace cudaenv::cli
