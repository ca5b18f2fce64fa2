// cudaenv use SPEC | use --unset: the project's pin (.cuda-version, recorded for gc).
#include "common.hpp"
#include "core/activate/project.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct UseCli {
    std::string spec;
    bool force = false;
    bool unset = false;
    bool match = false;
};

int run_unset(Context& ctx) {
    auto removed = activate::remove_project_pin(ctx.root(), ctx.cwd);
    if (!removed) {
        return report_error(ctx, removed.error(), "use");
    }
    auto file = ctx.cwd / activate::k_version_file;
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", "use"},
                   {"ok", true},
                   {"changed", *removed},
                   {"file", file.string()},
                   {"version", nullptr}});
    } else {
        *ctx.out << (*removed ? "removed " : "no pin here: ") << file.string() << "\n";
        auto above = activate::find_version_file(ctx.cwd);
        if (above) {
            *ctx.out << "note: " << above->string() << " still selects a version here\n";
        }
    }
    return 0;
}

int run_use_match(const UseCli& o, Context& ctx) {
    auto cat = ctx.frameworks_catalog();
    if (!cat) {
        return report_error(ctx, cat.error(), "use");
    }
    auto root = ctx.root();
    auto m = activate::match_environment(**cat, root, ctx.env);
    if (!m) {
        return report_error(ctx, m.error(), "use");
    }
    if (!m->installed) {
        auto e = Error(ErrorCode::not_found,
                       "no installed version matches " + m->found + " (built for CUDA " +
                           m->cuda.str() + ")")
                     .with_hint("cudaenv install --match (installs " + m->spec + " and pins it)");
        return report_error(ctx, e, "use");
    }
    if (auto refused = ops::refuse_for_project(ctx, **cat, *m->installed, *m->installed, o.force)) {
        return report_error(ctx, *refused, "use");
    }
    auto written = activate::write_project_pin(root, ctx.cwd, *m->installed);
    if (!written) {
        return report_error(ctx, written.error(), "use");
    }
    print_match(ctx, *m, *written, "use");
    return 0;
}

int run_use(const UseCli& o, Context& ctx) {
    if (o.match) {
        if (!o.spec.empty() || o.unset) {
            return report_error(
                ctx,
                Error(ErrorCode::usage, "use --match chooses the version itself: give no SPEC"),
                "use");
        }
        return run_use_match(o, ctx);
    }
    if (o.unset || o.spec == "system") {
        if (o.spec == "system") {
            // "system" in .cuda-version would name no version; removing the pin is what it means.
            *ctx.err << "cudaenv: note: `use system` removes this project's pin (`use --unset`)\n";
        }
        return run_unset(ctx);
    }
    if (o.spec.empty()) {
        return report_error(ctx,
                            Error(ErrorCode::usage, "use needs a SPEC, or --unset")
                                .with_hint("cudaenv use tf-2.13; cudaenv use --unset"),
                            "use");
    }
    auto cat = ctx.frameworks_catalog();
    if (!cat) {
        return report_error(ctx, cat.error(), "use");
    }
    auto root = ctx.root();
    auto version = activate::match_installed(root, (*cat)->frameworks, o.spec);
    if (!version) {
        return report_error(ctx, version.error(), "use");
    }
    if (auto refused = ops::refuse_for_project(ctx, **cat, *version, o.spec, o.force)) {
        return report_error(ctx, *refused, "use");
    }
    auto written = activate::write_project_pin(root, ctx.cwd, o.spec);
    if (!written) {
        return report_error(ctx, written.error(), "use");
    }
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", "use"},
                   {"ok", true},
                   {"changed", written->changed},
                   {"version", *version},
                   {"file", written->file.string()}});
    } else {
        *ctx.out << (written->changed ? "wrote " : "unchanged: ") << written->file.string() << " ("
                 << o.spec << " -> " << *version << ")\n";
    }
    return 0;
}

} // namespace

void setup_use(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<UseCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer(
        "Examples:\n  cudaenv use tf-2.13          this project runs TensorFlow 2.13's pair\n"
        "  cudaenv use 12.4+cudnn-9.1\n"
        "  cudaenv use --match          the installed CUDA whose nvcc matches this Python\n"
        "                               environment's torch, jax or tensorflow\n"
        "  cudaenv use --unset          remove the pin (back to global or system)\n");
    sub->add_option("spec", o->spec, "an installed version or a SPEC");
    sub->add_flag("--unset", o->unset, "remove this directory's .cuda-version");
    sub->add_flag("--force", o->force, "use it even if the project's framework cannot");
    sub->add_flag("--match",
                  o->match,
                  "pick the installed CUDA that matches the framework in the active Python "
                  "environment (read without importing it)");
    sub->callback([o, &ctx] { ctx.exit_code = run_use(*o, ctx); });
}

} // namespace cudaenv::cli
