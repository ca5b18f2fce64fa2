// cudaenv env [SPEC] [--shell bash|zsh|fish|lmod|tcl]: the version's environment as shell code
// (or as a modulefile).
#include "../hook.hpp"
#include "common.hpp"
#include "core/activate/bridges.hpp"
#include "core/activate/environment.hpp"
#include "core/activate/modulefile.hpp"
#include "core/doctor/pci_chips.hpp"
#include "core/fs.hpp"
#include "core/store/records.hpp"
#include "core/sys/gpus.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

/// The machine's target: .cuda-version's `sm =` / `driver =` lines, else the GPUs and driver
/// present (read from sysfs and /proc under CUDAENV_SYSROOT).
Result<activate::Target> target_of(Context& ctx) {
    activate::Target t;
    if (auto file = activate::find_version_file(ctx.cwd)) {
        auto text = CUDAENV_TRY(read_text_file(*file));
        t = CUDAENV_TRY(activate::parse_target(text, file->string()));
    }
    auto machine = sys::read_machine_gpus(ctx.sysroot());
    if (t.sms.empty()) {
        std::string chips;
        for (const auto& g : machine.gpus) {
            if (auto chip = doctor::chip_of_device(g.device)) {
                t.sms.push_back(chip->compute_capability);
                chips += (chips.empty() ? "" : ", ") + g.address + " " + std::string(chip->chip);
            }
        }
        std::sort(t.sms.begin(), t.sms.end());
        t.sms.erase(std::unique(t.sms.begin(), t.sms.end()), t.sms.end());
        t.sms_from = "the GPUs present (" + chips + ")";
    }
    if (!t.driver && machine.driver) {
        t.driver = machine.driver;
        t.driver_from = "the loaded driver";
    }
    return t;
}

int run_bridge(const std::string& tool,
               const std::string& shell,
               const std::string& spec,
               Context& ctx) {
    auto p = ops::prefix_of(ctx, spec);
    if (!p) {
        return report_error(ctx, p.error(), "env");
    }
    auto record = store::read_version_record(*p);
    auto cuda = record ? Version::try_parse(record->cuda) : std::nullopt;
    if (!cuda) {
        return report_error(
            ctx,
            Error(ErrorCode::not_found,
                  "env --for " + tool + ": " + p->string() + " has no cudaenv version record")
                .with_hint("select a version cudaenv installed: cudaenv use 12.4"),
            "env");
    }
    auto cat = ctx.catalog(); // the CUDA releases too: a build's driver minimum
    if (!cat) {
        return report_error(ctx, cat.error(), "env");
    }
    auto target = target_of(ctx);
    if (!target) {
        return report_error(ctx, target.error(), "env");
    }
    std::optional<std::string> file_text;
    auto project = ctx.cwd;
    if (auto file = activate::find_version_file(ctx.cwd)) {
        if (auto text = read_text_file(*file); text) {
            if (auto written = activate::parse_version_file(*text, file->string())) {
                file_text = *written;
            }
        }
        project = file->parent_path();
    }
    auto pin = activate::framework_pin(**cat, file_text, project, ctx.env);
    auto bridge = activate::bridge_for(tool, *cuda, **cat, pin, *target);
    if (!bridge) {
        return report_error(ctx, bridge.error(), "env");
    }
    if (ctx.json) {
        nlohmann::json vars = nlohmann::json::object();
        for (const auto& [k, v] : bridge->vars) {
            vars[k] = v;
        }
        emit_json(ctx,
                  {{"command", "env"},
                   {"ok", true},
                   {"for", tool},
                   {"cuda", cuda->str()},
                   {"env", vars},
                   {"notes", bridge->notes}});
        return 0;
    }
    for (const auto& n : bridge->notes) {
        *ctx.err << "cudaenv: " << (n.rfind("warning: ", 0) == 0 ? "" : "note: ") << n << "\n";
    }
    for (const auto& [k, v] : bridge->vars) {
        *ctx.out << (shell == "fish" ? "set -gx " + k + " " : "export " + k + "=") << q(v) << ";\n";
    }
    return 0;
}

int run_env(const std::string& shell, const std::string& spec, Context& ctx) {
    auto p = ops::prefix_of(ctx, spec);
    if (!p) {
        return report_error(ctx, p.error(), "env");
    }
    if (shell == "lmod" || shell == "tcl") {
        auto text = module_text(
            *p, shell == "lmod" ? activate::ModuleFormat::lua : activate::ModuleFormat::tcl);
        if (!text) {
            return report_error(ctx, text.error(), "env");
        }
        *ctx.out << *text;
        return 0;
    }
    auto vars = activate::version_environment(*p, ctx.root().version_dirs(), ctx.env);
    if (ctx.json) {
        emit_json(ctx, {{"command", "env"}, {"ok", true}, {"prefix", p->string()}, {"env", vars}});
        return 0;
    }
    for (const auto& [k, v] : vars) {
        if (shell == "fish") {
            std::string items;
            if (k == "PATH" || k == "LD_LIBRARY_PATH") {
                for (const auto& item : activate::split_path_list(v)) {
                    items += " " + q(item);
                }
            } else {
                items = " " + q(v);
            }
            *ctx.out << "set -gx " << k << items << ";\n";
        } else {
            *ctx.out << "export " << k << "=" << q(v) << ";\n";
        }
    }
    return 0;
}

} // namespace

void setup_env(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto shell = std::make_shared<std::string>("bash");
    auto s = std::make_shared<std::string>();
    auto tool = std::make_shared<std::string>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer(
        "Examples:\n  eval \"$(cudaenv env)\"                 this shell, the selected version\n"
        "  cudaenv env 12.4 --shell fish | source\n"
        "  cudaenv env 11.8 --shell lmod > ~/modules/cuda/11.8.lua\n"
        "  eval \"$(cudaenv env --for uv)\"        uv picks torch wheels for this CUDA and GPU\n"
        "  cudaenv env --for conda --json          CONDA_OVERRIDE_CUDA, CUDAARCHS, ...\n");
    sub->add_option("spec", *s, "a version (default: the selected one)");
    sub->add_option("--shell", *shell, "bash, zsh, fish, lmod (Lua modulefile) or tcl")
        ->check(CLI::IsMember({"bash", "zsh", "fish", "lmod", "tcl"}));
    sub->add_option("--for",
                    *tool,
                    "the variables uv, pip, conda or pixi read (UV_TORCH_BACKEND, PyTorch's "
                    "index, CONDA_OVERRIDE_CUDA) and CUDAARCHS/TORCH_CUDA_ARCH_LIST")
        ->check(CLI::IsMember({"uv", "pip", "conda", "pixi"}));
    sub->callback([shell, s, tool, &ctx] {
        ctx.exit_code =
            tool->empty() ? run_env(*shell, *s, ctx) : run_bridge(*tool, *shell, *s, ctx);
    });
}

} // namespace cudaenv::cli
