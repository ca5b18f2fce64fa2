// cudaenv report DIR: one fleet table from the per-host `cudaenv doctor --json` documents the
// fleet role fetches (DIR/<host>.json), hosts with failures first.
#include "../context.hpp"
#include "core/doctor/fleet_report.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

namespace cudaenv::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ReportCli {
    std::string dir;
};

void report_json(Context& ctx, const doctor::FleetReport& report, int code) {
    json hosts = json::array();
    for (const auto& r : report.hosts) {
        hosts.push_back({{"host", r.host},
                         {"gpus", r.gpus},
                         {"driver", r.driver == "-" ? json() : json(r.driver)},
                         {"cuda", r.cuda == "-" ? json() : json(r.cuda)},
                         {"cudnn", r.cudnn == "-" ? json() : json(r.cudnn)},
                         {"failures", r.failures},
                         {"warnings", r.warnings},
                         {"worst", r.worst},
                         {"problem", r.problem.empty() ? json() : json(r.problem)},
                         {"advisories", [&] {
                              json ids = json::array();
                              for (const auto& [id, severity] : r.advisories) {
                                  ids.push_back(id);
                              }
                              return ids;
                          }()}});
    }
    json advisories = json::array();
    for (const auto& a : report.advisories) {
        advisories.push_back({{"id", a.id}, {"severity", a.severity}, {"hosts", a.hosts}});
    }
    emit_json(ctx,
              {{"command", "report"},
               {"ok", code == 0},
               {"hosts", hosts},
               {"advisories", advisories},
               {"totals",
                {{"hosts", report.hosts.size()},
                 {"failing", report.failing},
                 {"warning", report.warning}}}});
}

/// A host's worst finding as one cell: "id: finding", the reason its report is unreadable, or -.
std::string worst_cell(const doctor::HostReport& r) {
    std::string worst =
        !r.problem.empty()  ? r.problem
        : r.worst.is_null() ? "-"
        : r.worst["id"].is_string() && r.worst["finding"].is_string()
            ? r.worst["id"].get<std::string>() + ": " + r.worst["finding"].get<std::string>()
            : "-";
    worst = printable(worst);
    if (worst.size() > 100) {
        worst = worst.substr(0, 97) + "...";
    }
    return worst;
}

void report_table(std::ostream& out, const doctor::FleetReport& report) {
    const auto& rows = report.hosts;
    std::size_t wh = 4;
    std::size_t wg = 4;
    for (const auto& r : rows) {
        wh = std::max(wh, r.host.size());
        wg = std::max(wg, r.gpus.size());
    }
    out << std::left << std::setw(static_cast<int>(wh + 2)) << "HOST"
        << std::setw(static_cast<int>(wg + 2)) << "GPUS" << std::setw(12) << "DRIVER"
        << std::setw(9) << "CUDA" << std::setw(12) << "CUDNN" << std::setw(6) << "FAIL"
        << std::setw(6) << "WARN"
        << "WORST FINDING\n";
    for (const auto& r : rows) {
        out << std::left << std::setw(static_cast<int>(wh + 2)) << r.host
            << std::setw(static_cast<int>(wg + 2)) << r.gpus << std::setw(12) << r.driver
            << std::setw(9) << r.cuda << std::setw(12) << r.cudnn << std::setw(6)
            << (r.problem.empty() ? std::to_string(r.failures) : "?") << std::setw(6)
            << (r.problem.empty() ? std::to_string(r.warnings) : "?") << worst_cell(r) << "\n";
    }
    if (!report.advisories.empty()) {
        out << "advisories (hosts they apply to):\n";
        for (const auto& a : report.advisories) {
            out << "  " << std::left << std::setw(16) << a.id << std::setw(10) << a.severity
                << a.hosts << " host" << (a.hosts == 1 ? "" : "s") << "\n";
        }
    }
    out << rows.size() << " hosts: " << report.failing << " failing, " << report.warning
        << " with warnings, " << rows.size() - report.failing - report.warning << " clean\n";
}

int run_report(const ReportCli& o, Context& ctx) {
    auto report = doctor::read_fleet_reports(o.dir);
    if (!report) {
        return report_error(ctx, report.error(), "report");
    }
    int code = report->failing > 0 ? 1 : 0;
    if (ctx.json) {
        report_json(ctx, *report, code);
    } else {
        report_table(*ctx.out, *report);
    }
    return code;
}

} // namespace

void setup_report(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<ReportCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Examples:\n"
                "  cudaenv report reports/          one line per host, hosts with failures first\n"
                "  cudaenv report reports/ --json\n"
                "Reads DIR/<host>.json, each `cudaenv doctor --json` of one host (the fleet role\n"
                "fetches them). Exit: 0 no host fails, 1 some host fails or cannot be read.\n");
    sub->add_option("dir", o->dir, "a folder of per-host doctor documents")->required();
    sub->callback([o, &ctx] { ctx.exit_code = run_report(*o, ctx); });
}

} // namespace cudaenv::cli
