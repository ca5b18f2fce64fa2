// cudaenv uninstall SPEC... (aliases rm, remove): the same SPECs every command takes. Asks on a
// terminal (-y skips); scripts and --json are not asked.
#include "common.hpp"
#include "core/install/install.hpp"
#include "core/store/records.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
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
    auto cat = ctx.frameworks_catalog();
    if (!cat) {
        return report_error(ctx, cat.error(), "uninstall");
    }
    auto root = ctx.root();
    // Every SPEC is matched first: one that names nothing stops the command before anything goes.
    std::vector<std::string> versions;
    for (const auto& spec : o.specs) {
        auto v = activate::match_installed(root, (*cat)->frameworks, spec);
        if (!v) {
            auto err = v.error();
            auto installed = store::installed_versions(root);
            if (!installed.empty()) {
                std::string all;
                for (const auto& i : installed) {
                    all += (all.empty() ? "" : ", ") + i;
                }
                err.hints = {"installed: " + all};
            }
            return report_error(ctx, err, "uninstall");
        }
        if (std::find(versions.begin(), versions.end(), *v) == versions.end()) {
            versions.push_back(*v);
        }
    }
    std::string what;
    for (const auto& v : versions) {
        auto rec = store::read_version_record(root.version_dir(v));
        what += (what.empty() ? "" : ", ") + v + (rec ? " (" + human_size(rec->bytes) + ")" : "");
    }
    if (!confirm(ctx, "remove " + what + "?", o.yes)) {
        *ctx.err << "cudaenv: nothing removed\n";
        return 1;
    }
    nlohmann::json done = nlohmann::json::array();
    bool changed = false;
    for (const auto& v : versions) {
        auto out = install::uninstall(root, v, o.force, ctx.lock_timeout());
        if (!out) {
            if (changed) {
                rehash_after_change(ctx);
            }
            return report_error(ctx, out.error(), "uninstall");
        }
        changed = changed || out->changed;
        done.push_back({{"version", v},
                        {"changed", out->changed},
                        {"store_entries_removed", out->store_entries_removed}});
        if (!ctx.json) {
            *ctx.out << (out->changed ? "removed " : "not installed: ") << v << "\n";
        }
    }
    if (changed) {
        rehash_after_change(ctx);
    }
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", "uninstall"},
                   {"ok", true},
                   {"changed", changed},
                   {"version", versions.size() == 1 ? nlohmann::json(versions[0]) : nullptr},
                   {"store_entries_removed",
                    versions.size() == 1 ? done[0]["store_entries_removed"] : nlohmann::json()},
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
