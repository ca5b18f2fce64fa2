// cudaenv modulefile SPEC [--lua|--tcl] [--to DIR], and the module formats of `env --shell`.
#include "core/activate/modulefile.hpp"

#include "common.hpp"
#include "core/fs.hpp"
#include "core/store/records.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>

namespace cudaenv::cli {

Result<std::string> module_text(const std::filesystem::path& prefix,
                                activate::ModuleFormat format,
                                const std::filesystem::path& shim) {
    auto rec = CUDAENV_TRY(store::read_version_record(prefix));
    activate::ModuleInfo info{prefix.filename().string(), rec.cuda, rec.cudnn, shim};
    return activate::modulefile(prefix, info, format);
}

namespace {

struct ModulefileCli {
    std::string spec;
    bool lua = false;
    bool tcl = false;
    std::string to;
};

int run_modulefile(const ModulefileCli& o, Context& ctx) {
    auto format = o.tcl ? activate::ModuleFormat::tcl : activate::ModuleFormat::lua;
    auto prefix = ops::prefix_of(ctx, o.spec);
    if (!prefix) {
        return report_error(ctx, prefix.error(), "modulefile");
    }
    auto text = module_text(*prefix, format, ctx.shim_exe());
    if (!text) {
        return report_error(ctx, text.error(), "modulefile");
    }
    nlohmann::json doc{{"command", "modulefile"},
                       {"ok", true},
                       {"version", prefix->filename().string()},
                       {"format", o.tcl ? "tcl" : "lua"}};
    if (o.to.empty()) {
        if (ctx.json) {
            doc["text"] = *text;
            emit_json(ctx, doc);
        } else {
            *ctx.out << *text;
        }
        return 0;
    }
    // DIR/cuda/<version>[.lua]: the layout `module use DIR` expects, family "cuda"; below DIR
    // nothing is written through a link (a module tree is often shared by a team).
    auto rel = std::filesystem::path("cuda") / prefix->filename();
    if (!o.tcl) {
        rel += ".lua";
    }
    auto file = std::filesystem::path(o.to) / rel;
    auto tree = Contained::open(o.to, true);
    auto st = tree ? tree->write_file(rel, *text) : Status(tree.error());
    if (!st) {
        return report_error(ctx, st.error(), "modulefile");
    }
    if (ctx.json) {
        doc["file"] = file.string();
        emit_json(ctx, doc);
    } else {
        *ctx.out << "wrote " << file.string() << " (module load cuda/"
                 << prefix->filename().string() << " after module use " << o.to << ")\n";
    }
    return 0;
}

} // namespace

void setup_modulefile(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<ModulefileCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer(
        "Examples:\n  cudaenv modulefile tf-2.13                      Lmod (Lua) on stdout\n"
        "  cudaenv modulefile 12.4 --tcl                   Tcl (Environment Modules)\n"
        "  sudo cudaenv modulefile 11.8 --to /opt/modulefiles\n"
        "      then: module use /opt/modulefiles; module load cuda/<version>\n");
    sub->add_option("spec", o->spec, "an installed version (default: the selected one)");
    auto* lua = sub->add_flag("--lua", o->lua, "Lmod's Lua (the default)");
    sub->add_flag("--tcl", o->tcl, "Tcl, for Environment Modules and Lmod")->excludes(lua);
    sub->add_option("--to", o->to, "write DIR/cuda/<version>[.lua] instead of printing")
        ->option_text("DIR");
    sub->callback([o, &ctx] { ctx.exit_code = run_modulefile(*o, ctx); });
}

} // namespace cudaenv::cli
