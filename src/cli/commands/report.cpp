// cudaenv report DIR: one fleet table from the per-host `cudaenv doctor --json` documents the
// fleet role fetches (DIR/<host>.json), hosts with failures first.
#include "../context.hpp"
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

struct HostRow {
    std::string host;
    std::string gpus = "-";
    std::string driver = "-";
    std::string cuda = "-";
    std::string cudnn = "-";
    std::size_t failures = 0;
    std::size_t warnings = 0;
    json worst;          ///< {id, status, finding, fix} or null
    std::string problem; ///< the document could not be read
};

std::string text_or_dash(const json& v) {
    return v.is_string() && !v.get<std::string>().empty() ? printable(v.get<std::string>()) : "-";
}

/// "2x NVIDIA H100 80GB HBM3" / "NVIDIA A100, NVIDIA T4" / "none"
std::string describe_gpus(const json& gpus) {
    if (!gpus.is_array() || gpus.empty()) {
        return "none";
    }
    std::vector<std::pair<std::string, int>> counts;
    for (const auto& g : gpus) {
        std::string name = g.is_object() ? text_or_dash(g.value("name", json())) : "-";
        auto it = std::find_if(
            counts.begin(), counts.end(), [&](const auto& c) { return c.first == name; });
        if (it == counts.end()) {
            counts.emplace_back(name, 1);
        } else {
            ++it->second;
        }
    }
    std::string out;
    for (const auto& [name, n] : counts) {
        out += (out.empty() ? "" : ", ") + (n > 1 ? std::to_string(n) + "x " : "") + name;
    }
    return out;
}

HostRow read_host(const fs::path& file) {
    HostRow row;
    row.host = printable(file.stem().string());
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    json doc = json::parse(text.str(), nullptr, false);
    if (!in || doc.is_discarded() || !doc.is_object() || doc.value("command", "") != "doctor" ||
        !doc.contains("probes") || !doc["probes"].is_array()) {
        row.problem = "not a `cudaenv doctor --json` document";
        return row;
    }
    const json& facts = doc.contains("facts") && doc["facts"].is_object() ? doc["facts"] : json();
    if (facts.is_object()) {
        row.gpus = describe_gpus(facts.value("gpus", json()));
        row.driver = text_or_dash(facts.value("driver", json()));
        row.cuda = text_or_dash(facts.value("cuda", json()));
        row.cudnn = text_or_dash(facts.value("cudnn", json()));
    }
    const json* worst = nullptr;
    for (const auto& p : doc["probes"]) {
        if (!p.is_object()) {
            continue;
        }
        std::string status = p.value("status", "");
        if (status == "fail") {
            ++row.failures;
            if (!worst || (*worst).value("status", "") != "fail") {
                worst = &p;
            }
        } else if (status == "warn") {
            ++row.warnings;
            if (!worst) {
                worst = &p;
            }
        }
    }
    if (worst) {
        row.worst = {{"id", worst->value("id", "")},
                     {"status", worst->value("status", "")},
                     {"finding", worst->value("finding", "")},
                     {"fix", worst->contains("fix") ? (*worst)["fix"] : json()}};
    }
    return row;
}

struct ReportCli {
    std::string dir;
};

int run_report(const ReportCli& o, Context& ctx) {
    std::vector<HostRow> rows;
    std::error_code ec;
    for (fs::directory_iterator it(o.dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() == ".json" && it->is_regular_file(ec)) {
            rows.push_back(read_host(it->path()));
        }
    }
    if (ec) {
        return report_error(
            ctx,
            Error(ErrorCode::filesystem, "cannot read '" + o.dir + "': " + ec.message()),
            "report");
    }
    if (rows.empty()) {
        return report_error(
            ctx,
            Error(ErrorCode::not_found, "no doctor reports (*.json) in '" + o.dir + "'")
                .with_hint("the fleet role fetches one per host into "
                           "cudaenv_report_dir; or: cudaenv doctor --json > "
                           "DIR/$(hostname).json"),
            "report");
    }
    // hosts that could not be read and hosts with failures first, then warnings, then by name
    std::sort(rows.begin(), rows.end(), [](const HostRow& a, const HostRow& b) {
        auto key = [](const HostRow& r) {
            return std::make_tuple(
                r.problem.empty(), -static_cast<long>(r.failures), -static_cast<long>(r.warnings));
        };
        return key(a) != key(b) ? key(a) < key(b) : a.host < b.host;
    });
    std::size_t failing = 0, warning = 0;
    for (const auto& r : rows) {
        failing += (!r.problem.empty() || r.failures > 0) ? 1u : 0u;
        warning += (r.problem.empty() && r.failures == 0 && r.warnings > 0) ? 1u : 0u;
    }
    int code = failing > 0 ? 1 : 0;
    if (ctx.json) {
        json hosts = json::array();
        for (const auto& r : rows) {
            hosts.push_back({{"host", r.host},
                             {"gpus", r.gpus},
                             {"driver", r.driver == "-" ? json() : json(r.driver)},
                             {"cuda", r.cuda == "-" ? json() : json(r.cuda)},
                             {"cudnn", r.cudnn == "-" ? json() : json(r.cudnn)},
                             {"failures", r.failures},
                             {"warnings", r.warnings},
                             {"worst", r.worst},
                             {"problem", r.problem.empty() ? json() : json(r.problem)}});
        }
        emit_json(
            ctx,
            {{"command", "report"},
             {"ok", code == 0},
             {"hosts", hosts},
             {"totals", {{"hosts", rows.size()}, {"failing", failing}, {"warning", warning}}}});
        return code;
    }
    std::ostream& out = *ctx.out;
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
        std::string worst = !r.problem.empty() ? r.problem
                            : r.worst.is_null()
                                ? "-"
                                : r.worst.value("id", "") + ": " + r.worst.value("finding", "");
        worst = printable(worst);
        if (worst.size() > 100) {
            worst = worst.substr(0, 97) + "...";
        }
        out << std::left << std::setw(static_cast<int>(wh + 2)) << r.host
            << std::setw(static_cast<int>(wg + 2)) << r.gpus << std::setw(12) << r.driver
            << std::setw(9) << r.cuda << std::setw(12) << r.cudnn << std::setw(6)
            << (r.problem.empty() ? std::to_string(r.failures) : "?") << std::setw(6)
            << (r.problem.empty() ? std::to_string(r.warnings) : "?") << worst << "\n";
    }
    out << rows.size() << " hosts: " << failing << " failing, " << warning << " with warnings, "
        << rows.size() - failing - warning << " clean\n";
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
