// cudaenv doctor [-v] [--only ID]... [--strict] [--deep] | __doctor-query KIND PATH
#include "core/ops/doctor.hpp"

#include "../context.hpp"
#include "core/doctor/query.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct DoctorCli {
    bool verbose = false;
    bool strict = false;
    bool deep = false;
    std::vector<std::string> only;
};

/// Colour for the marks only, and only on a terminal (NO_COLOR, --no-color, TERM=dumb: none).
bool g_color = false;

std::string mark(doctor::Status s) {
    const char* m = "?";
    const char* colour = "";
    switch (s) {
    case doctor::Status::ok:
        m = "✓";
        colour = "\033[32m";
        break;
    case doctor::Status::warn:
        m = "!";
        colour = "\033[33m";
        break;
    case doctor::Status::fail:
        m = "✗";
        colour = "\033[31m";
        break;
    case doctor::Status::skip:
        m = "-";
        colour = "\033[2m";
        break;
    }
    return g_color ? std::string(colour) + m + "\033[0m" : std::string(m);
}

/// " (+2 more)" when a probe found more than its headline.
std::string more_text(const doctor::Finding& f) {
    return f.more.empty() ? std::string() : " (+" + std::to_string(f.more.size()) + " more)";
}

void print_finding(std::ostream& out, const doctor::Entry& e, bool verbose, const char* indent) {
    const auto& f = e.finding;
    out << indent << mark(f.status) << " " << e.probe->id << ": " << f.summary
        << (verbose ? "" : more_text(f)) << "\n";
    if (verbose) {
        for (const auto& d : f.details) {
            out << indent << "    " << d << "\n";
        }
    }
    if (!f.fix.empty()) {
        out << indent << "    fix: " << f.fix << "\n";
    }
    if (verbose) {
        for (const auto& m : f.more) {
            out << indent << "  " << mark(m.status) << " " << e.probe->id << ": " << m.summary
                << "\n";
            if (!m.fix.empty()) {
                out << indent << "    fix: " << m.fix << "\n";
            }
        }
    }
}

nlohmann::json diagnosis_json(const ops::Diagnosis& d, bool strict) {
    using nlohmann::json;
    json probes = json::array();
    json layers = json::array();
    for (const auto& l : d.layers) {
        layers.push_back({{"name", l.name}, {"status", to_string(l.status)}});
    }
    for (const auto& e : d.entries) {
        json findings = json::array();
        if (e.finding.status == doctor::Status::warn || e.finding.status == doctor::Status::fail) {
            findings.push_back({{"status", to_string(e.finding.status)},
                                {"finding", e.finding.summary},
                                {"fix", e.finding.fix}});
        }
        for (const auto& m : e.finding.more) {
            findings.push_back(
                {{"status", to_string(m.status)}, {"finding", m.summary}, {"fix", m.fix}});
        }
        probes.push_back({{"id", e.probe->id},
                          {"findings", findings},
                          {"layer", e.probe->layer},
                          {"title", e.probe->title},
                          {"status", to_string(e.finding.status)},
                          {"finding", e.finding.summary},
                          {"details", e.finding.details},
                          {"fix", e.finding.fix.empty() ? json() : json(e.finding.fix)}});
    }
    // the machine in a few facts, for `cudaenv report` and fleet tooling
    json gpus = json::array();
    const auto& f = *d.facts;
    for (const auto& g : f.gpus) {
        gpus.push_back({{"address", g.address}, {"device_id", g.device_id}, {"name", g.name}});
    }
    auto opt = [](const auto& v) { return v ? json(v->str()) : json(); };
    json facts{{"gpus", gpus},
               {"driver", opt(f.driver)},
               {"toolkit", f.toolkit.empty() ? json() : json(f.toolkit)},
               {"toolkit_origin", f.toolkit_origin.empty() ? json() : json(f.toolkit_origin)},
               {"cudaenv_version", f.cudaenv_version ? json(*f.cudaenv_version) : json()},
               {"cuda", opt(f.cuda)},
               {"cudnn", opt(f.cudnn)}};
    return {{"command", "doctor"},
            {"ok", !d.failed},
            {"facts", facts},
            {"status", to_string(doctor::worst(d.entries))},
            {"strict", strict},
            {"sysroot", d.sysroot.string()},
            {"counts", {{"ok", d.ok}, {"warn", d.warn}, {"fail", d.fail}, {"skip", d.skip}}},
            {"layers", layers},
            {"probes", probes},
            {"advisories", [&] {
                 // what the advisories probe found, as data (`cudaenv report` counts hosts)
                 json a = json::array();
                 for (const auto& x : d.advisories) {
                     a.push_back({{"id", x.id},
                                  {"severity", x.severity},
                                  {"subject", x.subject},
                                  {"where", x.where},
                                  {"fixed", x.fixed.empty() ? json() : json(x.fixed)},
                                  {"acknowledged",
                                   x.acknowledged.empty() ? json() : json(x.acknowledged)}});
                 }
                 return a;
             }()}};
}

void print_diagnosis(std::ostream& out, const ops::Diagnosis& d, bool verbose) {
    out << "cudaenv doctor" << (d.sysroot == "/" ? "" : " (sysroot " + d.sysroot.string() + ")")
        << (verbose ? "" : "; details: cudaenv doctor -v") << "\n";
    for (const auto& l : d.layers) {
        out << "[" << mark(l.status) << "] " << l.name << ": " << l.headline->finding.summary
            << more_text(l.headline->finding) << "\n";
        if (verbose) {
            for (const auto* e : l.entries) {
                print_finding(out, *e, true, "    ");
            }
        }
    }
    if (!verbose && (d.fail || d.warn)) {
        out << "\n";
        for (const auto& e : d.entries) {
            if (e.finding.status == doctor::Status::fail ||
                e.finding.status == doctor::Status::warn) {
                print_finding(out, e, false, "");
            }
        }
    }
    out << "\n"
        << d.fail << (d.fail == 1 ? " failure, " : " failures, ") << d.warn
        << (d.warn == 1 ? " warning, " : " warnings, ") << d.ok << " ok, " << d.skip
        << " skipped\n";
}

int run_doctor(const DoctorCli& o, Context& ctx) {
    auto d = ops::diagnose(ctx, {o.only, o.strict, ctx.json, o.deep});
    if (!d) {
        return report_error(ctx, d.error(), "doctor");
    }
    if (ctx.json) {
        emit_json(ctx, diagnosis_json(*d, o.strict));
    } else {
        g_color = ctx.stdout_color && !ctx.no_color;
        print_diagnosis(*ctx.out, *d, o.verbose);
    }
    return d->failed ? 1 : 0;
}

struct QueryCli {
    std::string kind;
    std::string path;
};

} // namespace

void setup_doctor_query(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<QueryCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->group("");
    sub->add_option("kind", o->kind)->required();
    sub->add_option("path", o->path)->required();
    sub->callback([o, &ctx] {
        ctx.exit_code = doctor::query_library_here(o->kind, o->path.c_str(), *ctx.out);
    });
}

void setup_doctor(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<DoctorCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Examples:\n"
                "  cudaenv doctor                 one line per layer, then what to fix\n"
                "  cudaenv doctor -v              every probe with its details\n"
                "  cudaenv doctor --only cudnn    one probe (and what it stands on)\n"
                "  cudaenv doctor --json --strict a gate for Ansible: exit 1 on warnings too\n"
                "Exit: 0 nothing failed, 1 something failed (--strict: or warned), 2 usage.");
    sub->add_flag("-v,--verbose", o->verbose, "every probe, with its details");
    sub->add_option("--only", o->only, "run only this probe (repeatable)");
    sub->add_flag("--strict", o->strict, "exit 1 on warnings too");
    sub->add_flag("--deep",
                  o->deep,
                  "also launch a small kernel on every GPU through the driver and check its "
                  "results (no nvcc needed)");
    sub->callback([o, &ctx] { ctx.exit_code = run_doctor(*o, ctx); });
}

} // namespace cudaenv::cli
