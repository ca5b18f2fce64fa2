// cudaenv version: the selected version and what selected it (and the project's framework).
#include "common.hpp"
#include "core/activate/project.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <ostream>

namespace cudaenv::cli {

namespace {

int run_version(Context& ctx) {
    auto sel = ops::selection(ctx);
    if (!sel) {
        return report_error(ctx, sel.error(), "version");
    }
    auto cat = ctx.frameworks_catalog();
    std::optional<std::string> file_text;
    if (sel->origin == activate::Selection::Origin::file) {
        file_text = sel->written;
    }
    std::filesystem::path project =
        sel->origin == activate::Selection::Origin::file ? sel->source.parent_path() : ctx.cwd;
    auto pin = cat ? activate::framework_pin(**cat, file_text, project, ctx.env) : std::nullopt;
    std::string name = sel->version.value_or("system");
    if (ctx.json) {
        nlohmann::json fw = pin ? nlohmann::json{{"name", pin->framework},
                                                 {"version", pin->version.str()},
                                                 {"source", pin->source}}
                                : nlohmann::json();
        emit_json(ctx,
                  {{"command", "version"},
                   {"ok", true},
                   {"version", name},
                   {"written", sel->written},
                   {"origin", sel->origin_text()},
                   {"framework", fw}});
        return 0;
    }
    if (sel->version) {
        *ctx.out << name << " (set by " << sel->origin_text() << ")\n";
    } else {
        *ctx.out
            << "system (no CUDAENV_VERSION, no .cuda-version here or above, no global choice)\n";
    }
    if (pin) {
        *ctx.out << pin->framework << " " << pin->version.str() << " (from " << pin->source
                 << ")\n";
    }
    return 0;
}

} // namespace

void setup_version(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Examples:\n  cudaenv version\n  cudaenv version --json\n");
    sub->callback([&ctx] { ctx.exit_code = run_version(ctx); });
}

} // namespace cudaenv::cli
