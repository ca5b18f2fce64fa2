// SPEC -> Resolution with the indexes it needs (fetch_resolve.hpp).
#include "fetch_resolve.hpp"

#include "core/fetch/download.hpp"
#include "core/manifest/codec.hpp"
#include "core/manifest/indexes.hpp"
#include "core/manifest/nvidia_redist.hpp"
#include "core/sha256.hpp"
#include "core/spec.hpp"

#include <ostream>

namespace cudaenv::cli {

namespace {

/// What --allow-unpinned may fetch for a SPEC the manifests do not know: NVIDIA's index of a
/// CUDA X.Y.Z or a cuDNN X.Y.Z. Kind::none when the SPEC names nothing of the kind.
struct Unpinned {
    enum class Kind { none, cuda, cudnn } kind = Kind::none;
    std::string version;
};

Unpinned unpinned_candidate(const manifest::Catalog& cat, const Spec& spec) {
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
with_unpinned(Context& ctx, const manifest::Catalog& cat, const Unpinned& u) {
    bool cuda = u.kind == Unpinned::Kind::cuda;
    std::string product = cuda ? "cuda" : "cudnn";
    std::string rel = manifest::redistrib_path(product, u.version);
    std::string url = CUDAENV_TRY(manifest::join_url(ctx.base_url(), rel, "NVIDIA's index"));
    auto text = CUDAENV_TRY(fetch::fetch_text(url, ctx.download_policy(), 16 << 20));
    manifest::Artifact red{rel, {}, sha256_hex(text), text.size()};
    auto copy = CUDAENV_TRY(manifest::with_index(cat, product, u.version, text, red));
    CUDAENV_TRY(manifest::record_trusted(ctx.root().dir, product, u.version, text));
    *ctx.err << "cudaenv: warning: " << (cuda ? "CUDA " : "cuDNN ") << u.version
             << " is not in the manifests; trusting '" << url << "' (sha256 " << red.sha256
             << ") without a pinned hash, as --allow-unpinned asks\n";
    return copy;
}

/// Fetches the index the manifests pin for a release and checks it against the pin; then its
/// per-archive hashes are trusted like the manifests' own.
Result<manifest::Catalog>
with_pinned(Context& ctx, const manifest::Catalog& cat, const manifest::PinnedIndex& p) {
    std::string url =
        CUDAENV_TRY(manifest::join_url(ctx.base_url(), p.index.path, "the pinned index"));
    auto text = CUDAENV_TRY(fetch::fetch_text(url, ctx.download_policy(), 16 << 20));
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

Result<ResolvedSpec> resolve_with_indexes(Context& ctx,
                                          const manifest::Catalog& catalog,
                                          const std::vector<std::string>& framework_names,
                                          const std::string& text,
                                          const ResolveOptions& ro,
                                          bool allow_unpinned,
                                          const std::string& command) {
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
            more = with_pinned(ctx, *cat, *p);
        } else if (res || res.error().code != ErrorCode::not_found) {
            break;
        } else if (auto u = unpinned_candidate(*cat, spec); u.kind != Unpinned::Kind::none) {
            if (!allow_unpinned) {
                return Error(res.error())
                    .with_hint("to trust NVIDIA's index for a release newer than the manifests: "
                               "cudaenv " +
                               command + " " + text + " --allow-unpinned");
            }
            more = with_unpinned(ctx, *cat, u);
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

} // namespace cudaenv::cli
