#include "diff.hpp"

#include "../text.hpp"

#include <map>
#include <set>

namespace cudaenv::channel {

namespace {

std::string opt(const std::optional<Version>& v) {
    return v ? v->str() : "none";
}

std::string sm_text(const std::optional<manifest::SmRange>& sm) {
    return sm ? "sm_" + std::to_string(sm->min) + "-sm_" + std::to_string(sm->max) : "unknown";
}

std::string hashes(const manifest::CudaRelease& r) {
    std::string s;
    for (const auto& c : r.components) {
        for (const auto& [platform, a] : c.platforms) {
            s += a.sha256;
        }
    }
    for (const auto& [p, a] : r.runfiles) {
        s += a.sha256;
    }
    return s;
}

std::string cudnn_builds(const manifest::CudnnRelease& r) {
    std::string s;
    for (const auto& b : r.builds) {
        s += (s.empty() ? "" : ", ") + b.cuda;
    }
    return s;
}

std::string cudnn_hashes(const manifest::CudnnRelease& r) {
    std::string s;
    for (const auto& b : r.builds) {
        for (const auto& [p, a] : b.platforms) {
            s += a.sha256;
        }
    }
    return s;
}

/// Added and removed by key; `changed` says what differs between two present ones ("" if
/// nothing that matters).
template <typename T, typename Key, typename Added, typename Changed>
void diff_by(const std::vector<T>& before,
             const std::vector<T>& after,
             Key key,
             Added added,
             Changed changed,
             std::vector<SetChange>& out) {
    std::map<std::string, const T*> old;
    for (const auto& b : before) {
        old.emplace(key(b), &b);
    }
    std::set<std::string> seen;
    for (const auto& a : after) {
        std::string k = key(a);
        seen.insert(k);
        auto it = old.find(k);
        if (it == old.end()) {
            out.push_back({SetChange::Kind::added, k, added(a)});
        } else if (auto d = changed(*it->second, a); !d.empty()) {
            out.push_back({SetChange::Kind::changed, k, d});
        }
    }
    for (const auto& b : before) {
        if (!seen.count(key(b))) {
            out.push_back({SetChange::Kind::removed, key(b), ""});
        }
    }
}

std::string first_drivers(const manifest::GpuListing& g) {
    std::string s;
    for (const auto& [branch, v] : g.first_per_branch) {
        s += (s.empty() ? "" : ", ") + v.str();
    }
    if (g.off_mainline) {
        s += (s.empty() ? "" : ", ") + g.off_mainline->str();
    }
    return s;
}

} // namespace

const char* SetChange::kind_text() const {
    return kind == Kind::added ? "new" : kind == Kind::removed ? "removed" : "changed";
}

std::vector<SetChange> diff_sets(const manifest::Catalog& before,
                                 const manifest::GpuSupport& before_gpus,
                                 const manifest::Catalog& after,
                                 const manifest::GpuSupport& after_gpus) {
    std::vector<SetChange> out;
    diff_by(
        before.cuda,
        after.cuda,
        [](const auto& r) { return "CUDA " + r.version.str(); },
        [](const auto& r) {
            return "released " + r.release_date + ", driver " + opt(r.driver_min) + " or newer";
        },
        [](const manifest::CudaRelease& b, const manifest::CudaRelease& a) {
            std::vector<std::string> d;
            if (opt(b.driver_min) != opt(a.driver_min)) {
                d.push_back("driver " + opt(a.driver_min) + " or newer (was " + opt(b.driver_min) +
                            ")");
            }
            if (sm_text(b.sm) != sm_text(a.sm)) {
                d.push_back("GPUs " + sm_text(a.sm) + " (was " + sm_text(b.sm) + ")");
            }
            if (opt(b.gcc_max) != opt(a.gcc_max)) {
                d.push_back("gcc up to " + opt(a.gcc_max) + " (was " + opt(b.gcc_max) + ")");
            }
            if (hashes(b) != hashes(a)) {
                d.push_back("its archives' checksums changed");
            }
            return join(d, "; ");
        },
        out);
    diff_by(
        before.cudnn,
        after.cudnn,
        [](const auto& r) { return "cuDNN " + r.version.str(); },
        [](const auto& r) {
            return "released " + r.release_date + ", for CUDA " + cudnn_builds(r);
        },
        [](const manifest::CudnnRelease& b, const manifest::CudnnRelease& a) {
            std::vector<std::string> d;
            if (cudnn_builds(b) != cudnn_builds(a)) {
                d.push_back("for CUDA " + cudnn_builds(a) + " (was " + cudnn_builds(b) + ")");
            }
            if (cudnn_hashes(b) != cudnn_hashes(a)) {
                d.push_back("its archives' checksums changed");
            }
            return join(d, "; ");
        },
        out);

    struct Row {
        std::string name;
        const manifest::FrameworkRelease* r;
    };

    auto rows = [](const manifest::Catalog& c) {
        std::vector<Row> v;
        for (const auto& f : c.frameworks) {
            for (const auto& r : f.releases) {
                v.push_back({f.name + " " + r.series.str(), &r});
            }
        }
        return v;
    };
    auto pair = [](const manifest::FrameworkRelease& r) {
        return "CUDA " + r.cuda.str() + " + cuDNN " + r.cudnn.str();
    };
    diff_by(
        rows(before),
        rows(after),
        [](const Row& r) { return r.name; },
        [&](const Row& r) { return pair(*r.r); },
        [&](const Row& b, const Row& a) {
            return pair(*b.r) == pair(*a.r) ? std::string()
                                            : pair(*a.r) + " (was " + pair(*b.r) + ")";
        },
        out);
    auto gpu_key = [](const manifest::GpuListing& g) {
        return "GPU " + g.device + (g.subsystem.empty() ? "" : " " + g.subsystem) + " (" + g.name +
               ")";
    };
    diff_by(
        before_gpus.listings,
        after_gpus.listings,
        gpu_key,
        [](const manifest::GpuListing& g) { return "first driver " + first_drivers(g); },
        [](const manifest::GpuListing& b, const manifest::GpuListing& a) {
            return first_drivers(b) == first_drivers(a)
                       ? std::string()
                       : "first driver " + first_drivers(a) + " (was " + first_drivers(b) + ")";
        },
        out);
    return out;
}

} // namespace cudaenv::channel
