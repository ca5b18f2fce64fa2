// cudaenv uninstall SPEC... (aliases rm, remove): the same SPECs every command takes. Asks on a
// terminal (-y skips); scripts and --json are not asked.
#include "common.hpp"
#include "core/ops/remove.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct UninstallCli {
    std::vector<std::string> specs;
    bool force = false;
    bool yes = false;
};

int run_uninstall(const UninstallCli& o, Context& ctx) {
    auto targets = ops::uninstall_targets(ctx, o.specs);
    if (!targets) {
        return report_error(ctx, targets.error(), "uninstall");
    }
    std::string what;
    for (const auto& t : *targets) {
        what += (what.empty() ? "" : ", ") + t.version +
                (t.bytes ? " (" + human_size(*t.bytes) + ")" : "");
    }
    if (!confirm(ctx, "remove " + what + "?", o.yes)) {
        *ctx.err << "cudaenv: nothing removed\n";
        return 1;
    }
    ops::RemoveObserver observer;
    observer.removed = [&ctx](const ops::Uninstalled& u) {
        if (!ctx.json) {
            *ctx.out << (u.removed.changed ? "removed " : "not installed: ") << u.version << "\n";
        }
    };
    observer.warning = [&ctx](const std::string& w) {
        *ctx.err << "cudaenv: warning: " << w << "\n";
    };
    auto report = ops::uninstall(ctx, *targets, o.force, observer);
    if (!report) {
        return report_error(ctx, report.error(), "uninstall");
    }
    if (ctx.json) {
        nlohmann::json done = nlohmann::json::array();
        for (const auto& u : report->removed) {
            done.push_back({{"version", u.version},
                            {"changed", u.removed.changed},
                            {"store_entries_removed", u.removed.store_entries_removed}});
        }
        bool one = done.size() == 1;
        emit_json(
            ctx,
            {{"command", "uninstall"},
             {"ok", true},
             {"changed", report->changed},
             {"version", one ? done[0]["version"] : nlohmann::json()},
             {"store_entries_removed", one ? done[0]["store_entries_removed"] : nlohmann::json()},
             {"removed", done}});
    }
    return 0;
}

} // namespace

void setup_uninstall(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<UninstallCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Examples:\n  cudaenv uninstall tf-2.13               asks first on a terminal\n"
                "  cudaenv rm 11.8 12.4 -y\n"
                "  cudaenv uninstall 11.8.0+cudnn8.6.0.163 --json\n");
    sub->add_option("spec", o->specs, "installed versions or SPECs (cudaenv list)")->required();
    sub->add_flag("-y,--yes", o->yes, "do not ask");
    sub->add_flag("--force", o->force, "remove it even if it is the global version");
    sub->callback([o, &ctx] { ctx.exit_code = run_uninstall(*o, ctx); });
}

} // namespace cudaenv::cli
