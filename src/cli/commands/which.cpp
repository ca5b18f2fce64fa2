// cudaenv which TOOL | LIBRARY: where a tool is in the selected version; for a library
// (libcudnn.so.8), the file the loader picks now and the one it would pick inside `cudaenv exec`.
#include "common.hpp"
#include "core/activate/environment.hpp"
#include "core/doctor/loader.hpp"
#include "core/install/install.hpp"
#include "core/ops/doctor.hpp"
#include "core/text.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

namespace fs = std::filesystem;

/// LD_LIBRARY_PATH entries for another CUDA override what the selection and the ld.so cache give
/// (docs/reliability.md L5): say so on stderr.
void warn_library_path(Context& ctx, const fs::path& prefix) {
    for (const auto& item : activate::split_path_list(ctx.getenv("LD_LIBRARY_PATH").value_or(""))) {
        std::string lower = item;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) {
            return static_cast<char>(std::tolower(c));
        });
        if (!item.empty() && lower.find("cuda") != std::string::npos &&
            item.rfind(prefix.string(), 0) != 0) {
            *ctx.err << "cudaenv: warning: LD_LIBRARY_PATH has '" << item
                     << "', which overrides the selected version's libraries for every program\n";
        }
    }
}

bool is_library(const std::string& name) {
    return name.rfind("lib", 0) == 0 && name.find(".so") != std::string::npos &&
           name.find('/') == std::string::npos;
}

Error not_in(const activate::Selection& sel,
             const std::string& name,
             const std::vector<std::string>& have) {
    auto err = Error(ErrorCode::not_found,
                     "'" + name + "' is not in " + sel.version.value_or("system") + " (set by " +
                         sel.origin_text() + ")");
    return have.empty() ? std::move(err).with_hint("no installed version has it")
                        : std::move(err).with_hint("it is in: " + join(have));
}

nlohmann::json pick_json(const doctor::LoaderPick& p) {
    return {{"path", p.path.empty() ? nlohmann::json() : nlohmann::json(p.path)},
            {"via", p.via},
            {"shadowed", p.shadowed}};
}

int run_which_library(const std::string& lib, const activate::Selection& sel, Context& ctx) {
    auto hc = ops::host_config(ctx);
    if (!hc) {
        return report_error(ctx, hc.error(), "which");
    }
    auto have = install::versions_having(ctx.root(), fs::path("lib64") / lib);
    // the loader's view alone: no facts, no manifests
    doctor::Files now_files(*hc);
    auto now = doctor::Loader(now_files).pick(lib);
    std::optional<doctor::LoaderPick> in_exec;
    if (sel.version) {
        auto env = ctx.env;
        for (auto& [k, v] : activate::version_environment(ctx.root().version_dir(*sel.version),
                                                          ctx.root().version_dirs(),
                                                          ctx.env,
                                                          ctx.sysroot())) {
            env[k] = v;
        }
        auto exec_config = *hc;
        exec_config.env = env;
        doctor::Files exec_files(exec_config);
        in_exec = doctor::Loader(exec_files).pick(lib);
    }
    if (now.path.empty() && (!in_exec || in_exec->path.empty())) {
        return report_error(ctx, not_in(sel, lib, have), "which");
    }
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", "which"},
                   {"ok", true},
                   {"kind", "library"},
                   {"name", lib},
                   {"selected", sel.version.value_or("system")},
                   {"origin", sel.origin_text()},
                   {"now", pick_json(now)},
                   {"exec", in_exec ? pick_json(*in_exec) : nlohmann::json()},
                   {"versions", have}});
    } else {
        auto line = [&](const char* label, const doctor::LoaderPick& p) {
            *ctx.out << label
                     << (p.path.empty() ? std::string("not found") : p.path + " (" + p.via + ")")
                     << "\n";
        };
        line("now:            ", now);
        if (in_exec) {
            line("in cudaenv exec: ", *in_exec);
        } else {
            *ctx.out << "in cudaenv exec: the same (no cudaenv version is selected)\n";
        }
        if (!have.empty()) {
            *ctx.out << "installed in:   " << join(have) << "\n";
        }
    }
    return 0;
}

int run_which(const std::string& name, Context& ctx) {
    auto sel = ops::selection(ctx);
    if (!sel) {
        return report_error(ctx, sel.error(), "which");
    }
    if (is_library(name)) {
        return run_which_library(name, *sel, ctx);
    }
    auto root = ctx.root();
    if (sel->version) {
        auto prefix = root.version_dir(*sel->version);
        auto path = prefix / "bin" / name;
        if (::access(path.c_str(), X_OK) == 0) {
            if (ctx.json) {
                emit_json(ctx,
                          {{"command", "which"},
                           {"ok", true},
                           {"kind", "tool"},
                           {"name", name},
                           {"path", path.string()},
                           {"selected", *sel->version},
                           {"origin", sel->origin_text()}});
            } else {
                *ctx.out << path.string() << "\n";
            }
            warn_library_path(ctx, prefix);
            return 0;
        }
    }
    return report_error(
        ctx, not_in(*sel, name, install::versions_having(root, fs::path("bin") / name)), "which");
}

} // namespace

void setup_which(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto s = std::make_shared<std::string>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Examples:\n  cudaenv which nvcc\n"
                "  cudaenv which libcudnn.so.8       the file the loader picks now, and in exec\n"
                "  cudaenv which libcudart.so.11.0 --json\n");
    sub->add_option("name", *s, "a tool (nvcc, ptxas) or a library (libcudnn.so.8)")->required();
    sub->callback([s, &ctx] { ctx.exit_code = run_which(*s, ctx); });
}

} // namespace cudaenv::cli
