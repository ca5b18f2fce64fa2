// Helpers the selection commands share (version, use, global, rollback, prefix, which, exec, env,
// modulefile): the current selection, a version's prefix, the machine, and how a switch is told.
#pragma once

#include "../context.hpp"
#include "core/activate/machine.hpp"
#include "core/activate/modulefile.hpp"
#include "core/activate/project.hpp"
#include "core/activate/selection.hpp"
#include "core/doctor/host.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace cudaenv::cli {

/// The current selection; `system` when nothing is chosen.
Result<activate::Selection> current_selection(Context& ctx);

/// The directory of the version `spec` names (installed), or of the selected one for an empty
/// spec; not_found when nothing is selected.
Result<std::filesystem::path> prefix_of(Context& ctx, const std::string& spec);

/// The machine the global commands change (CUDAENV_SYSROOT, CUDAENV_LDCONFIG).
activate::Machine machine_of(const Context& ctx);

/// Prints a switch's outcome (global, rollback): warnings on stderr, one line or --json.
int report_switch(Context& ctx,
                  const char* command,
                  const activate::SwitchOutcome& out,
                  const activate::Machine& m,
                  bool dry_run);

/// "--force" refusal of a version the project's framework cannot use (use, shell), or none.
std::optional<Error> refuse_for_project(Context& ctx,
                                        const manifest::Catalog& cat,
                                        const std::string& version,
                                        const std::string& spec,
                                        bool force);

/// What `use --match` and `install --match` found, chose and wrote: lines on stdout, or --json
/// (`command` names the command).
void print_match(Context& ctx,
                 const activate::EnvironmentMatch& m,
                 const activate::PinWrite& written,
                 const char* command);

/// The modulefile of the version at `prefix` (modulefile, env --shell lmod|tcl).
Result<std::string> module_text(const std::filesystem::path& prefix, activate::ModuleFormat format);

/// What the doctor (and `which` for a library) reads the machine through: CUDAENV_SYSROOT,
/// the environment, the roots, CUDAENV_LDCONFIG, CUDAENV_DOCTOR_TIMEOUT.
Result<doctor::HostConfig> host_config(Context& ctx);

/// Asks "QUESTION [y/N]" on the terminal (stdin and stderr both one); true for yes. `assume_yes`
/// (-y), --json and no terminal (a script, a playbook) answer yes without asking.
bool confirm(Context& ctx, const std::string& question, bool assume_yes);

} // namespace cudaenv::cli
