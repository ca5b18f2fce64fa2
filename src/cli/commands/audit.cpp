// cudaenv audit [--fail-on LEVEL]: the advisories that apply to this machine and every installed
// version, each with the version that fixes it; acknowledged ones apart. Exit 1 when one applies
// (at or above --fail-on), 0 otherwise.
#include "core/ops/audit.hpp"

#include "common.hpp"
#include "core/text.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct AuditCli {
    std::string fail_on;
};

nlohmann::json subject_json(const advisory::Subject& s) {
    nlohmann::json j{{"product", std::string(manifest::to_string(s.product))},
                     {"version", s.version.str()},
                     {"where", s.where}};
    if (!s.version_name.empty()) {
        j["installed_version"] = s.version_name;
    }
    if (s.product == manifest::AdvisoryProduct::cublas) {
        j["cuda"] = s.cuda;
        j["patched"] = s.patched;
    }
    if (s.product == manifest::AdvisoryProduct::driver) {
        j["datacenter"] = s.datacenter;
    }
    return j;
}

nlohmann::json hit_json(const advisory::Hit& h) {
    const auto& a = *h.advisory;
    nlohmann::json cves = nlohmann::json::array();
    for (const auto& c : a.cves) {
        cves.push_back(c.id);
    }
    nlohmann::json j{
        {"id", a.id},
        {"kind", a.kind},
        {"severity", std::string(manifest::to_string(a.severity))},
        {"cvss", a.cvss ? nlohmann::json(*a.cvss) : nlohmann::json()},
        {"title", a.title},
        {"url", a.url},
        {"published", a.published},
        {"cves", cves},
        {"subject", subject_json(h.subject)},
        {"fixed", h.fix ? nlohmann::json(h.fix->str()) : nlohmann::json()},
        {"fix", h.fix_text()},
        {"notes", h.notes},
        {"acknowledged", h.counts() ? nlohmann::json() : nlohmann::json(h.acknowledged)}};
    if (!a.partial.empty()) {
        j["partial"] = a.partial;
    }
    return j;
}

std::string score(const manifest::Advisory& a) {
    std::string out(manifest::to_string(a.severity));
    if (a.severity == manifest::Severity::none) {
        out = a.kind == "correctness" ? "wrong results" : "unrated";
    }
    if (a.cvss) {
        char buf[16];
        std::snprintf(buf, sizeof buf, " %.1f", *a.cvss);
        out += buf;
    }
    return out;
}

int run_audit(const AuditCli& o, Context& ctx) {
    ops::AuditRequest req;
    if (!o.fail_on.empty()) {
        req.fail_on = manifest::severity_of(o.fail_on);
        if (!req.fail_on || *req.fail_on == manifest::Severity::none) {
            return report_error(ctx,
                                Error(ErrorCode::usage,
                                      "--fail-on takes low, medium, high or critical, got '" +
                                          printable(o.fail_on) + "'"),
                                "audit");
        }
    }
    auto a = ops::audit(ctx, req);
    if (!a) {
        return report_error(ctx, a.error(), "audit");
    }
    std::size_t counted = advisory::counted(a->hits);
    std::size_t critical = 0;
    for (const auto& h : a->hits) {
        critical += h.counts() && h.advisory->critical() ? 1u : 0u;
    }
    if (ctx.json) {
        nlohmann::json subjects = nlohmann::json::array();
        for (const auto& s : a->subjects) {
            subjects.push_back(subject_json(s));
        }
        nlohmann::json hits = nlohmann::json::array();
        for (const auto& h : a->hits) {
            hits.push_back(hit_json(h));
        }
        emit_json(ctx,
                  {{"command", "audit"},
                   {"ok", !a->failed},
                   {"as_of", a->advisories.as_of},
                   {"known", a->advisories.advisories.size()},
                   {"subjects", subjects},
                   {"advisories", hits},
                   {"applies", counted},
                   {"critical", critical},
                   {"acknowledged", a->hits.size() - counted},
                   {"notes", a->notes}});
        return a->failed ? 1 : 0;
    }
    auto& out = *ctx.out;
    if (a->advisories.advisories.empty()) {
        out << "the manifests in use carry no advisories (made before cudaenv knew them): "
               "cudaenv update brings them\n";
        return 0;
    }
    out << "advisories as of " << a->advisories.as_of << " (" << a->advisories.advisories.size()
        << " known), checked against " << a->subjects.size() << ":\n";
    for (const auto& s : a->subjects) {
        out << "  " << printable(s.label()) << "  " << printable(s.where) << "\n";
    }
    if (a->subjects.empty()) {
        out << "  nothing: no driver, toolkit, cuBLAS, container toolkit or Jetson Linux found\n";
    }
    for (const auto& h : a->hits) {
        if (!h.counts()) {
            continue;
        }
        out << "\n"
            << h.advisory->id << "  " << score(*h.advisory) << "  " << printable(h.subject.label())
            << "  " << printable(h.subject.where)
            << (h.fix ? "  fixed in " + h.fix->str() : std::string("  no fix named")) << "\n"
            << "  " << printable(h.advisory->title) << "\n";
        for (const auto& n : h.notes) {
            out << "  note: " << printable(n) << "\n";
        }
        if (!h.advisory->partial.empty()) {
            out << "  known in part: " << printable(h.advisory->partial) << "\n";
        }
        out << "  " << h.advisory->url << "\n"
            << "  fix: " << printable(h.fix_text()) << "\n";
    }
    for (const auto& n : a->notes) {
        out << "\nnote: " << printable(n) << "\n";
    }
    for (const auto& h : a->hits) {
        if (!h.counts()) {
            out << "\nacknowledged: " << h.advisory->id << " for " << printable(h.subject.label())
                << " (" << printable(h.subject.where) << "): " << printable(h.acknowledged) << "\n";
        }
    }
    out << "\n";
    if (counted == 0) {
        out << "no advisory applies"
            << (a->hits.empty() ? std::string()
                                : " but the " + std::to_string(a->hits.size()) + " acknowledged")
            << "\n";
    } else {
        out << counted << " advisor" << (counted == 1 ? "y applies" : "ies apply")
            << (critical ? " (" + std::to_string(critical) + " critical)" : std::string()) << "\n";
    }
    return a->failed ? 1 : 0;
}

} // namespace

void setup_audit(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<AuditCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Checks NVIDIA's security bulletins and cuBLAS correctness fixes (the manifests'\n"
                "advisories.json; `cudaenv update` brings new ones) against this machine's\n"
                "driver, NVIDIA Container Toolkit and Jetson Linux, and every installed version's\n"
                "CUDA and cuBLAS. An advisory acknowledged in /etc/cudaenv/config\n"
                "(acknowledge = ID reason) is listed apart and does not count.\n"
                "Examples:\n"
                "  cudaenv audit\n"
                "  cudaenv audit --json --fail-on high   a gate for Ansible\n"
                "Exit: 0 none applies, 1 one applies (at or above --fail-on; a cuBLAS\n"
                "correctness bug counts at every level), 2 usage, 4 the advisories do not load.");
    sub->add_option("--fail-on",
                    o->fail_on,
                    "the lowest severity that fails: low, medium, high, "
                    "critical (default: any)");
    sub->callback([o, &ctx] { ctx.exit_code = run_audit(*o, ctx); });
}

} // namespace cudaenv::cli
