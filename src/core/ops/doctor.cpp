// The doctor operation (doctor.hpp).
#include "doctor.hpp"

#include "../text.hpp"
#include "core/doctor/advisory_subjects.hpp"
#include "core/doctor/answers.hpp"
#include "core/install/compose.hpp"
#include "core/ops/trust.hpp"
#include "core/suggest.hpp"

#include <algorithm>

namespace cudaenv::ops {

namespace {

Status check_probe_ids(const std::vector<std::string>& only) {
    for (const auto& id : only) {
        if (doctor::find_probe(id)) {
            continue;
        }
        std::vector<std::string> ids;
        for (const auto& p : doctor::probes()) {
            ids.emplace_back(p.id);
        }
        auto e = Error(ErrorCode::usage, "no probe named '" + id + "'");
        if (auto near = closest_match(id, ids)) {
            return std::move(e).with_hint("did you mean --only " + *near + "?");
        }
        return std::move(e).with_hint("probes: " + join(ids));
    }
    return Ok{};
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

/// The entry that stands for a layer: its worst finding's, else its first probe's.
const doctor::Entry* headline(const std::vector<const doctor::Entry*>& entries,
                              doctor::Status status) {
    for (const auto* e : entries) {
        if (e->finding.status == status) {
            return e;
        }
    }
    return entries.empty() ? nullptr : entries.front();
}

MachineFacts machine_facts(doctor::Host& host) {
    MachineFacts f;
    f.gpus = host.facts().pci_gpus();
    f.driver = host.facts().driver().version();
    const auto& tk = host.facts().toolkit();
    f.toolkit = tk.prefix;
    f.toolkit_origin = tk.origin;
    f.cudaenv_version = tk.cudaenv_version;
    f.cuda = tk.cuda;
    f.cudnn = tk.cudnn;
    for (const char* name : {"cudnn_version.h", "cudnn.h"}) {
        if (f.cudnn || tk.prefix.empty()) {
            break;
        }
        if (auto text = host.files().read(tk.prefix + "/include/" + name)) {
            f.cudnn = install::parse_cudnn_header(*text);
        }
    }
    return f;
}

} // namespace

Result<doctor::HostConfig> host_config(Session& session) {
    doctor::HostConfig hc;
    hc.sysroot = session.sysroot();
    if (std::error_code ec; !std::filesystem::is_directory(hc.sysroot, ec)) {
        return Error(ErrorCode::usage,
                     "CUDAENV_SYSROOT=" + hc.sysroot.string() + " is not a directory")
            .with_hint("unset CUDAENV_SYSROOT to diagnose this machine");
    }
    hc.env = session.env;
    hc.cwd = session.cwd;
    hc.self_exe = session.exe_path;
    hc.root = session.root();
    // a damaged own state.json is the cuda-link probe's finding: it reads the root's own
    auto global = store::effective_global(hc.root);
    hc.machine_root = global ? global->owner : store::Root{hc.root.dir, {}, hc.root.platforms};
    hc.manifests = session.manifests_path();
    hc.manifests_in_use = session.manifests_in_use();
    if (auto trust = trust_state(session)) {
        std::string from = trust->root.bytes.empty() ? "built in" : trust->root.origin;
        hc.trust_details.push_back(
            "trust: root metadata version " + std::to_string(trust->root.version) + " (" + from +
            "), bundles signed by " + std::to_string(trust->root.bundle.threshold) + " of " +
            std::to_string(trust->root.bundle.keys.size()) + " release keys or one of " +
            std::to_string(trust->site.size()) + " site keys, " +
            std::to_string(trust->revoked.size()) + " revoked here" +
            (trust->anchors.fixed ? " (the machine's own /etc/cudaenv and /var/lib/cudaenv)" : ""));
        if (auto floor = trust->floor()) {
            hc.trust_details.push_back("rollback floor: serial " + std::to_string(floor->serial) +
                                       " (" + floor->file.string() + ")");
        }
    } else {
        hc.trust_problem = trust.error().message;
    }
    for (const auto& a : session.system.acknowledged) {
        hc.acknowledged.push_back({a.id, a.reason});
    }
    hc.ldconfig = session.getenv("CUDAENV_LDCONFIG").value_or("");
    if (auto ms = session.env_number_value("CUDAENV_DOCTOR_TIMEOUT")) {
        // seconds (decimals allowed) each child (a library query, nvcc, gcc) may take; default 10
        hc.child_timeout = std::chrono::milliseconds(*ms);
    }
    return hc;
}

Result<Diagnosis> diagnose(Session& session, const DoctorRequest& request) {
    CUDAENV_TRY(check_probe_ids(request.only));
    auto hc = CUDAENV_TRY(host_config(session));
    hc.deep = request.deep;
    // what the machine's programs answered before, kept in the root's cache (not made for this)
    std::error_code ec;
    doctor::Answers answers(std::filesystem::is_directory(hc.root.dir, ec)
                                ? hc.root.dir / "cache" / "doctor-answers.json"
                                : std::filesystem::path());
    hc.answers = &answers;
    doctor::Host host(hc);
    Diagnosis d;
    d.sysroot = hc.sysroot;
    d.entries = doctor::run(host, request.only);
    answers.save();
    for (const auto& e : d.entries) {
        switch (e.finding.status) {
        case doctor::Status::ok:
            ++d.ok;
            break;
        case doctor::Status::skip:
            ++d.skip;
            break;
        case doctor::Status::warn:
            ++d.warn;
            break;
        case doctor::Status::fail:
            ++d.fail;
            break;
        }
    }
    d.failed = d.fail > 0 || (request.strict && d.warn > 0);
    for (auto layer : doctor::layers()) {
        DoctorLayer l{layer, doctor::Status::skip, {}, nullptr};
        for (const auto& e : d.entries) {
            if (e.probe->layer == layer) {
                l.entries.push_back(&e);
            }
        }
        if (l.entries.empty()) {
            continue;
        }
        l.status = layer_status(l.entries);
        l.headline = headline(l.entries, l.status);
        d.layers.push_back(std::move(l));
    }
    if (request.facts) {
        d.facts = machine_facts(host);
    }
    bool ran = std::any_of(d.entries.begin(), d.entries.end(), [](const doctor::Entry& e) {
        return e.probe->id == "advisories" && e.finding.status != doctor::Status::skip;
    });
    if (const auto& known = host.manifests().advisories(); ran && known) {
        // the probe's hits as data: the same subjects and matching, asked again (facts are read
        // once per Host, so this costs no second look at the machine)
        for (const auto& h :
             advisory::match(*known, doctor::advisory_subjects(host), hc.acknowledged)) {
            d.advisories.push_back({h.advisory->id,
                                    std::string(manifest::to_string(h.advisory->severity)),
                                    h.subject.label(),
                                    h.subject.where,
                                    h.fix ? h.fix->str() : std::string(),
                                    h.acknowledged});
        }
    }
    return d;
}

} // namespace cudaenv::ops
