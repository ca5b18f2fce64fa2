// cudaenv version | use SPEC | prefix [SPEC] | which TOOL | exec -- CMD... | env [--shell S]
#include "../context.hpp"
#include "core/activate/environment.hpp"
#include "core/activate/machine.hpp"
#include "core/activate/selection.hpp"
#include "core/fs.hpp"
#include "core/install/install.hpp"
#include "core/resolve/resolve.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

using nlohmann::json;

/// The current selection; `system` when nothing is chosen.
Result<activate::Selection> current(Context& ctx) {
    auto cat = ctx.frameworks_catalog();
    if (!cat) {
        return std::move(cat).error();
    }
    return activate::select(ctx.root(), (*cat)->frameworks, ctx.env, ctx.cwd);
}

Result<std::filesystem::path> prefix_of(Context& ctx, const std::string& spec) {
    if (!spec.empty()) {
        auto cat = CUDAENV_TRY(ctx.frameworks_catalog());
        auto v = CUDAENV_TRY(activate::match_installed(ctx.root(), cat->frameworks, spec));
        return ctx.root().version_dir(v);
    }
    auto sel = CUDAENV_TRY(current(ctx));
    if (!sel.version) {
        return Error(ErrorCode::not_found, "no cudaenv version is selected (system)")
            .with_hint("cudaenv use SPEC for this project, or cudaenv global SPEC for the machine");
    }
    return ctx.root().version_dir(*sel.version);
}

std::string shell_quote(const std::string& v) {
    std::string out = "'";
    for (char c : v) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

int run_version(Context& ctx) {
    auto sel = current(ctx);
    if (!sel) {
        return report_error(ctx, sel.error(), "version");
    }
    auto cat = ctx.frameworks_catalog();
    std::optional<std::string> file_text;
    if (sel->origin == activate::Selection::Origin::file) {
        file_text = sel->written;
    }
    std::filesystem::path project =
        sel->origin == activate::Selection::Origin::file ? sel->source.parent_path() : ctx.cwd;
    auto pin = cat ? activate::framework_pin(**cat, file_text, project, ctx.env) : std::nullopt;
    std::string name = sel->version.value_or("system");
    if (ctx.json) {
        json fw = pin ? json{{"name", pin->framework},
                             {"version", pin->version.str()},
                             {"source", pin->source}}
                      : json();
        emit_json(ctx,
                  {{"command", "version"},
                   {"ok", true},
                   {"version", name},
                   {"written", sel->written},
                   {"origin", sel->origin_text()},
                   {"framework", fw}});
        return 0;
    }
    if (sel->version) {
        *ctx.out << name << " (set by " << sel->origin_text() << ")\n";
    } else {
        *ctx.out
            << "system (no CUDAENV_VERSION, no .cuda-version here or above, no global choice)\n";
    }
    if (pin) {
        *ctx.out << pin->framework << " " << pin->version.str() << " (from " << pin->source
                 << ")\n";
    }
    return 0;
}

struct UseCli {
    std::string spec;
    bool force = false;
};

int run_use(const UseCli& o, Context& ctx) {
    auto cat = ctx.frameworks_catalog();
    if (!cat) {
        return report_error(ctx, cat.error(), "use");
    }
    auto root = ctx.root();
    auto version = activate::match_installed(root, (*cat)->frameworks, o.spec);
    if (!version) {
        return report_error(ctx, version.error(), "use");
    }
    if (auto refused = check_project_framework(ctx, **cat, *version, o.spec, o.force)) {
        return report_error(ctx, *refused, "use");
    }
    auto file = ctx.cwd / activate::k_version_file;
    std::string content = o.spec + "\n";
    auto existing = read_text_file(file);
    bool changed = !(existing && *existing == content);
    if (changed) {
        auto st = write_file_atomic(file, content);
        if (!st) {
            return report_error(ctx, st.error(), "use");
        }
    }
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", "use"},
                   {"ok", true},
                   {"changed", changed},
                   {"version", *version},
                   {"file", file.string()}});
    } else {
        *ctx.out << (changed ? "wrote " : "unchanged: ") << file.string() << " (" << o.spec
                 << " -> " << *version << ")\n";
    }
    return 0;
}

int run_prefix(const std::string& spec, Context& ctx) {
    auto p = prefix_of(ctx, spec);
    if (!p) {
        return report_error(ctx, p.error(), "prefix");
    }
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", "prefix"},
                   {"ok", true},
                   {"prefix", p->string()},
                   {"version", p->filename().string()}});
        return 0;
    }
    *ctx.out << p->string() << "\n";
    return 0;
}

/// LD_LIBRARY_PATH entries for another CUDA override what the selection and the ld.so cache give
/// (reliability.md L5): say so on stderr.
void warn_library_path(Context& ctx, const std::filesystem::path& prefix) {
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

int run_which(const std::string& tool, Context& ctx) {
    auto sel = current(ctx);
    if (!sel) {
        return report_error(ctx, sel.error(), "which");
    }
    auto root = ctx.root();
    if (sel->version) {
        auto prefix = root.version_dir(*sel->version);
        auto path = prefix / "bin" / tool;
        if (::access(path.c_str(), X_OK) == 0) {
            *ctx.out << path.string() << "\n";
            warn_library_path(ctx, prefix);
            return 0;
        }
    }
    std::string have;
    for (const auto& v : install::list_installed(root)) {
        if (::access((v.prefix / "bin" / tool).c_str(), X_OK) == 0) {
            have += (have.empty() ? "" : ", ") + v.name;
        }
    }
    auto err = Error(ErrorCode::not_found,
                     "'" + tool + "' is not in " + sel->version.value_or("system") + " (set by " +
                         sel->origin_text() + ")");
    err = have.empty() ? std::move(err).with_hint("no installed version has it")
                       : std::move(err).with_hint("it is in: " + have);
    return report_error(ctx, err, "which");
}

int run_exec(const std::vector<std::string>& cmd, Context& ctx) {
    if (cmd.empty()) {
        return report_error(
            ctx,
            Error(ErrorCode::usage, "exec needs a command: cudaenv exec nvcc --version"),
            "exec");
    }
    auto sel = current(ctx);
    if (!sel) {
        return report_error(ctx, sel.error(), "exec");
    }
    auto env = ctx.env;
    if (sel->version) {
        for (auto& [k, v] : activate::version_environment(
                 ctx.root().version_dir(*sel->version), ctx.root().version_dirs(), ctx.env)) {
            env[k] = v;
        }
    }
    std::vector<std::string> env_store;
    for (const auto& [k, v] : env) {
        env_store.push_back(k + "=" + v);
    }
    std::vector<char*> envp;
    for (auto& e : env_store) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    std::vector<std::string> args = cmd;
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    // PATH lookup with the new PATH, so the version's tools win.
    std::string path = env.count("PATH") ? env["PATH"] : "/usr/bin:/bin";
    ::setenv("PATH", path.c_str(), 1);
    ::execvpe(argv[0], argv.data(), envp.data());
    int err = errno;
    report_error(
        ctx, Error(ErrorCode::failure, "cannot run '" + cmd[0] + "': " + errno_text(err)), "exec");
    return err == ENOENT ? 127 : 126; // as shells report a missing or unrunnable command
}

int run_env(const std::string& shell, const std::string& spec, Context& ctx) {
    auto p = prefix_of(ctx, spec);
    if (!p) {
        return report_error(ctx, p.error(), "env");
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
                std::size_t pos = 0;
                while (pos <= v.size()) {
                    auto end = v.find(':', pos);
                    items +=
                        " " + shell_quote(v.substr(
                                  pos, end == std::string::npos ? std::string::npos : end - pos));
                    pos = end == std::string::npos ? v.size() + 1 : end + 1;
                }
            } else {
                items = " " + shell_quote(v);
            }
            *ctx.out << "set -gx " << k << items << ";\n";
        } else {
            *ctx.out << "export " << k << "=" << shell_quote(v) << ";\n";
        }
    }
    return 0;
}

activate::Machine machine(const Context& ctx) {
    activate::Machine m;
    m.sysroot = ctx.getenv("CUDAENV_SYSROOT").value_or("/");
    if (m.sysroot.empty()) {
        m.sysroot = "/";
    }
    m.ldconfig = ctx.getenv("CUDAENV_LDCONFIG").value_or("");
    m.ldconfig_timeout = ctx.ldconfig_timeout();
    return m;
}

struct GlobalCli {
    std::string spec;
    bool force = false;
    bool dry_run = false;
};

int report_switch(Context& ctx,
                  const char* command,
                  const activate::SwitchOutcome& out,
                  const activate::Machine& m,
                  bool dry_run) {
    for (const auto& w : out.warnings) {
        *ctx.err << "cudaenv: warning: " << w << "\n";
    }
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", command},
                   {"ok", true},
                   {"changed", out.changed},
                   {"dry_run", dry_run},
                   {"version", out.version},
                   {"previous", out.previous},
                   {"ldconfig_ran", out.ldconfig_ran},
                   {"link", m.link().string()},
                   {"ld_conf", m.conf().string()},
                   {"warnings", out.warnings}});
    } else if (!out.changed) {
        *ctx.out << out.version << " is already the global version\n";
    } else {
        *ctx.out << (dry_run ? "would switch " : "switched ") << m.link().string() << " from "
                 << out.previous << " to " << out.version << "\n";
    }
    return 0;
}

int run_global(const GlobalCli& o, Context& ctx) {
    auto root = ctx.root();
    auto m = machine(ctx);
    if (o.spec.empty()) {
        auto r = store::effective_global(root);
        if (!r) {
            return report_error(ctx, r.error(), "global");
        }
        const auto& g = r->version;
        if (ctx.json) {
            emit_json(ctx,
                      {{"command", "global"}, {"ok", true}, {"version", g.value_or("system")}});
        } else {
            *ctx.out << g.value_or("system") << "\n";
        }
        return 0;
    }
    auto cat = ctx.frameworks_catalog();
    if (!cat) {
        return report_error(ctx, cat.error(), "global");
    }
    auto version = activate::match_installed(root, (*cat)->frameworks, o.spec);
    if (!version) {
        // Switching the machine to what is not there is a state conflict (reliability.md S4).
        Error e = version.error();
        e.code = ErrorCode::conflict;
        return report_error(ctx, e, "global");
    }
    if (auto refused = check_project_framework(ctx, **cat, *version, o.spec, o.force)) {
        return report_error(ctx, *refused, "global");
    }
    activate::SwitchOptions so;
    so.force = o.force;
    so.dry_run = o.dry_run;
    so.lock_timeout = ctx.lock_timeout();
    auto out = activate::switch_global(root, m, *version, so);
    if (!out) {
        return report_error(ctx, out.error(), "global");
    }
    return report_switch(ctx, "global", *out, m, o.dry_run);
}

int run_rollback(bool dry_run, Context& ctx) {
    auto m = machine(ctx);
    activate::SwitchOptions so;
    so.dry_run = dry_run;
    so.lock_timeout = ctx.lock_timeout();
    auto out = activate::rollback(ctx.root(), m, so);
    if (!out) {
        return report_error(ctx, out.error(), "rollback");
    }
    return report_switch(ctx, "rollback", *out, m, dry_run);
}

} // namespace

/// The project's framework (the SPEC itself when it names one, else the project's files or the
/// active Python environment) must be able to use `version`; the error when it cannot.
std::optional<Error> check_project_framework(Context& ctx,
                                             const manifest::Catalog& cat,
                                             const std::string& version,
                                             const std::string& spec,
                                             bool force) {
    auto pin = activate::framework_pin(cat, spec, ctx.cwd, ctx.env);
    if (!pin || force) {
        return std::nullopt;
    }
    const auto* fw = cat.framework(pin->framework);
    const auto* row = fw ? fw->find(pin->version) : nullptr;
    auto installed = install::list_installed(ctx.root());
    auto it = std::find_if(
        installed.begin(), installed.end(), [&](const auto& v) { return v.name == version; });
    if (!row || it == installed.end()) {
        return std::nullopt;
    }
    auto cuda = Version::try_parse(it->cuda);
    std::optional<Version> cudnn;
    if (!it->cudnn.empty()) {
        cudnn = Version::try_parse(it->cudnn);
    }
    if (!cuda) {
        return std::nullopt;
    }
    auto ok = check_framework_compat(*fw, *row, *cuda, cudnn);
    if (ok) {
        return std::nullopt;
    }
    Error e = ok.error();
    e.message = "refusing " + version + " for this project: " + e.message + " (" + pin->framework +
                " " + pin->version.str() + " from " + pin->source + ")";
    return std::move(e).with_hint("pass --force to use it anyway");
}

void setup_select(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    std::string name = spec.name;
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    if (name == "version") {
        sub->footer("Examples:\n  cudaenv version\n  cudaenv version --json\n");
        sub->callback([&ctx] { ctx.exit_code = run_version(ctx); });
    } else if (name == "use") {
        auto o = std::make_shared<UseCli>();
        sub->footer(
            "Examples:\n  cudaenv use tf-2.13          this project runs TensorFlow 2.13's pair\n"
            "  cudaenv use 12.4+cudnn-9.1\n");
        sub->add_option("spec", o->spec, "an installed version or a SPEC")->required();
        sub->add_flag("--force", o->force, "use it even if the project's framework cannot");
        sub->callback([o, &ctx] { ctx.exit_code = run_use(*o, ctx); });
    } else if (name == "prefix") {
        auto s = std::make_shared<std::string>();
        sub->add_option("spec", *s, "a version (default: the selected one)");
        sub->callback([s, &ctx] { ctx.exit_code = run_prefix(*s, ctx); });
    } else if (name == "which") {
        auto s = std::make_shared<std::string>();
        sub->add_option("tool", *s, "nvcc, ptxas, ...")->required();
        sub->callback([s, &ctx] { ctx.exit_code = run_which(*s, ctx); });
    } else if (name == "exec") {
        sub->footer("Everything after the command's name is the command's own, as typed.\n"
                    "Examples:\n  cudaenv exec nvcc --version\n"
                    "  cudaenv exec -- python train.py --epochs 3\n");
        // The command line itself is cut from argv before parsing (app.cpp, split_exec), so
        // this positional only documents it in --help.
        auto shown = std::make_shared<std::vector<std::string>>();
        sub->add_option("command", *shown, "the command and its arguments");
        sub->callback([shown, &ctx] { ctx.exit_code = run_exec(ctx.exec_command, ctx); });
    } else if (name == "global") {
        auto o = std::make_shared<GlobalCli>();
        sub->footer(
            "Examples:\n  cudaenv global                 the machine's version\n"
            "  cudaenv global tf-2.13         repoint /usr/local/cuda, ld.so.conf.d, ldconfig\n"
            "  CUDAENV_SYSROOT=/mnt/image cudaenv global 12.4 --dry-run\n");
        sub->add_option("spec", o->spec, "an installed version or a SPEC");
        sub->add_flag("--force", o->force, "replace a link or directory cudaenv does not own");
        sub->add_flag("--dry-run", o->dry_run, "say what would change; change nothing");
        sub->callback([o, &ctx] { ctx.exit_code = run_global(*o, ctx); });
    } else if (name == "rollback") {
        auto dry = std::make_shared<bool>(false);
        sub->add_flag("--dry-run", *dry, "say what would change; change nothing");
        sub->callback([dry, &ctx] { ctx.exit_code = run_rollback(*dry, ctx); });
    } else if (name == "env") {
        auto shell = std::make_shared<std::string>("bash");
        auto s = std::make_shared<std::string>();
        sub->add_option("spec", *s, "a version (default: the selected one)");
        sub->add_option("--shell", *shell, "bash, zsh or fish")
            ->check(CLI::IsMember({"bash", "zsh", "fish"}));
        sub->callback([shell, s, &ctx] { ctx.exit_code = run_env(*shell, *s, ctx); });
    }
}

} // namespace cudaenv::cli
