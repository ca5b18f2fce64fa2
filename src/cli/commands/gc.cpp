// cudaenv gc [--apply]: what nothing needs (versions no pin, global or journal needs; store
// entries no version uses; downloads). A dry run unless --apply.
#include "common.hpp"
#include "core/ops/remove.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iomanip>
#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

const char* kind_name(install::GcItem::Kind k) {
    switch (k) {
    case install::GcItem::Kind::version:
        return "version";
    case install::GcItem::Kind::store_entry:
        return "store";
    case install::GcItem::Kind::download:
        return "download";
    }
    return "?";
}

nlohmann::json gc_json(const install::GcPlan& plan, bool apply) {
    nlohmann::json items = nlohmann::json::array();
    for (const auto& i : plan.items) {
        items.push_back({{"kind", kind_name(i.kind)},
                         {"name", i.name},
                         {"path", i.path.string()},
                         {"bytes", i.bytes}});
    }
    return {{"command", "gc"},
            {"ok", true},
            {"dry_run", !apply},
            {"items", items},
            {"bytes", plan.bytes},
            {"kept", plan.kept}};
}

int run_gc(bool apply, Context& ctx) {
    ops::RemoveObserver observer;
    observer.warning = [&ctx](const std::string& w) {
        *ctx.err << "cudaenv: warning: " << w << "\n";
    };
    auto plan = ops::collect_garbage(ctx, apply, observer);
    if (!plan) {
        return report_error(ctx, plan.error(), "gc");
    }
    if (ctx.json) {
        emit_json(ctx, gc_json(*plan, apply));
        return 0;
    }
    for (const auto& [v, why] : plan->kept) {
        *ctx.out << "  keep    " << std::left << std::setw(28) << v << " " << why << "\n";
    }
    for (const auto& i : plan->items) {
        *ctx.out << (apply ? "  removed " : "  remove  ") << std::left << std::setw(9)
                 << kind_name(i.kind) << std::setw(40) << i.name
                 << (i.bytes ? human_size(i.bytes) : std::string()) << "\n";
    }
    if (plan->items.empty()) {
        *ctx.out << "nothing to collect in " << ctx.root().dir.string() << "\n";
    } else if (apply) {
        *ctx.out << "freed " << human_size(plan->bytes) << "\n";
    } else {
        *ctx.out << "would free " << human_size(plan->bytes) << "; cudaenv gc --apply does it\n";
    }
    return 0;
}

} // namespace

void setup_gc(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto apply = std::make_shared<bool>(false);
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Kept: versions a project pinned with `cudaenv use` (recorded in <root>/pins),\n"
                "the global version, rollback's target, and what is selected here.\n"
                "Examples:\n  cudaenv gc              what would go, and how much it frees\n"
                "  cudaenv gc --apply\n");
    sub->add_flag("--apply", *apply, "remove it (default: only list it)");
    sub->callback([apply, &ctx] { ctx.exit_code = run_gc(*apply, ctx); });
}

} // namespace cudaenv::cli
