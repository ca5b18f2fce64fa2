// cudaenv global [SPEC | system | --unset]: the machine's version (/usr/local/cuda, ld.so.conf.d,
// ldconfig). It is machine-wide, so the directory it runs from decides nothing: a project whose
// framework cannot use the version gets a warning (its own pin overrides global there anyway).
#include "common.hpp"
#include "core/activate/project.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct GlobalCli {
    std::string spec;
    bool force = false;
    bool dry_run = false;
    bool unset = false;
};

int show_global(Context& ctx) {
    auto r = store::effective_global(ctx.root());
    if (!r) {
        return report_error(ctx, r.error(), "global");
    }
    const auto& g = r->version;
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", "global"},
                   {"ok", true},
                   {"version", g.value_or("system")},
                   {"state", r->owner.state_file().string()}});
    } else {
        *ctx.out << g.value_or("system") << "\n";
    }
    return 0;
}

activate::SwitchOptions options(const GlobalCli& o, const Context& ctx) {
    activate::SwitchOptions so;
    so.force = o.force;
    so.dry_run = o.dry_run;
    so.lock_timeout = ctx.lock_timeout();
    return so;
}

int run_global(const GlobalCli& o, Context& ctx) {
    auto root = ctx.root();
    auto m = ops::machine_of(ctx);
    if (o.unset || o.spec == "system") {
        auto out = activate::unset_global(root, m, options(o, ctx));
        if (!out) {
            return report_error(ctx, out.error(), "global");
        }
        return report_switch(ctx, "global", *out, m, o.dry_run);
    }
    if (o.spec.empty()) {
        return show_global(ctx);
    }
    auto cat = ctx.frameworks_catalog();
    if (!cat) {
        return report_error(ctx, cat.error(), "global");
    }
    auto version = activate::match_installed(root, (*cat)->frameworks, o.spec);
    if (!version) {
        // Switching the machine to what is not there is a state conflict (docs/reliability.md S4);
        // a SPEC that is no SPEC stays a usage error.
        Error e = version.error();
        if (e.code != ErrorCode::usage) {
            e.code = ErrorCode::conflict;
        }
        return report_error(ctx, e, "global");
    }
    auto out = activate::switch_global(root, m, *version, options(o, ctx));
    if (!out) {
        return report_error(ctx, out.error(), "global");
    }
    // The machine's choice is not this directory's: a project here that cannot use it keeps
    // its own pin (or should get one). Said after the switch, never instead of it.
    if (auto conflict = activate::project_framework_conflict(
            **cat, root, *version, std::nullopt, ctx.cwd, ctx.env)) {
        out->warnings.push_back(conflict->message + "; this project needs its own pin: cudaenv use "
                                                    "SPEC here");
    }
    return report_switch(ctx, "global", *out, m, o.dry_run);
}

} // namespace

void setup_global(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<GlobalCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Examples:\n  cudaenv global                 the machine's version\n"
                "  cudaenv global tf-2.13         repoint /usr/local/cuda, ld.so.conf.d, ldconfig\n"
                "  cudaenv global system          back to no cudaenv version (same as --unset)\n"
                "  CUDAENV_SYSROOT=/mnt/image cudaenv global 12.4 --dry-run\n");
    sub->add_option("spec", o->spec, "an installed version, a SPEC, or system");
    sub->add_flag("--unset", o->unset, "remove cudaenv's link and ld.so.conf.d entry (system)");
    sub->add_flag("--force", o->force, "replace a link or directory cudaenv does not own");
    sub->add_flag("--dry-run", o->dry_run, "say what would change; change nothing");
    sub->callback([o, &ctx] { ctx.exit_code = run_global(*o, ctx); });
}

} // namespace cudaenv::cli
