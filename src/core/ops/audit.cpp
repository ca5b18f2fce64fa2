#include "audit.hpp"

#include "core/doctor/advisory_subjects.hpp"
#include "core/doctor/host.hpp"
#include "core/ops/doctor.hpp"

namespace cudaenv::ops {

Result<Audit> audit(Session& session, const AuditRequest& request) {
    Audit out;
    out.advisories = CUDAENV_TRY(manifest::load_advisories(session.manifests_path()));
    auto hc = CUDAENV_TRY(host_config(session));
    doctor::Host host(hc);
    out.subjects = doctor::advisory_subjects(host);
    out.hits = advisory::match(out.advisories, out.subjects, hc.acknowledged);
    for (const auto& s : out.subjects) {
        if (s.product != manifest::AdvisoryProduct::driver) {
            continue;
        }
        auto later = advisory::bulletins_not_listing(out.advisories, s.version.major());
        if (!later.empty()) {
            std::string ids;
            for (const auto& id : later) {
                ids += (ids.empty() ? "" : ", ") + id;
            }
            out.notes.push_back("R" + std::to_string(s.version.major()) +
                                " is not listed by the later driver bulletins " + ids +
                                ": NVIDIA does not say whether it is affected; a branch it stops "
                                "listing may no longer get fixes");
        }
    }
    for (const auto& h : out.hits) {
        if (!h.counts()) {
            continue;
        }
        // a correctness bug has no severity: it counts at every threshold
        auto s = h.advisory->severity;
        if (!request.fail_on || s == manifest::Severity::none || s >= *request.fail_on) {
            out.failed = true;
        }
    }
    return out;
}

std::vector<AdvisoryNote> advisories_for(const Session& session, const Resolution& r) {
    std::vector<AdvisoryNote> out;
    if (!r.cuda) {
        return out;
    }
    auto known = manifest::load_advisories(session.manifests_path());
    if (!known || known->advisories.empty()) {
        return out;
    }
    std::vector<advisory::Subject> subjects;
    advisory::Subject tk;
    tk.product = manifest::AdvisoryProduct::toolkit;
    tk.version = r.cuda->version;
    tk.version_name = r.version_name();
    subjects.push_back(tk);
    const auto* own = r.cuda->component("libcublas");
    if (r.cublas_patch || own) {
        advisory::Subject cublas;
        cublas.product = manifest::AdvisoryProduct::cublas;
        cublas.version = r.cublas_patch ? r.cublas_patch->version : own->version;
        cublas.patched = r.cublas_patch != nullptr;
        cublas.cuda = r.cuda->version.str();
        cublas.version_name = r.version_name();
        subjects.push_back(cublas);
    }
    std::vector<advisory::Acknowledgement> acks;
    for (const auto& a : session.system.acknowledged) {
        acks.push_back({a.id, a.reason});
    }
    for (const auto& h : advisory::match(*known, subjects, acks)) {
        AdvisoryNote n;
        n.id = h.advisory->id;
        n.severity = std::string(manifest::to_string(h.advisory->severity));
        n.critical = h.advisory->critical();
        n.text = h.summary();
        if (h.fix) {
            n.text += "; fixed in " + h.fix->str();
        }
        n.fix = h.fix_text();
        if (r.framework && r.framework_release &&
            h.subject.product == manifest::AdvisoryProduct::toolkit) {
            // the framework fixes the CUDA: a newer CUDA means a newer framework release
            n.fix += "; " + r.framework->name + " " + r.framework_release->series.str() +
                     " is built for CUDA " + r.cuda->version.truncated(2).str() + ": a newer " +
                     r.framework->name + " release, or `acknowledge = " + h.advisory->id +
                     " <reason>` in /etc/cudaenv/config to accept it";
        }
        n.acknowledged = h.acknowledged;
        out.push_back(std::move(n));
    }
    return out;
}

} // namespace cudaenv::ops
