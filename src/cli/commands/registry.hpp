// The command table: one line per command, in help order. Adding a command is one file in
// commands/ and one line here (docs/adding-a-command.md).
#pragma once

#include "../context.hpp"

#include <span>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cudaenv::cli {

struct CommandSpec {
    const char* name;
    const char* summary;
    /// Adds the subcommand to `app`; its callback sets ctx.exit_code.
    void (*setup)(CLI::App& app, const CommandSpec& spec, Context& ctx);
    bool hidden = false;
    /// Other names it answers to ("rm remove"), space-separated; null: none.
    const char* aliases = nullptr;
};

std::span<const CommandSpec> commands();

/// Every name a command answers to: its own, then its aliases.
std::vector<std::string> names_of(const CommandSpec& c);

void setup_install(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_uninstall(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_gc(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_verify(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_audit(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_mirror(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_update(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_bundle(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_refresh(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_resolve(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_list(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_use(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_global(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_rollback(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_shell(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_version(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_prefix(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_which(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_exec(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_env(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_modulefile(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_doctor(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_report(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_rehash(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_init(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_completions(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_shell_helper(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_hook(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_complete(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_generate_manifests(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_check_libs(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_doctor_query(CLI::App& app, const CommandSpec& spec, Context& ctx);

} // namespace cudaenv::cli
