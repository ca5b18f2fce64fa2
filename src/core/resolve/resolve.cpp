#include "resolve.hpp"

#include "../manifest/announced.hpp"
#include "../manifest/cublas_patches.hpp"
#include "../manifest/driver_indexes.hpp"
#include "../suggest.hpp"

#include <algorithm>
#include <utility>

namespace cudaenv {

using namespace manifest;

bool has_platform(const CudaRelease& r, std::string_view platform) {
    switch (r.source) {
    case CudaSource::index:
        return true;
    case CudaSource::runfile:
        return r.runfiles.find(platform) != r.runfiles.end();
    case CudaSource::redist:
        break;
    }
    return std::any_of(r.components.begin(), r.components.end(), [&](const Component& c) {
        return c.platforms.find(std::string(platform)) != c.platforms.end();
    });
}

std::string releases_with_platform(const Catalog& c, std::string_view platform) {
    // the catalog's major.minor lines in order, each with whether the platform has one
    std::vector<std::pair<Version, bool>> lines;
    for (const auto& r : c.cuda) {
        if (r.source == CudaSource::index) {
            continue;
        }
        Version mm = r.version.truncated(2);
        bool has = has_platform(r, platform);
        if (!lines.empty() && lines.back().first == mm) {
            lines.back().second = lines.back().second || has;
        } else {
            lines.emplace_back(mm, has);
        }
    }
    std::string out;
    for (std::size_t i = 0; i < lines.size();) {
        if (!lines[i].second) {
            ++i;
            continue;
        }
        std::size_t j = i;
        while (j + 1 < lines.size() && lines[j + 1].second &&
               lines[j + 1].first.major() == lines[i].first.major()) {
            ++j;
        }
        out += (out.empty() ? "" : ", ") + lines[i].first.str() +
               (j > i ? "-" + lines[j].first.str() : std::string());
        i = j + 1;
    }
    return out;
}

std::string pin_not_met_text(const PinNotMet& pin) {
    std::string what = pin.what == "cudnn" ? "cuDNN " : "CUDA ";
    return "the framework pins " + what + pin.pinned +
           (pin.pin.empty() ? "" : " (" + pin.pin + ")") + ", which " + pin.why + ": " + what +
           pin.used + " is used instead";
}

std::string Resolution::version_name() const {
    if (!cuda) {
        return {};
    }
    std::string name = cuda->version.str();
    if (cudnn) {
        name += "+cudnn" + cudnn->version.str();
    }
    return name;
}

namespace {

/// "did you mean" among version strings: the closest by text, else the newest few.
std::string version_hint(const std::string& asked, const std::vector<std::string>& known) {
    if (auto m = closest_match(asked, known)) {
        return "did you mean '" + *m + "'?";
    }
    std::string recent;
    for (std::size_t i = 0; i < known.size() && i < 5; ++i) {
        recent += (i ? ", " : "") + known[known.size() - 1 - i];
    }
    return "known: " + recent + ", ... (cudaenv list --available)";
}

Error cuda_not_found(const Catalog& c, const Version& v) {
    if (const auto* a = manifest::announced_for(c, v)) {
        // NVIDIA published it, the manifests do not know its index: not known, not absent
        return manifest::announced_error(c, *a);
    }
    std::vector<std::string> known;
    for (const auto& r : c.cuda) {
        known.push_back(r.version.str());
    }
    return Error(ErrorCode::not_found, "no CUDA release matches '" + v.str() + "'")
        .with_hint(version_hint(v.str(), known));
}

Error cudnn_not_found(const Catalog& c, const Version& v) {
    std::vector<std::string> known;
    for (const auto& r : c.cudnn) {
        known.push_back(r.version.str());
    }
    return Error(ErrorCode::not_found, "no cuDNN release matches '" + v.str() + "'")
        .with_hint(version_hint(v.str(), known));
}

bool rule_allows(CompatRule rule, const Version& built, const Version& used) {
    if (built.major() != used.major()) {
        return false;
    }
    if (built.size() < 2 || used.size() < 2) {
        return true;
    }
    if (rule == CompatRule::exact) {
        return built.minor() == used.minor();
    }
    return used.minor() >= built.minor();
}

/// Sonames NVIDIA changed inside a CUDA major, which minor-version compatibility does not
/// bridge: a program built against the older one cannot load the newer release's library.
struct SonameBreak {
    unsigned major, minor; ///< the first release with the new soname
    const char* text;
};

// CUDA 11.1 release notes (cuSOLVER): libcusolver.so.10 (11.0) became libcusolver.so.11.
constexpr SonameBreak k_soname_breaks[] = {
    {11, 1, "it needs libcusolver.so.10, which CUDA 11.1 and later replace with libcusolver.so.11"},
};

std::optional<std::string> soname_break(const Version& built, const Version& used) {
    if (built.major() != used.major() || built.size() < 2 || used.size() < 2) {
        return std::nullopt;
    }
    for (const auto& b : k_soname_breaks) {
        if (b.major == built.major() && built.minor() < b.minor && used.minor() >= b.minor) {
            return std::string(b.text);
        }
    }
    return std::nullopt;
}

std::string rule_text(CompatRule rule, const Version& built) {
    if (rule == CompatRule::exact) {
        return built.truncated(2).str() + " exactly";
    }
    return built.truncated(1).str() + ".x with x >= " + std::to_string(built.minor());
}

/// The error for a cuDNN release that has no build for a CUDA: the builds it has, and the
/// nearest cuDNN that does have one.
Error cudnn_incompatible(const Catalog& c, const CudnnRelease& dnn, const CudaRelease& cuda) {
    std::string builds;
    for (const auto& b : dnn.builds) {
        std::string range;
        if (b.cuda_min && b.cuda_max) {
            range = *b.cuda_min == *b.cuda_max ? b.cuda_min->str()
                                               : b.cuda_min->str() + "-" + b.cuda_max->str();
        }
        builds += (builds.empty() ? "" : ", ") + b.cuda +
                  (range.empty() || range == b.cuda ? "" : " (" + range + ")");
    }
    auto err = Error(ErrorCode::incompatible,
                     "cuDNN " + dnn.version.str() + " is built for CUDA " + builds +
                         ", not for CUDA " + cuda.version.str());
    // Suggest the newest cuDNN of the same series with a build for this CUDA, else of the same
    // major, else the newest.
    const CudnnRelease* alt = c.newest_cudnn(dnn.version.truncated(2), cuda.version);
    if (!alt) {
        alt = c.newest_cudnn(dnn.version.truncated(1), cuda.version);
    }
    if (alt) {
        err = std::move(err).with_hint("cuDNN " + alt->version.str() + " has a build for CUDA " +
                                       std::to_string(cuda.version.major()) + ": cudaenv resolve " +
                                       cuda.version.str() + "+cudnn-" + alt->version.str());
    } else if (const auto* any = c.newest_cudnn(Version(), cuda.version)) {
        err = std::move(err).with_hint("the newest cuDNN for CUDA " +
                                       std::to_string(cuda.version.major()) + " is " +
                                       any->version.str() + ": cudaenv resolve " +
                                       cuda.version.str() + "+cudnn-" + any->version.str());
    }
    return err;
}

/// What a platform is, for a refusal: Jetson's own builds name their JetPack.
std::string platform_text(std::string_view platform) {
    if (platform == "linux-aarch64") {
        return "linux-aarch64 (NVIDIA's Jetson builds, JetPack 5 and 6)";
    }
    return std::string(platform);
}

/// The newest release the SPEC allows whose platform (opt.platform_for) has archives; else the
/// newest it allows (refused by take_platform, naming what exists).
const CudaRelease*
newest_cuda_for(const Catalog& c, const Version& want, const ResolveOptions& opt) {
    if (opt.platform_for) {
        for (auto it = c.cuda.rbegin(); it != c.cuda.rend(); ++it) {
            if (!want.is_prefix_of(it->version)) {
                continue;
            }
            auto choice = opt.platform_for(it->version);
            if (!choice.platform.empty() && has_platform(*it, choice.platform)) {
                return &*it;
            }
        }
    }
    return c.newest_cuda(want);
}

/// The release of the same major nearest `v` (the next newer first) that has `platform`.
const CudaRelease* nearest_with(const Catalog& c, const Version& v, std::string_view platform) {
    const CudaRelease* below = nullptr;
    for (const auto& r : c.cuda) {
        if (r.version.major() != v.major() || r.source == CudaSource::index ||
            !has_platform(r, platform)) {
            continue;
        }
        if (r.version > v) {
            return &r;
        }
        below = &r;
    }
    return below;
}

/// The platform for the chosen release, or the refusal that names it and what exists instead.
Status take_platform(const Catalog& c, Resolution& res, const ResolveOptions& opt) {
    const auto& cuda = *res.cuda;
    if (opt.platform_for) {
        auto choice = opt.platform_for(cuda.version);
        if (choice.platform.empty()) {
            return Error(ErrorCode::incompatible, choice.refusal)
                .with_hint("to provision another machine, name its platform: --platform " +
                           platform_list() + " (or CUDAENV_PLATFORM)");
        }
        res.platform = choice.platform;
        res.platform_compat = choice.compat_component;
    }
    if (has_platform(cuda, res.platform)) {
        return Ok{};
    }
    std::string have = releases_with_platform(c, res.platform);
    auto err = Error(
        ErrorCode::incompatible,
        "CUDA " + cuda.version.str() + " has no " + platform_text(res.platform) + " archives; " +
            (have.empty() ? "the manifests know no CUDA release for " + res.platform
                          : "NVIDIA publishes " + res.platform + " archives for CUDA " + have));
    if (const auto* alt = nearest_with(c, cuda.version, res.platform)) {
        std::string mm = alt->version.truncated(2).str();
        err = std::move(err).with_hint(
            res.framework ? "try a CUDA " + mm + " the framework's rules allow: cudaenv resolve " +
                                res.spec + " --cuda " + mm
                          : "cudaenv resolve " + mm);
    }
    if (res.platform == "linux-aarch64") {
        err = std::move(err).with_hint("CUDA 13 reaches Jetson as linux-sbsa: Thor from 13.0 "
                                       "(JetPack 7), Orin from 13.2 with cuda_compat_orin "
                                       "(JetPack 7.2)");
    }
    return err;
}

/// The newest cuDNN under `prefix` with a build for `cuda` that has `platform`; else the newest
/// with any build for it (refused by check_cudnn_platform, naming what exists).
const CudnnRelease* newest_cudnn_on(const Catalog& c,
                                    const Version& prefix,
                                    const Version& cuda,
                                    std::string_view platform) {
    for (auto it = c.cudnn.rbegin(); it != c.cudnn.rend(); ++it) {
        if (!prefix.is_prefix_of(it->version)) {
            continue;
        }
        const auto* b = it->build_for(cuda);
        if (b && b->platforms.find(std::string(platform)) != b->platforms.end()) {
            return &*it;
        }
    }
    return c.newest_cudnn(prefix, cuda);
}

/// "cuDNN 9.24.0.43 for CUDA 13 on linux-sbsa is not known: ..." -- a build a release known in
/// part (CudnnRelease::known_in_part) leaves unknown, which NVIDIA may well ship.
std::string unknown_build_text(const CudnnRelease& r, const std::string& cuda, std::string_view p) {
    return "cuDNN " + r.version.str() + " for CUDA " + cuda + " on " + std::string(p) +
           " is not known: the manifests have only the opening of NVIDIA's index " +
           r.known_in_part->index + ", which does not show it";
}

/// The newest cuDNN of the same major whose build for the CUDA is known for the platform.
std::string known_in_part_hint(const Catalog& c, const Resolution& res) {
    for (auto it = c.cudnn.rbegin(); it != c.cudnn.rend(); ++it) {
        const auto* b = it->version.major() == res.cudnn->version.major()
                            ? it->build_for(res.cuda->version)
                            : nullptr;
        if (b && b->platforms.count(res.platform)) {
            return "the newest cuDNN " + std::to_string(res.cudnn->version.major()) +
                   " known for it: cudaenv resolve " + res.cuda->version.str() + "+cudnn-" +
                   it->version.str();
        }
    }
    return "no cuDNN the manifests know has a " + res.platform + " build for CUDA " +
           res.cuda->version.truncated(2).str();
}

bool has_build_on(const CudnnRelease* r, const Version& cuda, std::string_view platform) {
    const auto* b = r ? r->build_for(cuda) : nullptr;
    return b && b->platforms.count(platform);
}

/// The newest cuDNN under `prefix` whose build for `cuda` has an archive for `platform`.
const CudnnRelease* known_cudnn_on(const Catalog& c,
                                   const Version& prefix,
                                   const Version& cuda,
                                   std::string_view platform) {
    for (auto it = c.cudnn.rbegin(); it != c.cudnn.rend(); ++it) {
        if (prefix.is_prefix_of(it->version) && has_build_on(&*it, cuda, platform)) {
            return &*it;
        }
    }
    return nullptr;
}

/// Why a framework's exact cuDNN pin cannot be met for this CUDA and platform.
std::string pin_unmet_reason(const Catalog& c,
                             const Version& pinned,
                             const CudaRelease& cuda,
                             const std::string& platform) {
    const CudnnRelease* r = c.newest_cudnn(pinned);
    if (!r) {
        return "is not in the manifests";
    }
    const auto* b = r->build_for(cuda.version);
    if (!b) {
        return "has no build for CUDA " + cuda.version.truncated(2).str();
    }
    if (r->build_unknown(b->cuda, platform)) {
        return "is not known for " + platform +
               " (the manifests have only the opening of "
               "NVIDIA's index " +
               r->known_in_part->index + ", which does not show that build)";
    }
    return "has no " + platform + " build for CUDA " + b->cuda;
}

/// A cuDNN whose build for the CUDA has no archive for the platform: refused, naming the
/// cuDNN releases that have one.
Status check_cudnn_platform(const Catalog& c, const Resolution& res) {
    const auto& b = *res.cudnn_build;
    if (b.platforms.count(res.platform)) {
        return Ok{};
    }
    if (res.cudnn->build_unknown(b.cuda, res.platform)) {
        return Error(ErrorCode::not_found, unknown_build_text(*res.cudnn, b.cuda, res.platform))
            .with_hint(known_in_part_hint(c, res));
    }
    std::vector<std::string> have;
    const CudnnRelease* alt = nullptr; // the newest of the same series, else major, else any
    auto rank = [&](const CudnnRelease& r) {
        return r.version.truncated(2) == res.cudnn->version.truncated(2) ? 2
               : r.version.major() == res.cudnn->version.major()         ? 1
                                                                         : 0;
    };
    for (const auto& r : c.cudnn) {
        const auto* rb = r.build_for(res.cuda->version);
        if (rb && rb->platforms.count(res.platform)) {
            have.push_back(r.version.str());
            if (!alt || rank(r) >= rank(*alt)) {
                alt = &r;
            }
        }
    }
    std::string list;
    for (const auto& h : have) {
        list += (list.empty() ? "" : ", ") + h;
    }
    auto err = Error(
        ErrorCode::incompatible,
        "cuDNN " + res.cudnn->version.str() + " has no " + platform_text(res.platform) +
            " build for CUDA " + res.cuda->version.truncated(2).str() + "; " +
            (have.empty() ? "no cuDNN the manifests know has one" : "these have: cuDNN " + list));
    if (alt) {
        err = std::move(err).with_hint("cudaenv resolve " + res.cuda->version.str() + "+cudnn-" +
                                       alt->version.str());
    }
    return err;
}

/// What to do about an artifact NVIDIA serves only behind a login.
constexpr const char* k_give_it =
    ": download it from NVIDIA (a login is needed) and give it with install --archive FILE";

void add_archives(const Catalog& c, Resolution& res, const ResolveOptions& opt) {
    const auto& cuda = *res.cuda;
    if (cuda.source == CudaSource::runfile) {
        auto it = cuda.runfiles.find(res.platform);
        const Profile* profile = c.profile(res.profile);
        if (it == cuda.runfiles.end()) {
            res.not_installable.push_back("CUDA " + cuda.version.str() + " has no " + res.platform +
                                          " runfile installer");
        } else if (!it->second.downloadable() && !opt.local_archives.count(it->second.sha256)) {
            res.not_installable.push_back("no download URL is known for the CUDA " +
                                          cuda.version.str() + " runfile (" + res.platform +
                                          "); only its sha256 is" + k_give_it);
        } else {
            RunfileSelection sel;
            sel.profile = res.profile;
            sel.all = profile->all;
            sel.exclude = profile->exclude;
            if (!profile->all) {
                auto wanted = c.profile_wanted(*profile);
                sel.components.assign(wanted.begin(), wanted.end());
            }
            res.archives.push_back({"cuda", cuda.version, it->second, std::move(sel)});
        }
    } else {
        const Profile* profile = c.profile(res.profile);
        for (const auto& name : c.profile_components(*profile, cuda)) {
            const Component* comp = cuda.component(name);
            auto it = comp->platforms.find(res.platform);
            if (it == comp->platforms.end()) {
                res.notes.push_back(name + " has no " + res.platform + " archive in CUDA " +
                                    cuda.version.str() + "; skipped");
                continue;
            }
            res.archives.push_back({name, comp->version, it->second, std::nullopt});
        }
    }
    if (!res.platform_compat.empty() && cuda.source == CudaSource::redist) {
        const Component* comp = cuda.component(res.platform_compat);
        const Artifact* a = nullptr;
        if (comp) {
            auto it = comp->platforms.find(res.platform);
            a = it == comp->platforms.end() ? nullptr : &it->second;
        }
        if (!a) {
            res.not_installable.push_back("CUDA " + cuda.version.str() + " has no " +
                                          res.platform_compat + " for " + res.platform +
                                          ", which this machine needs to run it");
        } else {
            res.archives.push_back({res.platform_compat, comp->version, *a, std::nullopt});
        }
    }
    if (res.cudnn && res.cudnn_build) {
        auto it = res.cudnn_build->platforms.find(res.platform);
        if (it == res.cudnn_build->platforms.end()) {
            res.not_installable.push_back("cuDNN " + res.cudnn->version.str() + " for CUDA " +
                                          res.cudnn_build->cuda + " has no " + res.platform +
                                          " archive");
        } else if (!it->second.downloadable() && !opt.local_archives.count(it->second.sha256)) {
            res.not_installable.push_back(
                "no download URL is known for cuDNN " + res.cudnn->version.str() + " for CUDA " +
                res.cudnn_build->cuda + " (" + res.platform + "); only its sha256 is" + k_give_it);
        } else {
            res.archives.push_back({"cudnn", res.cudnn->version, it->second, std::nullopt});
            // what NVIDIA ships beside it for this build (cudnn_jit from 9.20) comes along
            for (const auto& [name, platforms] : res.cudnn_build->extras) {
                if (auto e = platforms.find(res.platform); e != platforms.end()) {
                    res.archives.push_back({name, res.cudnn->version, e->second, std::nullopt});
                }
            }
            if (const auto& part = res.cudnn->known_in_part) {
                std::string names;
                for (const auto& n : part->components) {
                    if (n != "cudnn_samples") { // sources, never installed
                        names += (names.empty() ? "" : ", ") + n;
                    }
                }
                res.notes.push_back("cuDNN " + res.cudnn->version.str() +
                                    " is known from the opening of NVIDIA's index " + part->index +
                                    " alone: its archive's sha256 and size are NVIDIA's" +
                                    (names.empty()
                                         ? std::string()
                                         : "; what else the index lists (" + names +
                                               ") is not known, so it is installed without them"));
            }
        }
    }
    for (const auto& a : res.archives) {
        res.total_size += a.artifact.size.value_or(0);
        res.unknown_sizes += a.artifact.size ? 0u : 1u;
    }
}

/// --compat: the release's cuda_compat archive for the platform -- from its own index, or from
/// CUDA 13.4 from the newest per-driver index the manifests know for its minor
/// (driver-indexes.json). A release that has none (a runfile, an index without it) is
/// not_found, naming the releases that have one; from 13.4, with no driver index known for it,
/// not known.
Status add_compat(const Catalog& c, Resolution& res) {
    const auto& cuda = *res.cuda;
    if (cuda.source == CudaSource::index) {
        res.notes.push_back("whether CUDA " + cuda.version.str() +
                            "'s index has cuda_compat is known once install fetches it");
        return Ok{};
    }
    const Component* comp = cuda.component("cuda_compat");
    const Artifact* artifact = nullptr;
    if (comp) {
        auto it = comp->platforms.find(res.platform);
        artifact = it == comp->platforms.end() ? nullptr : &it->second;
    }
    if (artifact) {
        res.compat = true;
        res.archives.push_back({"cuda_compat", comp->version, *artifact, std::nullopt});
        res.total_size += artifact->size.value_or(0);
        res.unknown_sizes += artifact->size ? 0u : 1u;
        return Ok{};
    }
    std::string line = cuda.version.truncated(2).str();
    if (const auto* d = manifest::driver_compat_for(c.driver_indexes, cuda, res.platform)) {
        // from 13.4 NVIDIA ships cuda_compat with the driver: the driver's version is the
        // compat libraries' version, as the CUDA index's cuda_compat component had it
        const Artifact& a = d->compat.find(res.platform)->second;
        res.compat = true;
        res.archives.push_back({"cuda_compat", d->driver, a, std::nullopt});
        res.total_size += a.size.value_or(0);
        res.unknown_sizes += a.size ? 0u : 1u;
        res.notes.push_back("cuda_compat for CUDA " + line + " comes from driver " +
                            d->driver.str() + "'s index (" + d->index +
                            "): from CUDA 13.4 NVIDIA ships it with the driver; its archive's "
                            "sha256 and size are NVIDIA's, as that index lists them");
        return Ok{};
    }
    if (cuda.source == CudaSource::redist && !comp &&
        Version::compare_numeric(cuda.version, manifest::compat_per_driver_from()) >= 0) {
        // from 13.4 NVIDIA ships cuda_compat with the driver, in a per-driver index: not known
        // here, which is not the same as not shipped
        auto others = manifest::driver_compat_any(c.driver_indexes, cuda);
        std::string why = "the manifests know none that carries cuda_compat for CUDA " + line;
        if (!others.empty()) {
            std::string platforms;
            for (const auto& [p, a] : others.back()->compat) {
                platforms += (platforms.empty() ? "" : ", ") + p;
            }
            why = "the manifests know driver " + others.back()->driver.str() +
                  "'s, whose cuda_compat for CUDA " + line + " is known for " + platforms +
                  " only, not " + res.platform;
        }
        return Error(ErrorCode::not_found,
                     "the forward-compatibility libraries (cuda_compat) for CUDA " + line +
                         " are not known: from CUDA 13.4 NVIDIA ships them in a per-driver index "
                         "(nvidia-driver/redist/redistrib_<driver>.json), and " +
                         why)
            .with_hint("NVIDIA's package repositories have cuda-compat-" +
                       std::to_string(cuda.version.major()) + "-" +
                       std::to_string(cuda.version.minor()));
    }
    std::vector<std::string> have;
    for (const auto& r : c.cuda) {
        const Component* rc = r.component("cuda_compat");
        if (rc && rc->platforms.count(res.platform)) {
            have.push_back(r.version.str());
        }
    }
    auto err = Error(ErrorCode::not_found,
                     "CUDA " + cuda.version.str() + " has no forward-compatibility libraries " +
                         "(cuda_compat) for " + res.platform +
                         (cuda.source == CudaSource::runfile
                              ? ": it comes as a runfile installer, and NVIDIA ships cuda_compat "
                                "in its redistrib indexes only"
                              : " in NVIDIA's index"));
    if (have.empty()) {
        return std::move(err).with_hint("no release the manifests know has cuda_compat for " +
                                        res.platform);
    }
    return std::move(err).with_hint(
        "NVIDIA's indexes have cuda_compat for " + res.platform + " in CUDA " + have.front() +
        (have.size() > 1 ? " to " + have.back() : "") + "; for CUDA " +
        cuda.version.truncated(2).str() + " NVIDIA's package repositories have cuda-compat-" +
        std::to_string(cuda.version.major()) + "-" + std::to_string(cuda.version.minor()));
}

} // namespace

const FrameworkVariant* best_variant(const FrameworkRelease& rel, const Version& cuda) {
    // the same major.minor; else the newest build for an older minor (minor-version
    // compatibility runs an older build on a newer CUDA); else the oldest of the major
    const FrameworkVariant* below = nullptr;
    const FrameworkVariant* above = nullptr;
    for (const auto& v : rel.variants) {
        if (v.cuda.major() != cuda.major()) {
            continue;
        }
        if (v.cuda_floor) {
            return &v; // JAX: one build per major
        }
        bool older = cuda.size() < 2 || v.cuda.minor() < cuda.minor(); // a major alone: any
        if (cuda.size() >= 2 && v.cuda.minor() == cuda.minor()) {
            return &v;
        }
        if (older && (!below || v.cuda > below->cuda)) {
            below = &v;
        } else if (!older && (!above || v.cuda < above->cuda)) {
            above = &v;
        }
    }
    return below ? below : above;
}

namespace {

std::string variants_text(const FrameworkRelease& rel) {
    std::string out;
    for (const auto& v : rel.variants) {
        out += (out.empty() ? "" : ", ") + v.tag + " (CUDA " + v.cuda.str() +
               (v.cuda_floor ? "+" : "") + ")";
    }
    return out;
}

/// "cudnn-floor: <text> [source]" for an error's hint.
std::string rule_hint(const Framework& fw, std::string_view id) {
    const auto* r = fw.rule(id);
    return r ? "rule " + r->id + ": " + r->source : std::string();
}

Error variant_error(const Framework& fw,
                    std::string_view rule,
                    const std::string& message,
                    const std::string& hint) {
    auto e = Error(ErrorCode::incompatible, message).with_hint(hint);
    if (auto h = rule_hint(fw, rule); !h.empty()) {
        e = std::move(e).with_hint(h);
    }
    return e;
}

} // namespace

Status check_variant_compat(const Framework& fw,
                            const FrameworkRelease& rel,
                            const FrameworkVariant* var,
                            const Version& cuda,
                            const std::optional<Version>& cudnn,
                            std::vector<std::string>* notes) {
    std::string name = fw.name + " " + rel.series.str();
    if (!var) {
        var = best_variant(rel, cuda);
    }
    if (!var || var->cuda.major() != cuda.major()) {
        std::string has = var ? var->tag + " is built for CUDA " + var->cuda.str()
                              : "it has CUDA builds " + variants_text(rel);
        const auto* d = rel.default_one();
        return variant_error(
            fw,
            "cuda-major",
            name + ": " + has + "; CUDA " + cuda.str() + " is incompatible (another major: " +
                (fw.rule("cuda-major") ? fw.rule("cuda-major")->text : "no build for it") + ")",
            d ? "use a CUDA it was built for: cudaenv resolve " + fw.name + "-" + rel.series.str() +
                    "+" + d->tag
              : "cudaenv resolve " + fw.name + "-" + rel.series.str());
    }
    std::string build = name + "+" + var->tag;
    if (var->cuda_floor) {
        if (var->cuda.size() >= 2 && cuda.size() >= 2 &&
            Version::compare_numeric(cuda.truncated(2), var->cuda) < 0) {
            return variant_error(
                fw,
                "cuda-floor",
                build + " needs CUDA " + var->cuda.str() + " or later of its major; CUDA " +
                    cuda.str() + " is incompatible (older than its floor)",
                "cudaenv resolve " + fw.name + "-" + rel.series.str() + "+" + var->tag);
        }
    } else if (cuda.size() >= 2 && cuda.minor() != var->cuda.minor() && notes) {
        notes->push_back("CUDA " + cuda.str() + " is not " + build + "'s CUDA " + var->cuda.str() +
                         ": NVIDIA's minor-version compatibility carries it (an extension "
                         "built with its nvcc gets a warning, not an error)");
    }
    if (cudnn && cudnn->size() > 0) {
        if (!var->cudnn) {
            if (notes) {
                notes->push_back("the manifests know no cuDNN for " + build + ": cuDNN " +
                                 cudnn->str() + " is not judged");
            }
        } else if (var->cuda_floor) {
            bool low = Version::compare_numeric(*cudnn, *var->cudnn) < 0;
            bool high =
                var->cudnn_below && Version::compare_numeric(*cudnn, *var->cudnn_below) >= 0;
            if (low || high) {
                return variant_error(
                    fw,
                    "cudnn-floor",
                    build + " needs cuDNN >= " + var->cudnn->str() +
                        (var->cudnn_below ? " and < " + var->cudnn_below->str() : "") + "; cuDNN " +
                        cudnn->str() + " is incompatible (" +
                        (low ? "below its floor" : "at or above its cap") + ")",
                    "cudaenv resolve " + fw.name + "-" + rel.series.str() + "+" + var->tag);
            }
        } else if (!rule_allows(CompatRule::same_major_min_minor, *var->cudnn, *cudnn)) {
            return variant_error(fw,
                                 "cudnn-min-minor",
                                 build + " was built with cuDNN " + var->cudnn->str() + "; cuDNN " +
                                     cudnn->str() + " is incompatible (it needs cuDNN " +
                                     rule_text(CompatRule::same_major_min_minor, *var->cudnn) + ")",
                                 "cudaenv resolve " + fw.name + "-" + rel.series.str() + "+" +
                                     var->tag);
        }
    }
    return Ok{};
}

Status check_framework_compat(const Framework& fw,
                              const FrameworkRelease& rel,
                              const Version& cuda,
                              const std::optional<Version>& cudnn,
                              std::vector<std::string>* notes) {
    if (!rel.variants.empty()) {
        return check_variant_compat(fw, rel, nullptr, cuda, cudnn, notes);
    }
    auto tested = "CUDA " + rel.cuda.str() + " + cuDNN " + rel.cudnn.str();
    auto hint = "use the tested pair: cudaenv resolve " + fw.name + "-" + rel.series.str() + " (" +
                tested + ")";
    // Minor-version compatibility starts with CUDA 11: before it every library's soname
    // carries the minor (libcudart.so.10.1), so a build for 10.1 loads nothing from 10.2.
    CompatRule cuda_rule = rel.cuda.major() < 11 ? CompatRule::exact : fw.cuda_rule;
    std::string why = rel.cuda.major() < 11 && cuda_rule != fw.cuda_rule
                          ? "; before CUDA 11 the library sonames carry the minor"
                          : "";
    if (!rule_allows(cuda_rule, rel.cuda, cuda)) {
        return Error(ErrorCode::incompatible,
                     fw.name + " " + rel.series.str() + " was built with " + tested + "; CUDA " +
                         cuda.str() + " is incompatible (it needs CUDA " +
                         rule_text(cuda_rule, rel.cuda) + why + ")")
            .with_hint(hint);
    }
    if (auto brk = soname_break(rel.cuda, cuda)) {
        return Error(ErrorCode::incompatible,
                     fw.name + " " + rel.series.str() + " was built with " + tested + "; CUDA " +
                         cuda.str() + " is incompatible: " + *brk)
            .with_hint(hint);
    }
    if (cudnn && !rule_allows(fw.cudnn_rule, rel.cudnn, *cudnn)) {
        return Error(ErrorCode::incompatible,
                     fw.name + " " + rel.series.str() + " was built with " + tested + "; cuDNN " +
                         cudnn->str() + " is incompatible (it needs cuDNN " +
                         rule_text(fw.cudnn_rule, rel.cudnn) + ")")
            .with_hint(hint);
    }
    if (notes) {
        bool same_cuda = rel.cuda.is_prefix_of(cuda) || cuda.is_prefix_of(rel.cuda);
        bool same_cudnn =
            !cudnn || rel.cudnn.is_prefix_of(*cudnn) || cudnn->is_prefix_of(rel.cudnn);
        if (!same_cuda || !same_cudnn) {
            notes->push_back("compatible with " + fw.name + " " + rel.series.str() +
                             " by the version rules, but not the tested pair (" + tested + ")");
        }
    }
    return Ok{};
}

namespace {

Version major_of(const Version& v) {
    return v.truncated(1);
}

/// PyTorch's and JAX's half of resolve(): which CUDA build of the release (the SPEC's +tag, the
/// one --cuda names, else the default), and the CUDA and cuDNN to look for.
Status choose_variant(const Framework& fw,
                      const FrameworkRelease& rel,
                      const Spec& spec,
                      const ResolveOptions& opt,
                      Resolution& res,
                      std::optional<Version>& want_cuda,
                      std::optional<Version>& want_cudnn) {
    const FrameworkVariant* var = nullptr;
    if (!spec.variant.empty()) {
        var = rel.variant(spec.variant);
        if (!var) {
            std::vector<std::string> tags;
            for (const auto& v : rel.variants) {
                tags.push_back(v.tag);
            }
            auto err = Error(ErrorCode::not_found,
                             fw.name + " " + rel.series.str() + " has no CUDA build '" +
                                 spec.variant + "' (it has " + variants_text(rel) + ")");
            if (auto m = closest_match(spec.variant, tags)) {
                err = std::move(err).with_hint("did you mean '" + fw.name + "-" + rel.series.str() +
                                               "+" + *m + "'?");
            }
            return err;
        }
    } else if (opt.cuda) {
        var = best_variant(rel, *opt.cuda);
    }
    if (!var) {
        var = rel.default_one();
    }
    res.framework_variant = var;
    const auto& src = rel.sources;
    if (spec.variant.empty() && !opt.cuda) {
        auto d = src.find("default");
        res.notes.push_back(fw.name + " " + rel.series.str() + "'s default build is " + var->tag +
                            (fw.name == "pytorch" ? " (PyPI's wheel)" : " (the [cuda] extra)") +
                            (d != src.end() && !d->second.primary
                                 ? "; secondary source: " + d->second.text
                                 : std::string()));
    }
    if (var->cuda_floor) {
        // a floor: the version its CI built with, else the newest of the major
        want_cuda = opt.cuda ? *opt.cuda : var->cuda_install.value_or(major_of(var->cuda));
        want_cudnn = opt.cudnn    ? opt.cudnn
                     : var->cudnn ? std::optional<Version>(major_of(*var->cudnn))
                                  : std::nullopt;
    } else {
        want_cuda = opt.cuda ? *opt.cuda : var->cuda;
        want_cudnn = opt.cudnn ? opt.cudnn : var->cudnn;
    }
    if (!var->cudnn) {
        res.notes.push_back("the manifests know no cuDNN for " + fw.name + " " + rel.series.str() +
                            "+" + var->tag + (opt.cudnn ? "" : ": none is installed with it"));
    }
    for (const char* what : {"cuda", "cudnn", "pins"}) {
        if (auto it = var->sources.find(what); it != var->sources.end() && !it->second.primary) {
            res.notes.push_back(std::string(what == std::string("pins")   ? "the nvidia-* pins"
                                            : what == std::string("cuda") ? "the CUDA"
                                                                          : "the cuDNN") +
                                " of " + fw.name + " " + rel.series.str() + "+" + var->tag +
                                (what == std::string("pins") ? " come" : " comes") +
                                " from a secondary source: " + it->second.text);
        }
    }
    if (var->pins.empty()) {
        res.notes.push_back("the manifests know no nvidia-* pins for " + fw.name + " " +
                            rel.series.str() + "+" + var->tag);
    }
    // a CUDA of another major is refused before anything is looked up
    return check_variant_compat(fw, rel, var, *want_cuda, std::nullopt, nullptr);
}

} // namespace

namespace {

/// --patch as resolve() applies it: nothing for "" and "none"; the newest applicable patch for
/// "cublas"; the one named for "cublas=LABEL".
Status take_patch(const Catalog& c, Resolution& res, std::string_view request) {
    if (request.empty() || request == "none") {
        return Ok{};
    }
    const auto& cuda = *res.cuda;
    if (request == "cublas") {
        if (res.cublas_patches.empty()) {
            if (cuda.source == CudaSource::index) {
                return Error(ErrorCode::incompatible,
                             "which cuBLAS patch applies to CUDA " + cuda.version.str() +
                                 " is known once its index is fetched")
                    .with_hint("cudaenv install " + cuda.version.str() + " --patch cublas");
            }
            const auto* own = cuda.component("libcublas");
            return Error(ErrorCode::incompatible,
                         "NVIDIA published no cuBLAS patch for CUDA " + cuda.version.str() +
                             " (none for the " + cuda.version.truncated(2).str() +
                             " line newer than its own libcublas" +
                             (own ? " " + own->version.str() : std::string()) + ")")
                .with_hint("install it without --patch");
        }
        return apply_cublas_patch(res, *res.cublas_patches.front());
    }
    std::string_view name = request.substr(std::string_view("cublas=").size());
    const auto* patch = manifest::find_cublas_patch(c, name);
    if (!patch) {
        std::string known;
        for (const auto& p : c.cublas_patches) {
            known += (known.empty() ? "" : ", ") + p.label;
        }
        return Error(ErrorCode::not_found, "no cuBLAS patch '" + std::string(name) + "'")
            .with_hint(known.empty() ? "the manifests list no cuBLAS patch"
                                     : "cuBLAS patches: " + known);
    }
    return apply_cublas_patch(res, *patch);
}

} // namespace

bool is_patch_request(std::string_view text) {
    return text.empty() || text == "none" || text == "cublas" ||
           (text.starts_with("cublas=") && text.size() > 7);
}

Status apply_cublas_patch(Resolution& res, const manifest::CublasPatch& patch) {
    const auto& cuda = *res.cuda;
    std::string line = cuda.version.truncated(2).str();
    std::string said = patch.replaces_inferred ? " (inferred from its version numbering)" : "";
    if (patch.cuda_major != cuda.version.major() || patch.replaces != cuda.version.truncated(2)) {
        return Error(ErrorCode::incompatible,
                     "cuBLAS patch " + patch.label + " is for the CUDA " + patch.replaces.str() +
                         " line" + said + ", not CUDA " + cuda.version.str())
            .with_hint("cudaenv resolve " + cuda.version.str() +
                       " names the patches for this release");
    }
    const auto* own = cuda.component("libcublas");
    if (own && !(own->version < patch.version)) {
        return Error(ErrorCode::incompatible,
                     "cuBLAS patch " + patch.label + " (" + patch.version.str() +
                         ") is not newer than CUDA " + cuda.version.str() + "'s own libcublas " +
                         own->version.str())
            .with_hint("install it without --patch");
    }
    auto art = patch.platforms.find(res.platform);
    if (art == patch.platforms.end()) {
        std::string have;
        for (const auto& [p, a] : patch.platforms) {
            have += (have.empty() ? "" : ", ") + p;
        }
        return Error(ErrorCode::incompatible,
                     "cuBLAS patch " + patch.label + " has no " + res.platform +
                         " archive: NVIDIA publishes it for " + have + " only");
    }
    auto it = std::find_if(res.archives.begin(), res.archives.end(), [](const auto& a) {
        return a.component == "libcublas";
    });
    if (it == res.archives.end()) {
        return Error(ErrorCode::usage,
                     "the " + res.profile + " profile of CUDA " + cuda.version.str() +
                         " installs no libcublas for a cuBLAS patch to replace")
            .with_hint("use a profile with libcublas (runtime, devel, full)");
    }
    res.total_size -= it->artifact.size.value_or(0);
    res.unknown_sizes -= it->artifact.size ? 0u : 1u;
    it->version = patch.version;
    it->artifact = art->second;
    res.total_size += art->second.size.value_or(0);
    res.unknown_sizes += art->second.size ? 0u : 1u;
    res.cublas_patch = &patch;
    if (patch.replaces_inferred) {
        res.notes.push_back("cuBLAS patch " + patch.label + " is taken for the CUDA " + line +
                            " line by inference from its version numbering: NVIDIA does not "
                            "say which toolkit it is for");
    }
    return Ok{};
}

Result<Resolution> resolve(const Catalog& c, const Spec& spec, const ResolveOptions& opt) {
    Resolution res;
    res.spec = spec.text;
    res.profile = opt.profile;
    res.platform = opt.platform;
    if (!c.profile(opt.profile)) {
        std::vector<std::string> names;
        for (const auto& p : c.profiles) {
            names.push_back(p.name);
        }
        auto err = Error(ErrorCode::usage, "unknown profile '" + opt.profile + "'");
        if (auto m = closest_match(opt.profile, names)) {
            err = std::move(err).with_hint("did you mean '" + *m + "'?");
        }
        return err;
    }

    std::optional<Version> want_cuda = spec.cuda;
    std::optional<Version> want_cudnn = spec.cudnn;
    if (spec.kind == Spec::Kind::framework) {
        const Framework* fw = c.framework(spec.framework);
        if (!fw) {
            std::vector<std::string> names;
            for (const auto& f : c.frameworks) {
                names.push_back(f.name);
                names.insert(names.end(), f.aliases.begin(), f.aliases.end());
            }
            auto err = Error(ErrorCode::not_found, "no framework named '" + spec.framework + "'");
            if (auto m = closest_match(spec.framework, names)) {
                err = std::move(err).with_hint("did you mean '" + *m + "-" +
                                               spec.framework_version->str() + "'?");
            }
            return err;
        }
        const FrameworkRelease* rel = fw->find(*spec.framework_version);
        if (!rel) {
            std::vector<std::string> known;
            for (auto it = fw->releases.rbegin(); it != fw->releases.rend(); ++it) {
                known.push_back(it->series.str());
            }
            return Error(ErrorCode::not_found,
                         "the manifests know no " + fw->name + " release '" +
                             spec.framework_version->str() + "'")
                .with_hint(version_hint(spec.framework_version->str(), known));
        }
        res.framework = fw;
        res.framework_release = rel;
        res.framework_version = spec.framework_version;
        if (!rel->variants.empty()) {
            CUDAENV_TRY(choose_variant(*fw, *rel, spec, opt, res, want_cuda, want_cudnn));
        } else {
            want_cuda = opt.cuda ? opt.cuda : std::optional<Version>(rel->cuda);
            want_cudnn = opt.cudnn ? opt.cudnn : std::optional<Version>(rel->cudnn);
            CUDAENV_TRY(check_framework_compat(*fw, *rel, *want_cuda, want_cudnn, &res.notes));
        }
    } else {
        if (opt.cuda) {
            if (want_cuda && !opt.cuda->is_prefix_of(*want_cuda) &&
                !want_cuda->is_prefix_of(*opt.cuda)) {
                return Error(ErrorCode::usage,
                             "SPEC '" + spec.text + "' names CUDA " + want_cuda->str() +
                                 " but --cuda says " + opt.cuda->str());
            }
            want_cuda = want_cuda && want_cuda->size() > opt.cuda->size() ? want_cuda : opt.cuda;
        }
        if (opt.cudnn) {
            if (want_cudnn && !opt.cudnn->is_prefix_of(*want_cudnn) &&
                !want_cudnn->is_prefix_of(*opt.cudnn)) {
                return Error(ErrorCode::usage,
                             "SPEC '" + spec.text + "' names cuDNN " + want_cudnn->str() +
                                 " but --cudnn says " + opt.cudnn->str());
            }
            want_cudnn =
                want_cudnn && want_cudnn->size() > opt.cudnn->size() ? want_cudnn : opt.cudnn;
        }
        if (!want_cuda) {
            return Error(ErrorCode::usage,
                         "'" + spec.text + "' names a cuDNN but no CUDA to pair it with")
                .with_hint("add --cuda VERSION, or write the pair: cudaenv resolve 12.4+" +
                           spec.text);
        }
    }

    // the release first, then its platform (a Jetson Orin's changes at CUDA 13), then its archives
    res.cuda = newest_cuda_for(c, *want_cuda, opt);
    if (!res.cuda) {
        return cuda_not_found(c, *want_cuda);
    }
    CUDAENV_TRY(take_platform(c, res, opt));
    if (spec.kind != Spec::Kind::framework) {
        if (const auto* a = manifest::announced_newer(c, *want_cuda, res.cuda->version)) {
            res.notes.push_back("CUDA " + a->version.str() +
                                " is released, but NVIDIA's index for it is not known to the "
                                "manifests: CUDA " +
                                res.cuda->version.str() + " is the newest installable");
        }
    }
    if (want_cudnn) {
        res.cudnn = newest_cudnn_on(c, *want_cudnn, res.cuda->version, res.platform);
        if (res.framework_variant && !opt.cudnn && want_cudnn->size() > 1 &&
            !has_build_on(res.cudnn, res.cuda->version, res.platform)) {
            // the wheels' exact cuDNN is not one the manifests have for this CUDA and platform:
            // the newest of its series, else of its major (the framework's rule, checked below,
            // says whether it may), said as a pin not met
            std::string why = pin_unmet_reason(c, *want_cudnn, *res.cuda, res.platform);
            for (std::size_t parts : {std::size_t{2}, std::size_t{1}}) {
                const CudnnRelease* instead =
                    want_cudnn->size() > parts
                        ? known_cudnn_on(
                              c, want_cudnn->truncated(parts), res.cuda->version, res.platform)
                        : nullptr;
                if (!instead) {
                    continue;
                }
                res.cudnn = instead;
                PinNotMet pin{"cudnn", want_cudnn->str(), {}, instead->version.str(), why};
                for (const auto& [dist, req] : res.framework_variant->pins) {
                    if (dist.rfind("nvidia-cudnn", 0) == 0) {
                        pin.pin = dist + req;
                    }
                }
                res.notes.push_back(
                    "cuDNN " + want_cudnn->str() + " (what the " + res.framework_variant->tag +
                    " wheels pin" + (pin.pin.empty() ? "" : ": " + pin.pin) + ") " + why +
                    ": cuDNN " + instead->version.str() + " instead, the newest cuDNN " +
                    want_cudnn->truncated(parts).str() + " the manifests have for CUDA " +
                    res.cuda->version.truncated(2).str() + " on " + res.platform);
                res.pins_not_met.push_back(std::move(pin));
                break;
            }
        }
        if (!res.cudnn) {
            // Either no such cuDNN at all, or none built for this CUDA.
            const CudnnRelease* any = c.newest_cudnn(*want_cudnn);
            if (!any) {
                return cudnn_not_found(c, *want_cudnn);
            }
            return cudnn_incompatible(c, *any, *res.cuda);
        }
        res.cudnn_build = res.cudnn->build_for(res.cuda->version);
        if (res.cudnn_build) {
            CUDAENV_TRY(check_cudnn_platform(c, res));
        }
        if (res.pins_not_met.empty()) {
            // a newer release the SPEC allows whose build for this platform is not known
            // (its index is known only in part) was passed over: say so, never silently
            for (auto it = c.cudnn.rbegin(); it != c.cudnn.rend() && &*it != res.cudnn; ++it) {
                const auto* b = want_cudnn->is_prefix_of(it->version)
                                    ? it->build_for(res.cuda->version)
                                    : nullptr;
                if (b && it->build_unknown(b->cuda, res.platform)) {
                    res.notes.push_back(unknown_build_text(*it, b->cuda, res.platform) +
                                        "; cuDNN " + res.cudnn->version.str() +
                                        " is the newest known for it");
                    break;
                }
            }
        }
        if (res.cudnn_build && !res.cudnn_build->covers(res.cuda->version)) {
            const auto& b = *res.cudnn_build;
            res.notes.push_back("cuDNN " + res.cudnn->version.str() + "'s build for CUDA " +
                                b.cuda + " is supported with CUDA " +
                                (b.cuda_min ? b.cuda_min->str() : "?") + "-" +
                                (b.cuda_max ? b.cuda_max->str() : "?") + "; CUDA " +
                                res.cuda->version.truncated(2).str() +
                                " is outside NVIDIA's tested range (it loads through minor-version "
                                "compatibility, untested)");
        }
        if (auto it = c.rules.cudnn_sublibraries.find(res.cudnn->major);
            it != c.rules.cudnn_sublibraries.end()) {
            res.cudnn_sublibraries = it->second;
        } else {
            res.cudnn_sublibraries = {"libcudnn"};
        }
    }
    if (res.framework_variant) {
        // judged on what was resolved: JAX's floors hold for the release picked, not the prefix
        CUDAENV_TRY(check_variant_compat(*res.framework,
                                         *res.framework_release,
                                         res.framework_variant,
                                         res.cuda->version,
                                         res.cudnn ? std::optional<Version>(res.cudnn->version)
                                                   : std::nullopt,
                                         &res.notes));
    }
    add_archives(c, res, opt);
    if (opt.compat) {
        CUDAENV_TRY(add_compat(c, res));
    }
    res.cublas_patches = manifest::applicable_cublas_patches(c, *res.cuda);
    CUDAENV_TRY(take_patch(c, res, opt.patch));
    return res;
}

Result<Described> describe(const Catalog& c, const Spec& spec, const ResolveOptions& opt) {
    bool framework = spec.kind == Spec::Kind::framework;
    std::optional<Version> cuda = opt.cuda ? opt.cuda : framework ? std::nullopt : spec.cuda;
    std::optional<Version> cudnn = opt.cudnn ? opt.cudnn : framework ? std::nullopt : spec.cudnn;
    const PinnedIndex* cuda_pin = cuda ? c.pinned_index("cuda", *cuda) : nullptr;
    const PinnedIndex* cudnn_pin = cudnn ? c.pinned_index("cudnn", *cudnn) : nullptr;
    Described d;
    if (const auto* a = cuda && !cudnn ? manifest::announced_for(c, *cuda) : nullptr) {
        // released (or previewed), its index not known: what is known of it, not installable
        d.catalog = std::shared_ptr<const Catalog>(&c, [](const Catalog*) {});
        d.announced = a;
        d.res.spec = spec.text;
        d.res.profile = opt.profile;
        d.res.platform = opt.platform;
        d.res.not_installable.push_back(manifest::announced_error(c, *a).message);
        return d;
    }
    if (cuda_pin) {
        auto copy = std::make_shared<Catalog>(c);
        CudaRelease r;
        if (cuda_pin->release) {
            r = *cuda_pin->release;
        } else {
            r.version = cuda_pin->version;
            r.source = CudaSource::index;
            r.redistrib = cuda_pin->index;
        }
        copy->cuda.push_back(std::move(r));
        std::sort(copy->cuda.begin(), copy->cuda.end(), [](const auto& a, const auto& b) {
            return a.version < b.version;
        });
        d.catalog = std::move(copy);
    } else {
        d.catalog = std::shared_ptr<const Catalog>(&c, [](const Catalog*) {});
    }
    Spec s = spec;
    ResolveOptions o = opt;
    if (cudnn_pin) {
        // resolved without it; the index says the rest once install fetches it
        s.cudnn.reset();
        o.cudnn.reset();
        if (s.kind == Spec::Kind::pair) {
            s.kind = Spec::Kind::cuda;
        }
    }
    d.res = CUDAENV_TRY(resolve(*d.catalog, s, o));
    d.res.spec = spec.text;
    if (d.res.cuda && d.res.cuda->source == CudaSource::index) {
        for (const auto& p : c.pinned_indexes) {
            if (p.product == "cuda" && p.version == d.res.cuda->version) {
                d.res.cuda_index = &p;
            }
        }
        d.res.notes.push_back("CUDA " + d.res.cuda->version.str() +
                              " is known by the sha256 of NVIDIA's index (" +
                              d.res.cuda->redistrib->path +
                              "): install fetches it, checks it against the pin, and then "
                              "knows its archives");
    }
    if (cudnn_pin) {
        d.res.cudnn_index = cudnn_pin;
        d.res.notes.push_back("cuDNN " + cudnn_pin->version.str() +
                              " is known by the sha256 of NVIDIA's index (" +
                              cudnn_pin->index.path +
                              "): install fetches it, checks it against the pin, and picks the "
                              "build for CUDA " +
                              d.res.cuda->version.str() + " from it");
    }
    return d;
}

} // namespace cudaenv
