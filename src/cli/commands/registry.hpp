// The command table: one line per command, in help order. Adding a command is one file in
// commands/ and one line here (docs/adding-a-command.md).
#pragma once

#include "../context.hpp"

#include <span>

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
};

std::span<const CommandSpec> commands();

void setup_resolve(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_list(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_install(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_uninstall(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_check_libs(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_select(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_generate_manifests(CLI::App& app, const CommandSpec& spec, Context& ctx);

} // namespace cudaenv::cli
