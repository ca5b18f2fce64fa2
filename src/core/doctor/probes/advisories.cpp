// Probe: the advisories that apply to this machine (docs/advisories.md): NVIDIA's security
// bulletins against the driver, the container toolkit and Jetson Linux; the toolkit bulletins and
// cuBLAS correctness fixes against the selected toolkit and every installed version. A critical
// one fails, the others warn (--strict fails on them); one the config acknowledges is shown with
// its reason and not counted.
#include "../advisory_subjects.hpp"
#include "probes.hpp"

namespace cudaenv::doctor::checks {

Finding advisories(Host& h) {
    const auto& known = h.manifests().advisories();
    if (!known) {
        return warn("the advisories manifest does not load: " + known.error().message,
                    "cudaenv update (a signed set brings a good one), or reinstall cudaenv");
    }
    if (known->advisories.empty()) {
        return skip("the manifests in use carry no advisories (made before cudaenv knew them)",
                    {"cudaenv update brings them"});
    }
    auto subjects = advisory_subjects(h);
    auto hits = advisory::match(*known, subjects, h.config().acknowledged);
    std::vector<std::string> details{"advisories as of " + known->as_of + " (" +
                                     std::to_string(known->advisories.size()) + " known)"};
    std::string checked;
    for (const auto& s : subjects) {
        checked += (checked.empty() ? "" : ", ") + s.label() + " (" + s.where + ")";
        if (s.product == manifest::AdvisoryProduct::driver) {
            auto later = advisory::bulletins_not_listing(*known, s.version.major());
            if (!later.empty()) {
                std::string ids;
                for (const auto& id : later) {
                    ids += (ids.empty() ? "" : ", ") + id;
                }
                details.push_back("R" + std::to_string(s.version.major()) +
                                  " is not listed by the later driver bulletins " + ids +
                                  ": NVIDIA does not say whether it is affected; a branch it "
                                  "stops listing may no longer get fixes");
            }
        }
    }
    details.push_back("checked: " + (checked.empty() ? std::string("nothing found") : checked));
    std::vector<Issue> issues;
    for (const auto& hit : hits) {
        if (!hit.counts()) {
            details.push_back("acknowledged: " + hit.advisory->id + " for " + hit.subject.label() +
                              " (" + hit.subject.where + "): " + hit.acknowledged);
            continue;
        }
        std::string line = hit.summary();
        if (hit.fix) {
            line += "; fixed in " + hit.fix->str();
        }
        details.push_back(hit.advisory->id + ": " + hit.advisory->title + " (" + hit.advisory->url +
                          ")");
        for (const auto& n : hit.notes) {
            details.push_back("  " + n);
        }
        issues.push_back({hit.advisory->critical() ? Status::fail : Status::warn,
                          std::move(line),
                          hit.fix_text()});
    }
    if (subjects.empty()) {
        return skip("no driver, toolkit, cuBLAS, container toolkit or Jetson Linux found to check",
                    details);
    }
    return verdict(
        std::move(issues),
        ok("no known advisory applies (" + std::to_string(subjects.size()) + " checked)", details));
}

} // namespace cudaenv::doctor::checks
