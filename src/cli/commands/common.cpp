#include "common.hpp"

#include "core/activate/project.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <iostream>
#include <ostream>

namespace cudaenv::cli {

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

void print_advisories(std::ostream& o, const std::vector<ops::AdvisoryNote>& notes) {
    for (const auto& n : notes) {
        if (!n.acknowledged.empty()) {
            o << "advisory (acknowledged: " << printable(n.acknowledged) << "): " << n.text << "\n";
            continue;
        }
        o << "advisory: " << n.text << "\n"
          << "  fix: " << n.fix << "\n";
    }
}

nlohmann::json advisories_json(const std::vector<ops::AdvisoryNote>& notes) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& n : notes) {
        out.push_back(
            {{"id", n.id},
             {"severity", n.severity},
             {"critical", n.critical},
             {"text", n.text},
             {"fix", n.fix},
             {"acknowledged",
              n.acknowledged.empty() ? nlohmann::json() : nlohmann::json(n.acknowledged)}});
    }
    return out;
}

} // namespace cudaenv::cli
