// cudaenv init [-] [SHELL]: shell integration (shims on PATH, the shell function, the hook that
// follows .cuda-version on every cd and prompt, completions), and `__hook`, which that code runs.
#include "../hook.hpp"
#include "completion.hpp"
#include "core/activate/shims.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <sstream>

namespace cudaenv::cli {

namespace {

/// The shell code. The shell function runs the hook itself after `shell`, `use` and `global`, and
/// zsh runs it on every directory change too (chpwd), so `cd proj && python train.py` and
/// `cudaenv shell 12.4 && echo $CUDA_HOME` see the new environment on the same line. The hook's
/// stderr reaches the terminal: it says a broken pin once per directory.
std::string init_code(const Context& ctx, const std::string& shell) {
    std::string exe = ctx.exe_path.string();
    std::string shims = activate::shims_dir(ctx.root()).string();
    std::string hook_exe = q(ctx.shim_exe().string());
    std::ostringstream o;
    if (shell == "fish") {
        o << "set -gx CUDAENV_SHELL fish\n"
          << "contains -- " << q(shims) << " $PATH; or set -gx PATH " << q(shims) << " $PATH\n"
          << "function cudaenv\n"
          << "  if test \"$argv[1]\" = shell\n"
          << "    set -l out (" << q(exe) << " __shell $argv[2..-1]); or return $status\n"
          << "    string join \\n -- $out | source\n"
          << "    _cudaenv_hook\n"
          << "  else\n"
          << "    " << q(exe) << " $argv; or return $status\n"
          << "    contains -- \"$argv[1]\" use global rollback; and _cudaenv_hook\n"
          << "    return 0\n"
          << "  end\n"
          << "end\n"
          << "function _cudaenv_hook --on-event fish_prompt --on-variable PWD\n"
          << "  " << hook_exe << " __hook fish | source\n"
          << "end\n"
          << completion_code("fish", q(exe));
        return o.str();
    }
    o << "export CUDAENV_SHELL=" << shell << "\n"
      << "case \":${PATH}:\" in *:" << q(shims) << ":*) ;; *) export PATH=" << q(shims)
      << "\":${PATH}\" ;; esac\n"
      << "cudaenv() {\n"
      << "  local out rc\n"
      << "  case \"$1\" in\n"
      << "  shell)\n"
      << "    shift\n"
      << "    out=\"$(" << q(exe) << " __shell \"$@\")\" || return $?\n"
      << "    eval \"$out\"\n"
      << "    _cudaenv_hook ;;\n"
      << "  use|global|rollback)\n"
      << "    " << q(exe) << " \"$@\"; rc=$?\n"
      << "    _cudaenv_hook\n"
      << "    return $rc ;;\n"
      << "  *)\n"
      << "    " << q(exe) << " \"$@\" ;;\n"
      << "  esac\n"
      << "}\n"
      << "_cudaenv_hook() { eval \"$(" << hook_exe << " __hook " << shell << ")\"; }\n";
    if (shell == "zsh") {
        o << "autoload -Uz add-zsh-hook && add-zsh-hook precmd _cudaenv_hook && "
             "add-zsh-hook chpwd _cudaenv_hook\n"
          << completion_code("zsh", q(exe));
    } else {
        o << "case \";${PROMPT_COMMAND:-};\" in *\";_cudaenv_hook;\"*) ;; "
          << "*) PROMPT_COMMAND=\"_cudaenv_hook${PROMPT_COMMAND:+;$PROMPT_COMMAND}\" ;; esac\n"
          << completion_code("bash", q(exe));
    }
    return o.str();
}

std::string rc_file(const std::string& shell) {
    return shell == "fish" ? "~/.config/fish/config.fish" : "~/." + shell + "rc";
}

std::string init_line(const std::string& shell) {
    return shell == "fish" ? "cudaenv init - fish | source"
                           : "eval \"$(cudaenv init - " + shell + ")\"";
}

int run_init(const std::string& dash, const std::string& shell_arg, Context& ctx) {
    std::string shell = dash == "-" ? shell_arg : dash;
    if (shell.empty()) {
        shell = login_shell(ctx);
    }
    if (shell != "bash" && shell != "zsh" && shell != "fish") {
        return report_error(
            ctx,
            Error(ErrorCode::usage, "unknown shell '" + shell + "'").with_hint("bash, zsh or fish"),
            "init");
    }
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", "init"},
                   {"ok", true},
                   {"shell", shell},
                   {"rc_file", rc_file(shell)},
                   {"line", init_line(shell)},
                   {"shims", activate::shims_dir(ctx.root()).string()},
                   {"code", init_code(ctx, shell)}});
        return 0;
    }
    if (dash != "-") {
        *ctx.out << "# Add this line to " << rc_file(shell) << ", then start a new shell:\n"
                 << init_line(shell) << "\n";
        return 0;
    }
    *ctx.out << init_code(ctx, shell);
    return 0;
}

} // namespace

std::string login_shell(const Context& ctx) {
    auto sh = ctx.getenv("SHELL").value_or("");
    auto name = std::filesystem::path(sh).filename().string();
    return name == "zsh" || name == "fish" ? name : "bash";
}

std::string enable_hint(const Context& ctx) {
    std::string shell = login_shell(ctx);
    return "add `" + init_line(shell) + "` to " + rc_file(shell) +
           " and start a new shell (cudaenv init prints it)";
}

void setup_init(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto dash = std::make_shared<std::string>();
    auto shell = std::make_shared<std::string>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Examples:\n  cudaenv init                       what to add for your $SHELL\n"
                "  eval \"$(cudaenv init - bash)\"     in ~/.bashrc\n"
                "  eval \"$(cudaenv init - zsh)\"      in ~/.zshrc\n"
                "  cudaenv init - fish | source        in ~/.config/fish/config.fish\n");
    sub->add_option("dash", *dash, "'-' to print the shell code (else: setup instructions)");
    sub->add_option("shell", *shell, "bash, zsh or fish (default: from $SHELL)");
    sub->callback([dash, shell, &ctx] { ctx.exit_code = run_init(*dash, *shell, ctx); });
}

void setup_hook(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto shell = std::make_shared<std::string>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->group("");
    sub->add_option("shell", *shell);
    sub->callback([shell, &ctx] { ctx.exit_code = run_hook(*shell, ctx); });
}

} // namespace cudaenv::cli
