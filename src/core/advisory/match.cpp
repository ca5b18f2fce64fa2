#include "match.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace cudaenv::advisory {

using manifest::AdvisoryProduct;

namespace {

bool before(const Version& a, const Version& b) {
    return Version::compare_numeric(a, b) < 0;
}

/// Whether a range speaks of this subject's line and GPUs at all.
bool concerns(const manifest::AffectedRange& r, const Subject& s) {
    if (r.product != s.product) {
        return false;
    }
    if (r.branch && *r.branch != s.version.major()) {
        return false; // another driver branch, another L4T major, another CUDA major
    }
    if (!r.compute_capabilities.empty() && !s.gpu_ccs.empty()) {
        return std::any_of(s.gpu_ccs.begin(), s.gpu_ccs.end(), [&](unsigned cc) {
            return std::find(r.compute_capabilities.begin(), r.compute_capabilities.end(), cc) !=
                   r.compute_capabilities.end();
        });
    }
    return true;
}

/// A toolkit known only by its major.minor (a pip-made toolkit's nvcc banner) is affected when
/// every release of that minor is: 13.0 by "prior to 13.1", not by "prior to 12.9.1".
bool holds(const manifest::AffectedRange& r, const Subject& s) {
    if (s.version.size() >= 3 || s.product != AdvisoryProduct::toolkit) {
        return r.contains(s.version, s.datacenter);
    }
    auto last = Version::try_parse(s.version.str() + ".99999");
    return r.contains(s.version, s.datacenter) && last && r.contains(*last, s.datacenter);
}

std::string score(const manifest::Advisory& a) {
    std::string out(manifest::to_string(a.severity));
    if (a.severity == manifest::Severity::none) {
        out = a.kind == "correctness" ? "wrong results" : "severity not known";
    }
    if (a.cvss) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%.1f", *a.cvss);
        out += ", CVSS " + std::string(buf);
    }
    return out;
}

} // namespace

std::string Subject::label() const {
    switch (product) {
    case AdvisoryProduct::driver:
        return "driver " + version.str();
    case AdvisoryProduct::toolkit:
        return "CUDA " + version.str();
    case AdvisoryProduct::cublas:
        return "cuBLAS " + version.str() + (patched ? " (patch" : " (") +
               (cuda.empty() ? std::string(")")
                             : (patched ? ", " : "") + std::string("CUDA ") + cuda + ")");
    case AdvisoryProduct::container_toolkit:
        return "NVIDIA Container Toolkit " + version.str();
    case AdvisoryProduct::jetson_l4t:
        return "Jetson Linux R" + version.str();
    }
    return version.str();
}

std::string Hit::fix_text() const {
    const auto& s = subject;
    if (!fix) {
        return "NVIDIA names no fixed version yet: follow " + advisory->url;
    }
    std::string v = fix->str();
    switch (s.product) {
    case AdvisoryProduct::driver:
        return "update the driver to " + v + " or newer on R" + std::to_string(s.version.major()) +
               " (or a newer branch's fixed driver)";
    case AdvisoryProduct::toolkit:
        return "use CUDA " + v + " or newer (cudaenv install " + v + ")";
    case AdvisoryProduct::cublas:
        if (!s.version_name.empty()) {
            return "take cuBLAS " + v + " or newer: cudaenv install " + s.version_name +
                   " --patch cublas";
        }
        return "use a cuBLAS " + v + " or newer (NVIDIA's cuBLAS patch release, or a newer CUDA)";
    case AdvisoryProduct::container_toolkit:
        return "upgrade the NVIDIA Container Toolkit to " + v +
               " or newer (apt-get install nvidia-container-toolkit)";
    case AdvisoryProduct::jetson_l4t:
        return "update Jetson Linux to R" + v + " or newer (JetPack OTA update)";
    }
    return v;
}

std::string Hit::summary() const {
    return advisory->id + " (" + score(*advisory) + "): " + subject.label() +
           (subject.where.empty() ? "" : " in " + subject.where) + " is affected";
}

std::vector<Hit> match(const manifest::Advisories& advisories,
                       const std::vector<Subject>& subjects,
                       const std::vector<Acknowledgement>& acknowledged) {
    std::vector<Hit> out;
    for (const auto& a : advisories.advisories) {
        for (const auto& s : subjects) {
            Hit hit;
            bool affected = false;
            for (const auto& r : a.affects) {
                if (!concerns(r, s) || !holds(r, s)) {
                    continue;
                }
                affected = true;
                auto fix = r.fix_for(s.datacenter);
                if (fix && (!hit.fix || before(*hit.fix, *fix))) {
                    hit.fix = fix;
                }
                if (!r.note.empty() &&
                    std::find(hit.notes.begin(), hit.notes.end(), r.note) == hit.notes.end()) {
                    hit.notes.push_back(r.note);
                }
            }
            if (!affected) {
                continue;
            }
            hit.advisory = &a;
            hit.subject = s;
            for (const auto& ack : acknowledged) {
                if (advisories.find(ack.id) == &a) {
                    hit.acknowledged = ack.reason;
                }
            }
            out.push_back(std::move(hit));
        }
    }
    return out;
}

std::vector<std::string> bulletins_not_listing(const manifest::Advisories& advisories,
                                               unsigned branch) {
    // driver bulletins by date; the partial ones (no date) are the newest
    std::vector<const manifest::Advisory*> drivers;
    for (const auto& a : advisories.advisories) {
        if (std::any_of(a.affects.begin(), a.affects.end(), [](const manifest::AffectedRange& r) {
                return r.product == AdvisoryProduct::driver;
            })) {
            drivers.push_back(&a);
        }
    }
    std::stable_sort(drivers.begin(), drivers.end(), [](const auto* x, const auto* y) {
        std::string dx = x->published.empty() ? "9999" : x->published;
        std::string dy = y->published.empty() ? "9999" : y->published;
        return dx < dy;
    });
    std::vector<std::string> out;
    bool listed_once = false;
    for (const auto* a : drivers) {
        bool lists = std::any_of(a->affects.begin(), a->affects.end(), [&](const auto& r) {
            return r.product == AdvisoryProduct::driver && r.branch == branch;
        });
        if (lists) {
            listed_once = true;
            out.clear();
        } else if (listed_once) {
            out.push_back(a->id);
        }
    }
    return out;
}

std::size_t counted(const std::vector<Hit>& hits) {
    return static_cast<std::size_t>(
        std::count_if(hits.begin(), hits.end(), [](const Hit& h) { return h.counts(); }));
}

} // namespace cudaenv::advisory
