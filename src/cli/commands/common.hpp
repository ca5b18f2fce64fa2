// Helpers the selection commands share (version, use, global, rollback, prefix, which, exec, env,
// modulefile): the current selection, a version's prefix, the machine, and how a switch is told.
#pragma once

#include "../context.hpp"
#include "core/activate/machine.hpp"
#include "core/activate/modulefile.hpp"
#include "core/activate/project.hpp"
#include "core/activate/selection.hpp"
#include "core/ops/audit.hpp"
#include "core/ops/select.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace cudaenv::cli {

/// Prints a switch's outcome (global, rollback): warnings on stderr, one line or --json.
int report_switch(Context& ctx,
                  const char* command,
                  const activate::SwitchOutcome& out,
                  const activate::Machine& m,
                  bool dry_run);

/// What `use --match` and `install --match` found, chose and wrote: lines on stdout, or --json
/// (`command` names the command).
void print_match(Context& ctx,
                 const activate::EnvironmentMatch& m,
                 const activate::PinWrite& written,
                 const char* command);

/// The modulefile of the version at `prefix` (modulefile, env --shell lmod|tcl).
Result<std::string> module_text(const std::filesystem::path& prefix,
                                activate::ModuleFormat format,
                                const std::filesystem::path& shim);

/// Asks "QUESTION [y/N]" on the terminal (stdin and stderr both one); true for yes. `assume_yes`
/// (-y), --json and no terminal (a script, a playbook) answer yes without asking.
bool confirm(Context& ctx, const std::string& question, bool assume_yes);

/// The advisories that apply to what resolve/install pick: one line each with its fix
/// (acknowledged ones with their reason), and the same as JSON.
void print_advisories(std::ostream& o, const std::vector<ops::AdvisoryNote>& notes);
nlohmann::json advisories_json(const std::vector<ops::AdvisoryNote>& notes);

} // namespace cudaenv::cli
