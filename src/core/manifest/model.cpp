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

bool CudnnBuild::covers(const Version& want) const {
    if (want.major() != cuda_major) {
        return false;
    }
    auto mm = want.truncated(std::min<std::size_t>(2, want.size()));
    if (cuda_min && Version::compare_numeric(mm, *cuda_min) < 0) {
        return false;
    }
    return !(cuda_max && Version::compare_numeric(mm, *cuda_max) > 0);
}

bool CudnnRelease::build_unknown(std::string_view cuda, std::string_view platform) const {
    if (!known_in_part) {
        return false;
    }
    for (const auto& [label, p] : known_in_part->builds) {
        if (label == cuda && p == platform) {
            return true;
        }
    }
    return false;
}

const CudnnBuild* CudnnRelease::build_for(const Version& cuda) const {
    const CudnnBuild* best = nullptr;
    const CudnnBuild* fallback = nullptr;
    auto newer = [](const CudnnBuild* a, const CudnnBuild* b) {
        return !b || Version::compare_numeric(*Version::try_parse(a->cuda),
                                              *Version::try_parse(b->cuda)) > 0;
    };
    for (const auto& build : builds) {
        if (build.cuda_major != cuda.major() || !Version::try_parse(build.cuda)) {
            continue;
        }
        if (build.covers(cuda)) {
            best = newer(&build, best) ? &build : best;
            continue;
        }
        // Minor-version compatibility (CUDA 11 on): a build for an older minor still loads.
        auto label = *Version::try_parse(build.cuda);
        bool not_later = label.size() < 2 || cuda.size() < 2 ||
                         Version::compare_numeric(label.truncated(2), cuda.truncated(2)) <= 0;
        if (cuda.major() >= 11 && not_later) {
            fallback = newer(&build, fallback) ? &build : fallback;
        }
    }
    return best ? best : fallback;
}

const FrameworkRelease* Framework::find(const Version& v) const {
    for (const auto& r : releases) {
        if (r.series.is_prefix_of(v)) {
            return &r;
        }
    }
    for (const auto& r : releases) { // jax-0.4: the newest 0.4.x
        if (v.is_prefix_of(r.series)) {
            return &r;
        }
    }
    return nullptr;
}

std::string FrameworkVariant::torch_tag(const Version& cuda) {
    return "cu" + std::to_string(cuda.major()) + std::to_string(cuda.size() > 1 ? cuda.minor() : 0);
}

const FrameworkVariant* FrameworkRelease::variant(std::string_view tag) const {
    for (const auto& v : variants) {
        if (v.tag == tag) {
            return &v;
        }
    }
    return nullptr;
}

const FrameworkRule* Framework::rule(std::string_view id) const {
    for (const auto& r : rules) {
        if (r.id == id) {
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

const PinnedIndex* Catalog::pinned_index(std::string_view product, const Version& prefix) const {
    const PinnedIndex* best = nullptr;
    for (const auto& p : pinned_indexes) {
        if (p.product == product && prefix.is_prefix_of(p.version) &&
            (!best || Version::compare_numeric(p.version, best->version) > 0)) {
            best = &p;
        }
    }
    if (!best) {
        return nullptr;
    }
    if (product == "cuda") {
        const auto* full = newest_cuda(prefix);
        return full && Version::compare_numeric(full->version, best->version) >= 0 ? nullptr : best;
    }
    const auto* full = newest_cudnn(prefix);
    return full && Version::compare_numeric(full->version.truncated(3), best->version) >= 0
               ? nullptr
               : best;
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

std::set<std::string> Catalog::profile_wanted(const Profile& profile) const {
    std::set<std::string> wanted;
    std::set<std::string> seen;
    collect(*this, profile, wanted, seen);
    return wanted;
}

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
    for (const auto& name : profile_wanted(profile)) {
        if (release.component(name)) {
            names.push_back(name);
        }
    }
    return names;
}

} // namespace cudaenv::manifest
