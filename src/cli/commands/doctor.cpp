// cudaenv doctor [-v] [--only ID]... [--strict] | __doctor-query KIND PATH
#include "core/doctor/doctor.hpp"

#include "../context.hpp"
#include "common.hpp"
#include "core/doctor/host.hpp"
#include "core/doctor/query.hpp"
#include "core/install/compose.hpp"
#include "core/suggest.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct DoctorCli {
    bool verbose = false;
    bool strict = false;
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

/// A layer's status: the worst of its probes that ran; skip only when all were skipped.
doctor::Status layer_status(const std::vector<const doctor::Entry*>& entries) {
    std::optional<doctor::Status> s;
    for (const auto* e : entries) {
        if (e->finding.status != doctor::Status::skip) {
            s = std::max(s.value_or(doctor::Status::ok), e->finding.status);
        }
    }
    return s.value_or(doctor::Status::skip);
}

/// The line that stands for a layer: its worst finding's, else its first probe's.
const doctor::Entry* headline(const std::vector<const doctor::Entry*>& entries,
                              doctor::Status status) {
    for (const auto* e : entries) {
        if (e->finding.status == status) {
            return e;
        }
    }
    return entries.empty() ? nullptr : entries.front();
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

int run_doctor(const DoctorCli& o, Context& ctx) {
    for (const auto& id : o.only) {
        if (!doctor::find_probe(id)) {
            std::vector<std::string> ids;
            for (const auto& p : doctor::probes()) {
                ids.emplace_back(p.id);
            }
            auto e = Error(ErrorCode::usage, "no probe named '" + id + "'");
            if (auto near = closest_match(id, ids)) {
                e = std::move(e).with_hint("did you mean --only " + *near + "?");
            } else {
                std::string all;
                for (const auto& i : ids) {
                    all += (all.empty() ? "" : ", ") + i;
                }
                e = std::move(e).with_hint("probes: " + all);
            }
            return report_error(ctx, e, "doctor");
        }
    }
    auto hc = host_config(ctx);
    if (!hc) {
        return report_error(ctx, hc.error(), "doctor");
    }
    doctor::Host host(*hc);
    auto entries = doctor::run(host, o.only);

    std::size_t counts[4] = {0, 0, 0, 0};
    for (const auto& e : entries) {
        ++counts[static_cast<int>(e.finding.status)];
    }
    std::size_t n_ok = counts[0], n_skip = counts[1], n_warn = counts[2], n_fail = counts[3];
    bool failed = n_fail > 0 || (o.strict && n_warn > 0);
    int code = failed ? 1 : 0;

    if (ctx.json) {
        using nlohmann::json;
        json probes = json::array();
        json layers = json::array();
        for (auto layer : doctor::layers()) {
            std::vector<const doctor::Entry*> in;
            for (const auto& e : entries) {
                if (e.probe->layer == layer) {
                    in.push_back(&e);
                }
            }
            if (!in.empty()) {
                layers.push_back({{"name", layer}, {"status", to_string(layer_status(in))}});
            }
        }
        for (const auto& e : entries) {
            json findings = json::array();
            if (e.finding.status == doctor::Status::warn ||
                e.finding.status == doctor::Status::fail) {
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
        // the machine in a few facts, for `cudaenv report` and fleet tooling (what the probes
        // found; computed once and shared with them)
        json gpus = json::array();
        for (const auto& g : host.pci_gpus()) {
            gpus.push_back({{"address", g.address}, {"device_id", g.device_id}, {"name", g.name}});
        }
        auto opt = [](const auto& v) { return v ? json(v->str()) : json(); };
        const auto& tk = host.toolkit();
        std::optional<Version> cudnn = tk.cudnn; // cudaenv's record, else the toolkit's header
        for (const char* name : {"cudnn_version.h", "cudnn.h"}) {
            if (cudnn || tk.prefix.empty()) {
                break;
            }
            if (auto text = host.read(tk.prefix + "/include/" + name)) {
                cudnn = install::parse_cudnn_header(*text);
            }
        }
        json facts{{"gpus", gpus},
                   {"driver", opt(host.driver().version())},
                   {"toolkit", tk.prefix.empty() ? json() : json(tk.prefix)},
                   {"toolkit_origin", tk.origin.empty() ? json() : json(tk.origin)},
                   {"cudaenv_version", tk.cudaenv_version ? json(*tk.cudaenv_version) : json()},
                   {"cuda", opt(tk.cuda)},
                   {"cudnn", opt(cudnn)}};
        emit_json(ctx,
                  {{"command", "doctor"},
                   {"ok", !failed},
                   {"facts", facts},
                   {"status", to_string(doctor::worst(entries))},
                   {"strict", o.strict},
                   {"sysroot", hc->sysroot.string()},
                   {"counts", {{"ok", n_ok}, {"warn", n_warn}, {"fail", n_fail}, {"skip", n_skip}}},
                   {"layers", layers},
                   {"probes", probes}});
        return code;
    }

    g_color = ctx.stdout_color && !ctx.no_color;
    std::ostream& out = *ctx.out;
    out << "cudaenv doctor" << (hc->sysroot == "/" ? "" : " (sysroot " + hc->sysroot.string() + ")")
        << (o.verbose ? "" : "; details: cudaenv doctor -v") << "\n";
    for (auto layer : doctor::layers()) {
        std::vector<const doctor::Entry*> in;
        for (const auto& e : entries) {
            if (e.probe->layer == layer) {
                in.push_back(&e);
            }
        }
        if (in.empty()) {
            continue;
        }
        auto status = layer_status(in);
        const auto* head = headline(in, status);
        out << "[" << mark(status) << "] " << layer << ": " << head->finding.summary
            << more_text(head->finding) << "\n";
        if (o.verbose) {
            for (const auto* e : in) {
                print_finding(out, *e, true, "    ");
            }
        }
    }
    if (!o.verbose && (n_fail || n_warn)) {
        out << "\n";
        for (const auto& e : entries) {
            if (e.finding.status == doctor::Status::fail ||
                e.finding.status == doctor::Status::warn) {
                print_finding(out, e, false, "");
            }
        }
    }
    out << "\n"
        << n_fail << (n_fail == 1 ? " failure, " : " failures, ") << n_warn
        << (n_warn == 1 ? " warning, " : " warnings, ") << n_ok << " ok, " << n_skip
        << " skipped\n";
    return code;
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
    sub->callback([o, &ctx] { ctx.exit_code = run_doctor(*o, ctx); });
}

} // namespace cudaenv::cli
