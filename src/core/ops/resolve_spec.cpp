// SPEC -> Resolution with the indexes it needs (resolve_spec.hpp).
#include "resolve_spec.hpp"

#include "core/fetch/download.hpp"
#include "core/manifest/announced.hpp"
#include "core/manifest/codec.hpp"
#include "core/manifest/indexes.hpp"
#include "core/manifest/nvidia_redist.hpp"
#include "core/sha256.hpp"
#include "core/spec.hpp"

#include <algorithm>
#include <tuple>

namespace cudaenv::ops {

namespace {

/// What --allow-unpinned may fetch for a SPEC the manifests do not know: NVIDIA's index of a
/// CUDA X.Y.Z or a cuDNN X.Y.Z. Kind::none when the SPEC names nothing of the kind.
struct Unpinned {
    enum class Kind { none, cuda, cudnn } kind = Kind::none;
    std::string version;
};

Unpinned unpinned_candidate(const manifest::Catalog& cat, const Spec& spec) {
    const auto* announced = spec.cuda ? manifest::announced_for(cat, *spec.cuda) : nullptr;
    if (announced && announced->preview) {
        return {}; // NVIDIA published no index for a developer preview: nothing to fetch
    }
    if (spec.cuda && spec.cuda->size() == 3 && !cat.newest_cuda(*spec.cuda)) {
        return {Unpinned::Kind::cuda, spec.cuda->str()};
    }
    if (spec.cudnn && spec.cudnn->size() >= 3 && !cat.newest_cudnn(*spec.cudnn)) {
        return {Unpinned::Kind::cudnn, spec.cudnn->truncated(3).str()};
    }
    return {};
}

/// Fetches NVIDIA's index for `u` and trusts it without a pinned hash (saying so): the root
/// records it, so a later run knows the release and refuses a changed index (D15).
Result<manifest::Catalog>
with_unpinned(Session& session, const manifest::Catalog& cat, const Unpinned& u, const Warn& warn) {
    bool cuda = u.kind == Unpinned::Kind::cuda;
    std::string product = cuda ? "cuda" : "cudnn";
    std::string rel = manifest::redistrib_path(product, u.version);
    std::string url = CUDAENV_TRY(manifest::join_url(session.base_url(), rel, "NVIDIA's index"));
    auto text = CUDAENV_TRY(fetch::fetch_text(url, session.download_policy(), 16 << 20));
    manifest::Artifact red{rel, {}, sha256_hex(text), text.size()};
    auto copy = CUDAENV_TRY(manifest::with_index(cat, product, u.version, text, red));
    CUDAENV_TRY(manifest::record_trusted(session.root().dir, product, u.version, text));
    // told now, before anything else can fail: this root trusts the index from here on
    if (warn) {
        warn((cuda ? "CUDA " : "cuDNN ") + u.version + " is not in the manifests; trusting '" +
             url + "' (sha256 " + red.sha256 + ") without a pinned hash, as --allow-unpinned asks");
    }
    return copy;
}

/// Fetches the index the manifests pin for a release and checks it against the pin; then its
/// per-archive hashes are trusted like the manifests' own.
Result<manifest::Catalog>
with_pinned(Session& session, const manifest::Catalog& cat, const manifest::PinnedIndex& p) {
    std::string url =
        CUDAENV_TRY(manifest::join_url(session.base_url(), p.index.path, "the pinned index"));
    auto text = CUDAENV_TRY(fetch::fetch_text(url, session.download_policy(), 16 << 20));
    auto sha = sha256_hex(text);
    if (sha != p.index.sha256) {
        return Error(ErrorCode::integrity,
                     "NVIDIA's index '" + url + "' has sha256 " + sha + ", but the manifests pin " +
                         p.index.sha256)
            .with_hint("a mirror or proxy changed it; nothing was installed");
    }
    manifest::Artifact red{p.index.path, {}, sha, text.size()};
    return manifest::with_index(cat, p.product, p.version.str(), text, red);
}

/// The index-pinned release a SPEC asks for, when it is newer than what the manifests describe.
const manifest::PinnedIndex* pinned_for(const manifest::Catalog& cat, const Spec& spec) {
    if (spec.cuda) {
        if (const auto* p = cat.pinned_index("cuda", *spec.cuda)) {
            return p;
        }
    }
    if (spec.cudnn) {
        if (const auto* p = cat.pinned_index("cudnn", *spec.cudnn)) {
            return p;
        }
    }
    return nullptr;
}

} // namespace

Result<ResolveOptions> to_resolve_options(const SpecOptions& o, const Session& session) {
    ResolveOptions ro;
    ro.profile = o.profile;
    ro.compat = o.compat;
    if (!is_patch_request(o.patch)) {
        return Error(ErrorCode::usage, "--patch: unknown value '" + o.patch + "'")
            .with_hint("--patch cublas (the newest cuBLAS patch for the release), --patch "
                       "cublas=LABEL (that one), --patch none (the release's own cuBLAS)");
    }
    ro.patch = o.patch;
    for (auto [text, out, what] :
         {std::tuple{&o.cuda, &ro.cuda, "--cuda"}, std::tuple{&o.cudnn, &ro.cudnn, "--cudnn"}}) {
        if (text->empty()) {
            continue;
        }
        auto v = Version::parse(*text);
        if (!v) {
            return Error(ErrorCode::usage, std::string(what) + ": " + v.error().message);
        }
        *out = *v;
    }
    if (!o.platform.empty() && !manifest::is_platform(o.platform)) {
        return Error(ErrorCode::usage, "unknown platform '" + o.platform + "'")
            .with_hint("platforms: " + manifest::platform_list());
    }
    if (!o.platform.empty()) {
        // this command's --platform (a mirror's, one at a time): the same for every release
        ro.platform = o.platform;
        ro.platform_for = [p = o.platform](const Version&) {
            return sys::PlatformChoice{p, {}, {}};
        };
    } else {
        // CUDAENV_PLATFORM or the config's, else the host's choice for the release resolved
        ro.platform = session.forced_platform();
        ro.platform_for = [&session](const Version& cuda) { return session.platform_for(cuda); };
    }
    return ro;
}

std::vector<std::string> framework_names(const manifest::Catalog& catalog) {
    std::vector<std::string> names;
    for (const auto& f : catalog.frameworks) {
        names.push_back(f.name);
        names.insert(names.end(), f.aliases.begin(), f.aliases.end());
    }
    return names;
}

Result<manifest::Catalog> trusted_catalog(Session& session) {
    const auto* catalog = CUDAENV_TRY(session.catalog());
    return manifest::with_trusted(*catalog, session.root().dir);
}

Result<SpecDescription>
describe_spec(Session& session, const std::string& text, const SpecOptions& options) {
    auto cat = std::make_unique<const manifest::Catalog>(CUDAENV_TRY(trusted_catalog(session)));
    auto spec = CUDAENV_TRY(parse_spec(text, framework_names(*cat)));
    auto ro = CUDAENV_TRY(to_resolve_options(options, session));
    auto d = describe(*cat, spec, ro);
    if (!d) {
        return Error(d.error()).with_context("resolving '" + text + "'");
    }
    if (d->announced) {
        return SpecDescription{std::move(cat), std::move(*d), {}}; // no release to check
    }
    auto machine = machine_check(session, *d->res.cuda);
    return SpecDescription{std::move(cat), std::move(*d), std::move(machine)};
}

Result<ResolvedSpec> resolve_with_indexes(Session& session,
                                          const manifest::Catalog& catalog,
                                          const std::vector<std::string>& framework_names,
                                          const std::string& text,
                                          const ResolveOptions& ro,
                                          bool allow_unpinned,
                                          const std::string& command,
                                          const Warn& warn) {
    auto spec = CUDAENV_TRY(parse_spec(text, framework_names));
    ResolvedSpec out;
    // Any index this SPEC needs: an index-pinned release (verified against its pin), or with
    // --allow-unpinned a release newer than the manifests -- a CUDA and its cuDNN both, one
    // after the other.
    const manifest::Catalog* cat = &catalog;
    auto res = resolve(*cat, spec, ro);
    for (int round = 0; round < 4; ++round) {
        Result<manifest::Catalog> more = Error(ErrorCode::internal, "");
        if (const auto* p = pinned_for(*cat, spec)) {
            more = with_pinned(session, *cat, *p);
        } else if (res || res.error().code != ErrorCode::not_found) {
            break;
        } else if (auto u = unpinned_candidate(*cat, spec); u.kind != Unpinned::Kind::none) {
            if (!allow_unpinned) {
                return Error(res.error())
                    .with_hint("to trust NVIDIA's index for a release newer than the manifests: "
                               "cudaenv " +
                               command + " " + text + " --allow-unpinned");
            }
            more = with_unpinned(session, *cat, u, warn);
        } else {
            break;
        }
        if (!more) {
            return std::move(more).error();
        }
        out.extended = std::make_unique<manifest::Catalog>(std::move(*more));
        cat = out.extended.get();
        res = resolve(*cat, spec, ro);
    }
    if (!res) {
        return Error(res.error()).with_context("resolving '" + text + "'");
    }
    out.res = std::move(*res);
    return out;
}

} // namespace cudaenv::ops
