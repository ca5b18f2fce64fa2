#include "model.hpp"

#include <algorithm>
#include <set>

namespace cudaenv::manifest {

const Component* CudaRelease::component(std::string_view name) const {
    auto it = std::lower_bound(components.begin(),
                               components.end(),
                               name,
                               [](const Component& c, std::string_view n) { return c.name < n; });
    if (it != components.end() && it->name == name) {
        return &*it;
    }
    return nullptr;
}

const CudnnBuild* CudnnRelease::build_for(const Version& cuda) const {
    const CudnnBuild* best = nullptr;
    Version best_label;
    for (const auto& build : builds) {
        if (build.cuda_major != cuda.major()) {
            continue;
        }
        auto label = Version::try_parse(build.cuda);
        if (!label) {
            continue;
        }
        // A build labelled "11" serves every 11.x; one labelled "11.2" serves 11.2 and later
        // 11.x (cuDNN minor releases are backward compatible within a CUDA major), but a
        // build for a newer minor than the toolkit's is not picked.
        if (label->size() >= 2 && cuda.size() >= 2 &&
            Version::compare_numeric(label->truncated(2), cuda.truncated(2)) > 0) {
            continue;
        }
        if (!best || Version::compare_numeric(*label, best_label) > 0) {
            best = &build;
            best_label = *label;
        }
    }
    return best;
}

const FrameworkRelease* Framework::find(const Version& v) const {
    for (const auto& r : releases) {
        if (r.series.is_prefix_of(v)) {
            return &r;
        }
    }
    return nullptr;
}

const CudaRelease* Catalog::find_cuda(const Version& exact) const {
    for (const auto& r : cuda) {
        if (r.version == exact) {
            return &r;
        }
    }
    return nullptr;
}

const CudaRelease* Catalog::newest_cuda(const Version& prefix) const {
    for (auto it = cuda.rbegin(); it != cuda.rend(); ++it) {
        if (prefix.is_prefix_of(it->version)) {
            return &*it;
        }
    }
    return nullptr;
}

const CudnnRelease* Catalog::newest_cudnn(const Version& prefix,
                                          const std::optional<Version>& for_cuda) const {
    for (auto it = cudnn.rbegin(); it != cudnn.rend(); ++it) {
        if (!prefix.is_prefix_of(it->version)) {
            continue;
        }
        if (for_cuda && !it->build_for(*for_cuda)) {
            continue;
        }
        return &*it;
    }
    return nullptr;
}

const Framework* Catalog::framework(std::string_view name) const {
    for (const auto& f : frameworks) {
        if (f.name == name) {
            return &f;
        }
        for (const auto& a : f.aliases) {
            if (a == name) {
                return &f;
            }
        }
    }
    return nullptr;
}

const Profile* Catalog::profile(std::string_view name) const {
    for (const auto& p : profiles) {
        if (p.name == name) {
            return &p;
        }
    }
    return nullptr;
}

namespace {

void collect(const Catalog& catalog,
             const Profile& profile,
             std::set<std::string>& out,
             std::set<std::string>& seen) {
    if (!seen.insert(profile.name).second) {
        return; // include cycles are refused by the loader; this is only a guard
    }
    for (const auto& inc : profile.includes) {
        if (const auto* p = catalog.profile(inc)) {
            collect(catalog, *p, out, seen);
        }
    }
    out.insert(profile.components.begin(), profile.components.end());
}

} // namespace

std::vector<std::string> Catalog::profile_components(const Profile& profile,
                                                     const CudaRelease& release) const {
    std::vector<std::string> names;
    if (profile.all) {
        for (const auto& c : release.components) {
            if (std::find(profile.exclude.begin(), profile.exclude.end(), c.name) ==
                profile.exclude.end()) {
                names.push_back(c.name);
            }
        }
        return names;
    }
    std::set<std::string> wanted;
    std::set<std::string> seen;
    collect(*this, profile, wanted, seen);
    for (const auto& name : wanted) {
        if (release.component(name)) {
            names.push_back(name);
        }
    }
    return names;
}

} // namespace cudaenv::manifest
