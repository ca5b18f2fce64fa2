#include "common.hpp"

#include "core/activate/project.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <iostream>
#include <ostream>

namespace cudaenv::cli {

Result<activate::Selection> current_selection(Context& ctx) {
    auto cat = CUDAENV_TRY(ctx.frameworks_catalog());
    return activate::select(ctx.root(), cat->frameworks, ctx.env, ctx.cwd);
}

Result<std::filesystem::path> prefix_of(Context& ctx, const std::string& spec) {
    if (!spec.empty()) {
        auto cat = CUDAENV_TRY(ctx.frameworks_catalog());
        auto v = CUDAENV_TRY(activate::match_installed(ctx.root(), cat->frameworks, spec));
        return ctx.root().version_dir(v);
    }
    auto sel = CUDAENV_TRY(current_selection(ctx));
    if (!sel.version) {
        return Error(ErrorCode::not_found, "no cudaenv version is selected (system)")
            .with_hint("cudaenv use SPEC for this project, or cudaenv global SPEC for the machine");
    }
    return ctx.root().version_dir(*sel.version);
}

activate::Machine machine_of(const Context& ctx) {
    activate::Machine m;
    m.sysroot = ctx.sysroot();
    m.ldconfig = ctx.getenv("CUDAENV_LDCONFIG").value_or("");
    m.ldconfig_timeout = ctx.ldconfig_timeout();
    return m;
}

int report_switch(Context& ctx,
                  const char* command,
                  const activate::SwitchOutcome& out,
                  const activate::Machine& m,
                  bool dry_run) {
    for (const auto& w : out.warnings) {
        *ctx.err << "cudaenv: warning: " << w << "\n";
    }
    if (ctx.json) {
        emit_json(
            ctx,
            {{"command", command},
             {"ok", true},
             {"changed", out.changed},
             {"dry_run", dry_run},
             {"version", out.version},
             {"previous", out.previous},
             {"ldconfig_ran", out.ldconfig_ran},
             {"link", m.link().string()},
             {"ld_conf", m.conf().string()},
             {"restored", out.restored.empty() ? nlohmann::json() : nlohmann::json(out.restored)},
             {"warnings", out.warnings}});
    } else if (!out.changed) {
        *ctx.out << (out.version == "system" ? "system (no cudaenv version)" : out.version)
                 << " is already the global version\n";
    } else if (out.version == "system" && std::string(command) == "global") {
        *ctx.out << (dry_run ? "would remove " : "removed ") << m.link().string() << " and "
                 << m.conf().string() << " (was " << out.previous
                 << "); the machine is back to its own CUDA"
                 << (out.restored.empty() ? ""
                     : out.restored.find(".cudaenv-moved-") != std::string::npos
                         ? " (the directory cudaenv had moved aside to " + out.restored +
                               " is back)"
                         : " (" + m.link().string() + " points at " + out.restored +
                               " again, as cudaenv found it)")
                 << "\n";
    } else {
        *ctx.out << (dry_run ? "would switch " : "switched ") << m.link().string() << " from "
                 << out.previous << " to " << out.version << "\n";
    }
    return 0;
}

std::optional<Error> refuse_for_project(Context& ctx,
                                        const manifest::Catalog& cat,
                                        const std::string& version,
                                        const std::string& spec,
                                        bool force) {
    if (force) {
        return std::nullopt;
    }
    auto e = activate::project_framework_conflict(cat, ctx.root(), version, spec, ctx.cwd, ctx.env);
    if (!e) {
        return std::nullopt;
    }
    e->message = "refusing " + e->message;
    return std::move(*e).with_hint("pass --force to use it anyway");
}

void print_match(Context& ctx,
                 const activate::EnvironmentMatch& m,
                 const activate::PinWrite& written,
                 const char* command) {
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", command},
                   {"ok", true},
                   {"changed", written.changed},
                   {"version", m.installed.value_or("")},
                   {"file", written.file.string()},
                   {"match",
                    {{"framework", m.framework},
                     {"found", m.found},
                     {"found_by", m.found_by},
                     {"cuda", m.cuda.str()},
                     {"cuda_from", m.cuda_from},
                     {"spec", m.spec},
                     {"why", m.why}}}});
        return;
    }
    *ctx.out << "found " << m.found << " (" << m.found_by << ")\n";
    for (const auto& line : m.why) {
        *ctx.out << "  " << line << "\n";
    }
    *ctx.out << (written.changed ? "wrote " : "unchanged: ") << written.file.string() << " ("
             << m.installed.value_or("") << ")\n";
}

Result<doctor::HostConfig> host_config(Context& ctx) {
    doctor::HostConfig hc;
    hc.sysroot = ctx.sysroot();
    if (std::error_code ec; !std::filesystem::is_directory(hc.sysroot, ec)) {
        return Error(ErrorCode::usage,
                     "CUDAENV_SYSROOT=" + hc.sysroot.string() + " is not a directory")
            .with_hint("unset CUDAENV_SYSROOT to diagnose this machine");
    }
    hc.env = ctx.env;
    hc.cwd = ctx.cwd;
    hc.self_exe = ctx.exe_path;
    hc.root = ctx.root();
    // a damaged own state.json is the cuda-link probe's finding: it reads the root's own
    auto global = store::effective_global(hc.root);
    hc.machine_root = global ? global->owner : store::Root{hc.root.dir};
    hc.manifests = ctx.manifests_path();
    hc.manifests_in_use = ctx.manifests_in_use();
    hc.ldconfig = ctx.getenv("CUDAENV_LDCONFIG").value_or("");
    if (auto ms = ctx.env_number_value("CUDAENV_DOCTOR_TIMEOUT")) {
        // seconds (decimals allowed) each child (a library query, nvcc, gcc) may take; default 10
        hc.child_timeout = std::chrono::milliseconds(*ms);
    }
    return hc;
}

bool confirm(Context& ctx, const std::string& question, bool assume_yes) {
    if (assume_yes) {
        return true;
    }
    if (ctx.json || ::isatty(STDIN_FILENO) == 0 || ::isatty(STDERR_FILENO) == 0) {
        return true; // scripts and playbooks: nobody to ask
    }
    *ctx.err << question << " [y/N] " << std::flush;
    std::string answer;
    if (!std::getline(std::cin, answer)) {
        return false;
    }
    return answer == "y" || answer == "Y" || answer == "yes";
}

} // namespace cudaenv::cli
