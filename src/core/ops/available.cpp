// The availability query (available.hpp).
#include "available.hpp"

#include "core/install/install.hpp"
#include "core/manifest/announced.hpp"

#include <algorithm>

namespace cudaenv::ops {

namespace {

/// `v` falls under the filter: "12" takes 12.x, "2.1" takes 2.1 and 2.1.x but not 2.10.
bool passes(const std::string& filter, const Version& v) {
    if (filter.empty()) {
        return true;
    }
    auto f = Version::try_parse(filter);
    return f && f->is_prefix_of(v);
}

bool cudnn_installable(const manifest::CudnnRelease& r) {
    for (const auto& b : r.builds) {
        for (const auto& [p, a] : b.platforms) {
            if (a.downloadable()) {
                return true;
            }
        }
    }
    return false;
}

/// What is installed, to mark it: CUDA versions, and (CUDA, cuDNN) pairs.
struct Installed {
    std::vector<install::InstalledVersion> versions;

    bool cuda(const Version& v) const {
        return std::any_of(versions.begin(), versions.end(), [&](const auto& i) {
            auto iv = Version::try_parse(i.cuda);
            return iv && v.is_prefix_of(*iv);
        });
    }

    bool pair(const Version& cuda, const Version& cudnn) const {
        return std::any_of(versions.begin(), versions.end(), [&](const auto& i) {
            auto iv = Version::try_parse(i.cuda);
            auto dv = Version::try_parse(i.cudnn);
            return iv && dv && cuda.is_prefix_of(*iv) && cudnn.is_prefix_of(*dv);
        });
    }
};

void list_cuda(const manifest::Catalog& c,
               const std::string& filter,
               const Installed& installed,
               Availability& out) {
    for (auto it = c.cuda.rbegin(); it != c.cuda.rend(); ++it) {
        if (!passes(filter, it->version)) {
            continue;
        }
        bool r = it->source == manifest::CudaSource::redist;
        AvailableCuda a;
        a.version = it->version;
        a.source = r ? AvailableCuda::Source::redist : AvailableCuda::Source::runfile;
        a.installable = r || std::any_of(it->runfiles.begin(), it->runfiles.end(), [](auto& p) {
                            return p.second.downloadable();
                        });
        a.installed = installed.cuda(it->version);
        a.release_date = it->release_date;
        out.cuda.push_back(std::move(a));
    }
    for (auto it = c.pinned_indexes.rbegin(); it != c.pinned_indexes.rend(); ++it) {
        if (it->product == "cuda" && passes(filter, it->version)) {
            AvailableCuda a;
            a.version = it->version;
            a.source = AvailableCuda::Source::index;
            a.installable = true;
            a.installed = installed.cuda(it->version);
            a.index = &*it;
            out.cuda.push_back(std::move(a));
        }
    }
    for (auto it = c.announced.rbegin(); it != c.announced.rend(); ++it) {
        // the catalog's own release of it (a later manifests set) is listed above instead
        if (passes(filter, it->version) && manifest::announced_for(c, it->version) == &*it) {
            AvailableCuda a;
            a.version = it->version;
            a.source = AvailableCuda::Source::announced;
            a.release_date = it->release_date;
            a.announced = &*it;
            out.cuda.push_back(std::move(a));
        }
    }
}

void list_cudnn(const manifest::Catalog& c, const std::string& filter, Availability& out) {
    for (auto it = c.cudnn.rbegin(); it != c.cudnn.rend(); ++it) {
        if (!passes(filter, it->version)) {
            continue;
        }
        AvailableCudnn a;
        a.version = it->version;
        a.major = it->major;
        for (const auto& b : it->builds) {
            a.cuda.push_back(b.cuda);
        }
        a.tarball = it->layout != manifest::CudnnLayout::redist;
        a.installable = cudnn_installable(*it);
        out.cudnn.push_back(std::move(a));
    }
    for (auto it = c.pinned_indexes.rbegin(); it != c.pinned_indexes.rend(); ++it) {
        if (it->product == "cudnn" && passes(filter, it->version)) {
            AvailableCudnn a;
            a.version = it->version;
            a.installable = true;
            a.index = &*it;
            out.cudnn.push_back(std::move(a));
        }
    }
}

AvailableFramework list_framework(const manifest::Catalog& c,
                                  const manifest::Framework& f,
                                  const std::string& filter,
                                  const Installed& installed) {
    auto redist_cuda = [&](const Version& mm) {
        return std::any_of(c.cuda.begin(),
                           c.cuda.end(),
                           [&](const auto& r) {
                               return r.source == manifest::CudaSource::redist &&
                                      mm.is_prefix_of(r.version);
                           }) ||
               std::any_of(c.pinned_indexes.begin(), c.pinned_indexes.end(), [&](const auto& p) {
                   return p.product == "cuda" && mm.is_prefix_of(p.version);
               });
    };
    AvailableFramework out{&f, {}};
    for (const auto& r : f.releases) {
        if (!passes(filter, r.series)) {
            continue;
        }
        // a framework with CUDA builds (PyTorch, JAX): its default build's CUDA is installed
        bool inst = r.variants.empty() ? installed.pair(r.cuda, r.cudnn) : installed.cuda(r.cuda);
        out.rows.push_back({&r, inst, !redist_cuda(r.cuda)});
    }
    return out;
}

} // namespace

Result<Availability> available(Session& session, const AvailableQuery& query) {
    const auto* catalog = CUDAENV_TRY(session.catalog());
    const auto& c = *catalog;
    bool all = query.what.empty();
    if (!query.filter.empty() && !Version::try_parse(query.filter)) {
        return Error(ErrorCode::usage, "'" + query.filter + "' is not a version prefix")
            .with_hint("cudaenv list --available cuda 12");
    }
    Installed installed{install::list_installed(session.root())};
    if (!all && query.what != "cuda" && query.what != "cudnn" && !c.framework(query.what)) {
        return Error(ErrorCode::usage, "unknown kind '" + query.what + "'")
            .with_hint("one of: cuda, cudnn, tensorflow, pytorch, jax");
    }
    Availability out;
    out.has_cuda = all || query.what == "cuda";
    out.has_cudnn = all || query.what == "cudnn";
    if (out.has_cuda) {
        list_cuda(c, query.filter, installed, out);
    }
    if (out.has_cudnn) {
        list_cudnn(c, query.filter, out);
    }
    const manifest::Framework* only = all ? nullptr : c.framework(query.what);
    out.has_frameworks = all || only;
    for (const auto& f : c.frameworks) {
        if (all || only == &f) {
            out.frameworks.push_back(list_framework(c, f, query.filter, installed));
        }
    }
    return out;
}

} // namespace cudaenv::ops
