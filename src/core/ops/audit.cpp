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

} // namespace cudaenv::ops
