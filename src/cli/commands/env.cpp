// cudaenv env [SPEC] [--shell bash|zsh|fish|lmod|tcl]: the version's environment as shell code
// (or as a modulefile).
#include "core/ops/env.hpp"

#include "../hook.hpp"
#include "common.hpp"
#include "core/activate/environment.hpp"
#include "core/activate/modulefile.hpp"
#include "core/fs.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

int run_bridge(const std::string& tool,
               const std::string& shell,
               const std::string& spec,
               Context& ctx) {
    auto out = ops::bridge_env(ctx, tool, spec);
    if (!out) {
        return report_error(ctx, out.error(), "env");
    }
    if (ctx.json) {
        nlohmann::json vars = nlohmann::json::object();
        for (const auto& [k, v] : out->bridge.vars) {
            vars[k] = v;
        }
        emit_json(ctx,
                  {{"command", "env"},
                   {"ok", true},
                   {"for", tool},
                   {"cuda", out->cuda.str()},
                   {"env", vars},
                   {"notes", out->bridge.notes}});
        return 0;
    }
    for (const auto& n : out->bridge.notes) {
        *ctx.err << "cudaenv: " << (n.rfind("warning: ", 0) == 0 ? "" : "note: ") << n << "\n";
    }
    for (const auto& [k, v] : out->bridge.vars) {
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
        auto text =
            module_text(*p,
                        shell == "lmod" ? activate::ModuleFormat::lua : activate::ModuleFormat::tcl,
                        ctx.shim_exe());
        if (!text) {
            return report_error(ctx, text.error(), "env");
        }
        *ctx.out << *text;
        return 0;
    }
    auto vars =
        activate::version_environment(*p, ctx.root().version_dirs(), ctx.env, ctx.sysroot());
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
