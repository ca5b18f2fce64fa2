// Shell integration: rehash, init, shell (through the function init defines), and the hidden
// helpers the shell code calls: __shell, __hook, __complete.
#include "../context.hpp"
#include "../hook.hpp"
#include "core/activate/environment.hpp"
#include "core/activate/selection.hpp"
#include "core/activate/shims.hpp"
#include "core/doctor/doctor.hpp"
#include "core/install/install.hpp"
#include "core/manifest/codec.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <sstream>

namespace cudaenv::cli {

namespace {

std::string command_words() {
    std::string words;
    for (const auto& c : commands()) {
        if (!c.hidden) {
            words += std::string(words.empty() ? "" : " ") + c.name;
        }
    }
    return words + " shell";
}

/// Completion code for a shell; `exe` is how to call cudaenv ("cudaenv" for the files in
/// completions/, the quoted absolute path in init's output).
std::string completion_code(const std::string& shell, const std::string& exe) {
    std::ostringstream o;
    if (shell == "fish") {
        o << "complete -c cudaenv -f -n __fish_use_subcommand -a " << q(command_words()) << "\n"
          << "complete -c cudaenv -f -n 'not __fish_use_subcommand' -a '(" << exe
          << " __complete (commandline -opc)[2] 2>/dev/null)'\n";
    } else if (shell == "zsh") {
        o << "_cudaenv() {\n"
          << "  if (( CURRENT == 2 )); then compadd -- " << command_words() << "\n"
          << "  else compadd -- ${(f)\"$(" << exe << " __complete ${words[2]} 2>/dev/null)\"}; fi\n"
          << "}\n"
          << "(( $+functions[compdef] )) && compdef _cudaenv cudaenv\n";
    } else {
        o << "_cudaenv_complete() {\n"
          << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
          << "  if [ \"$COMP_CWORD\" -eq 1 ]; then COMPREPLY=($(compgen -W " << q(command_words())
          << " -- \"$cur\")); return; fi\n"
          << "  COMPREPLY=($(compgen -W \"$(" << exe
          << " __complete \"${COMP_WORDS[1]}\" 2>/dev/null)\" -- \"$cur\"))\n"
          << "}\n"
          << "complete -F _cudaenv_complete cudaenv\n";
    }
    return o.str();
}

std::string init_code(const Context& ctx, const std::string& shell) {
    std::string exe = ctx.exe_path.string();
    std::string shims = activate::shims_dir(ctx.root()).string();
    std::ostringstream o;
    if (shell == "fish") {
        o << "set -gx CUDAENV_SHELL fish\n"
          << "contains -- " << q(shims) << " $PATH; or set -gx PATH " << q(shims) << " $PATH\n"
          << "function cudaenv\n"
          << "  if test \"$argv[1]\" = shell\n"
          << "    set -l out (" << q(exe) << " __shell $argv[2..-1]); or return $status\n"
          << "    string join \\n -- $out | source\n"
          << "  else\n"
          << "    " << q(exe) << " $argv\n"
          << "  end\n"
          << "end\n"
          << "function _cudaenv_hook --on-event fish_prompt --on-variable PWD\n"
          << "  " << q(ctx.shim_exe().string()) << " __hook fish 2>/dev/null | source\n"
          << "end\n"
          << completion_code("fish", q(exe));
        return o.str();
    }
    o << "export CUDAENV_SHELL=" << shell << "\n"
      << "case \":${PATH}:\" in *:" << q(shims) << ":*) ;; *) export PATH=" << q(shims)
      << "\":${PATH}\" ;; esac\n"
      << "cudaenv() {\n"
      << "  if [ \"$1\" = shell ]; then\n"
      << "    shift\n"
      << "    local out\n"
      << "    out=\"$(" << q(exe) << " __shell \"$@\")\" || return $?\n"
      << "    eval \"$out\"\n"
      << "  else\n"
      << "    " << q(exe) << " \"$@\"\n"
      << "  fi\n"
      << "}\n"
      << "_cudaenv_hook() { eval \"$(" << q(ctx.shim_exe().string()) << " __hook " << shell
      << " 2>/dev/null)\"; }\n";
    if (shell == "zsh") {
        o << "autoload -Uz add-zsh-hook && add-zsh-hook precmd _cudaenv_hook\n"
          << completion_code("zsh", q(exe));
    } else {
        o << "case \";${PROMPT_COMMAND:-};\" in *\";_cudaenv_hook;\"*) ;; "
          << "*) PROMPT_COMMAND=\"_cudaenv_hook${PROMPT_COMMAND:+;$PROMPT_COMMAND}\" ;; esac\n"
          << completion_code("bash", q(exe));
    }
    return o.str();
}

int run_init(const std::string& dash, const std::string& shell_arg, Context& ctx) {
    std::string shell = dash == "-" ? shell_arg : dash;
    if (shell.empty()) {
        shell = "bash";
    }
    if (shell != "bash" && shell != "zsh" && shell != "fish") {
        return report_error(
            ctx,
            Error(ErrorCode::usage, "unknown shell '" + shell + "'").with_hint("bash, zsh or fish"),
            "init");
    }
    if (dash != "-") {
        std::string rc = shell == "fish" ? "~/.config/fish/config.fish" : "~/." + shell + "rc";
        std::string line = shell == "fish" ? "cudaenv init - fish | source"
                                           : "eval \"$(cudaenv init - " + shell + ")\"";
        *ctx.out << "# Add this line to " << rc << ", then start a new shell:\n" << line << "\n";
        return 0;
    }
    *ctx.out << init_code(ctx, shell);
    return 0;
}

struct ShellCli {
    std::string spec;
    bool unset = false;
    bool force = false;
};

int run_shell(const ShellCli& o, Context& ctx) {
    std::string shell = shell_of(ctx, "");
    const std::string& spec = o.spec;
    bool force = o.force;
    if (o.unset) {
        *ctx.out << set_var(shell, "CUDAENV_VERSION", std::nullopt);
        return 0;
    }
    if (spec.empty()) {
        auto cur = ctx.getenv("CUDAENV_VERSION");
        if (!cur || cur->empty()) {
            return report_error(ctx,
                                Error(ErrorCode::not_found, "no shell version is set")
                                    .with_hint("cudaenv shell SPEC"),
                                "shell");
        }
        *ctx.out << "echo " << q(*cur) << ";\n";
        return 0;
    }
    auto cat = ctx.frameworks_catalog();
    if (!cat) {
        return report_error(ctx, cat.error(), "shell");
    }
    auto v = activate::match_installed(ctx.root(), (*cat)->frameworks, spec);
    if (!v) {
        return report_error(ctx, v.error(), "shell");
    }
    if (auto refused = check_project_framework(ctx, **cat, *v, spec, force)) {
        return report_error(ctx, *refused, "shell");
    }
    *ctx.out << set_var(shell, "CUDAENV_VERSION", *v);
    return 0;
}

int run_complete(const std::string& command, Context& ctx) {
    auto root = ctx.root();
    if (command == "use" || command == "global" || command == "uninstall" || command == "prefix" ||
        command == "shell" || command == "env") {
        for (const auto& v : store::installed_versions(root)) {
            *ctx.out << v << "\n";
        }
        if (command == "shell") {
            *ctx.out << "--unset\n";
        }
    }
    if (command == "install" || command == "resolve" || command == "use" || command == "global") {
        auto cat = ctx.catalog();
        if (cat) {
            for (const auto& f : (*cat)->frameworks) {
                for (const auto& r : f.releases) {
                    *ctx.out << (f.aliases.empty() ? f.name : f.aliases[0]) << "-" << r.series.str()
                             << "\n";
                }
            }
            if (command == "install" || command == "resolve") {
                for (const auto& c : (*cat)->cuda) {
                    if (c.source == manifest::CudaSource::redist) {
                        *ctx.out << c.version.str() << "\n";
                    }
                }
            }
        }
    }
    if (command == "which") {
        for (const auto& t : activate::shimmable_tools(root)) {
            *ctx.out << t << "\n";
        }
    }
    if (command == "list") {
        *ctx.out << "--available\n";
    }
    if (command == "init") {
        *ctx.out << "-\nbash\nzsh\nfish\n";
    }
    if (command == "doctor") {
        *ctx.out << "-v\n--json\n--strict\n--only\n";
        for (const auto& p : doctor::probes()) {
            *ctx.out << p.id << "\n";
        }
    }
    return 0;
}

} // namespace

int rehash_after_change(Context& ctx) {
    auto r = activate::rehash(ctx.root(), ctx.shim_exe(), ctx.lock_timeout());
    if (!r) {
        *ctx.err << "cudaenv: warning: could not rehash the shims: " << r.error().full_message()
                 << "\n";
        return 1;
    }
    return 0;
}

void setup_shell(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    std::string name = spec.name;
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    if (spec.hidden) {
        sub->group("");
    }
    if (name == "rehash") {
        sub->callback([&ctx] {
            auto r = activate::rehash(ctx.root(), ctx.shim_exe(), ctx.lock_timeout());
            if (!r) {
                ctx.exit_code = report_error(ctx, r.error(), "rehash");
                return;
            }
            if (ctx.json) {
                emit_json(ctx,
                          {{"command", "rehash"},
                           {"ok", true},
                           {"changed", r->changed},
                           {"shims", r->tools}});
            } else {
                *ctx.out << r->tools.size() << " shims in "
                         << activate::shims_dir(ctx.root()).string() << "\n";
            }
            ctx.exit_code = 0;
        });
    } else if (name == "init") {
        auto dash = std::make_shared<std::string>();
        auto shell = std::make_shared<std::string>();
        sub->footer("Examples:\n  eval \"$(cudaenv init - bash)\"     in ~/.bashrc\n"
                    "  cudaenv init - fish | source        in ~/.config/fish/config.fish\n");
        sub->add_option("dash", *dash, "'-' to print the shell code (else: setup instructions)");
        sub->add_option("shell", *shell, "bash, zsh or fish");
        sub->callback([dash, shell, &ctx] { ctx.exit_code = run_init(*dash, *shell, ctx); });
    } else if (name == "__shell") {
        auto o = std::make_shared<ShellCli>();
        sub->add_option("spec", o->spec);
        sub->add_flag("--unset", o->unset);
        sub->add_flag("--force", o->force);
        sub->callback([o, &ctx] { ctx.exit_code = run_shell(*o, ctx); });
    } else if (name == "__hook") {
        auto shell = std::make_shared<std::string>();
        sub->add_option("shell", *shell);
        sub->callback([shell, &ctx] { ctx.exit_code = run_hook(*shell, ctx); });
    } else if (name == "__completion-script") {
        auto shell = std::make_shared<std::string>("bash");
        sub->add_option("shell", *shell)->check(CLI::IsMember({"bash", "zsh", "fish"}));
        sub->callback([shell, &ctx] {
            *ctx.out << "# cudaenv completions for " << *shell
                     << " (generated by: cudaenv __completion-script " << *shell << ")\n"
                     << completion_code(*shell, "cudaenv");
            ctx.exit_code = 0;
        });
    } else if (name == "__complete") {
        auto command = std::make_shared<std::string>();
        sub->add_option("command", *command);
        sub->callback([command, &ctx] { ctx.exit_code = run_complete(*command, ctx); });
    }
}

} // namespace cudaenv::cli
