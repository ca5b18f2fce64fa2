// The command table: one line per command, in help order. Adding a command is one file in
// commands/ and one line here (docs/adding-a-command.md).
#pragma once

#include "../context.hpp"

#include <optional>
#include <span>
#include <string>

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

/// Regenerates the shims after install/uninstall; a failure is a warning (returns 1).
int rehash_after_change(Context& ctx);

/// The project's framework must be able to use `version` (shared by use, shell and global).
std::optional<Error> check_project_framework(Context& ctx,
                                             const manifest::Catalog& cat,
                                             const std::string& version,
                                             const std::string& spec,
                                             bool force);

void setup_resolve(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_list(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_install(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_uninstall(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_mirror(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_check_libs(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_select(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_shell(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_doctor(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_report(CLI::App& app, const CommandSpec& spec, Context& ctx);
void setup_generate_manifests(CLI::App& app, const CommandSpec& spec, Context& ctx);

} // namespace cudaenv::cli
