// cudaenv completions [bash|zsh|fish]: the completion script; and `__complete CMD [WORD]`, the
// candidates it asks for: the command's flags when WORD starts with '-' (read from the command
// table itself, so they cannot drift), else installed versions, SPECs, tools, probes.
#include "../hook.hpp"
#include "completion.hpp"
#include "core/activate/shims.hpp"
#include "core/doctor/doctor.hpp"
#include "core/install/install.hpp"
#include "core/manifest/codec.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <ostream>
#include <set>
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
    return words;
}

void print_flags(const CLI::App& app, const std::string& command, Context& ctx) {
    for (const auto* sub : app.get_subcommands({})) {
        if (sub->get_name() != command) {
            continue;
        }
        for (const auto* opt : sub->get_options()) {
            for (const auto& l : opt->get_lnames()) {
                *ctx.out << "--" << l << "\n";
            }
            for (const auto& s : opt->get_snames()) {
                *ctx.out << "-" << s << "\n";
            }
        }
    }
}

void print_values(const std::string& command, Context& ctx) {
    auto root = ctx.root();
    static const std::set<std::string> takes_installed = {
        "use", "global", "uninstall", "prefix", "shell", "env", "modulefile"};
    if (takes_installed.count(command)) {
        for (const auto& v : store::installed_versions(root)) {
            *ctx.out << v << "\n";
        }
    }
    if (command == "global" || command == "shell" || command == "use") {
        *ctx.out << "system\n";
    }
    if (command == "install" || command == "resolve" || command == "use" || command == "global" ||
        command == "mirror") {
        if (auto cat = ctx.catalog()) {
            for (const auto& f : (*cat)->frameworks) {
                for (const auto& r : f.releases) {
                    *ctx.out << (f.aliases.empty() ? f.name : f.aliases[0]) << "-" << r.series.str()
                             << "\n";
                }
            }
            if (command != "use" && command != "global") {
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
        *ctx.out << "cuda\ncudnn\ntensorflow\n";
    }
    if (command == "init" || command == "completions") {
        *ctx.out << (command == "init" ? "-\n" : "") << "bash\nzsh\nfish\n";
    }
    if (command == "doctor") {
        for (const auto& p : doctor::probes()) {
            *ctx.out << p.id << "\n";
        }
    }
}

} // namespace

std::string completion_code(const std::string& shell, const std::string& exe) {
    std::ostringstream o;
    if (shell == "fish") {
        o << "complete -c cudaenv -f -n __fish_use_subcommand -a " << q(command_words()) << "\n"
          << "complete -c cudaenv -f -n 'not __fish_use_subcommand' -a '(" << exe
          << " __complete (commandline -opc)[2] -- (commandline -ct) 2>/dev/null)'\n";
    } else if (shell == "zsh") {
        o << "_cudaenv() {\n"
          << "  if (( CURRENT == 2 )); then compadd -- " << command_words() << "\n"
          << "  else compadd -- ${(f)\"$(" << exe
          << " __complete ${words[2]} -- ${words[CURRENT]} 2>/dev/null)\"}; fi\n"
          << "}\n"
          << "(( $+functions[compdef] )) && compdef _cudaenv cudaenv\n";
    } else {
        o << "_cudaenv_complete() {\n"
          << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
          << "  if [ \"$COMP_CWORD\" -eq 1 ]; then COMPREPLY=($(compgen -W " << q(command_words())
          << " -- \"$cur\")); return; fi\n"
          << "  COMPREPLY=($(compgen -W \"$(" << exe
          << " __complete \"${COMP_WORDS[1]}\" -- \"$cur\" 2>/dev/null)\" -- \"$cur\"))\n"
          << "}\n"
          << "complete -F _cudaenv_complete cudaenv\n";
    }
    return o.str();
}

void setup_completions(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto shell = std::make_shared<std::string>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    if (spec.hidden) {
        sub->group("");
    }
    sub->footer("init's shell code includes them; packages install them in the shells' folders.\n"
                "Examples:\n  cudaenv completions zsh > ~/.zfunc/_cudaenv\n"
                "  cudaenv completions fish > ~/.config/fish/completions/cudaenv.fish\n");
    sub->add_option("shell", *shell, "bash, zsh or fish (default: from $SHELL)")
        ->check(CLI::IsMember({"bash", "zsh", "fish"}));
    sub->callback([shell, &ctx] {
        std::string s = shell->empty() ? login_shell(ctx) : *shell;
        *ctx.out << "# cudaenv completions for " << s << " (generated by: cudaenv completions " << s
                 << ")\n"
                 << completion_code(s, "cudaenv");
        ctx.exit_code = 0;
    });
}

void setup_complete(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto command = std::make_shared<std::string>();
    auto word = std::make_shared<std::string>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->group("");
    sub->add_option("command", *command);
    sub->add_option("word", *word);
    // the shells pass the word after `--`, so `--pro` is a value here, not an option
    const CLI::App* root = &app;
    sub->callback([root, command, word, &ctx] {
        if (word->empty() || (*word)[0] == '-') {
            print_flags(*root, *command, ctx);
        }
        if (word->empty() || (*word)[0] != '-') {
            print_values(*command, ctx);
        }
        ctx.exit_code = 0;
    });
}

} // namespace cudaenv::cli
