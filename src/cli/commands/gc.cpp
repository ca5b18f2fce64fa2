// cudaenv gc [--apply]: what nothing needs (versions no pin, global or journal needs; store
// entries no version uses; downloads). A dry run unless --apply.
#include "core/install/gc.hpp"

#include "common.hpp"
#include "core/activate/project.hpp"
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

int run_gc(bool apply, Context& ctx) {
    auto cat = ctx.frameworks_catalog();
    if (!cat) {
        return report_error(ctx, cat.error(), "gc");
    }
    auto root = ctx.root();
    auto needed = activate::needed_versions(root, (*cat)->frameworks, ctx.env, ctx.cwd);
    if (!needed) {
        return report_error(ctx, needed.error(), "gc");
    }
    auto plan = apply ? install::run_gc(root, *needed, ctx.lock_timeout())
                      : Result<install::GcPlan>(install::plan_gc(root, *needed));
    if (!plan) {
        return report_error(ctx, plan.error(), "gc");
    }
    bool removed_version = false;
    for (const auto& i : plan->items) {
        removed_version = removed_version || i.kind == install::GcItem::Kind::version;
    }
    if (apply && removed_version) {
        rehash_after_change(ctx);
    }
    if (apply) {
        // records of pins whose project or .cuda-version is gone keep nothing: they go too
        std::vector<std::filesystem::path> stale;
        activate::recorded_pins(root, &stale);
        for (const auto& f : stale) {
            std::error_code ec;
            std::filesystem::remove(f, ec);
        }
    }
    if (ctx.json) {
        nlohmann::json items = nlohmann::json::array();
        for (const auto& i : plan->items) {
            items.push_back({{"kind", kind_name(i.kind)},
                             {"name", i.name},
                             {"path", i.path.string()},
                             {"bytes", i.bytes}});
        }
        emit_json(ctx,
                  {{"command", "gc"},
                   {"ok", true},
                   {"dry_run", !apply},
                   {"items", items},
                   {"bytes", plan->bytes},
                   {"kept", plan->kept}});
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
        *ctx.out << "nothing to collect in " << root.dir.string() << "\n";
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
