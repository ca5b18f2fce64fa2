// The mirror operation (mirror.hpp).
#include "mirror.hpp"

#include "core/channel/signing.hpp"
#include "core/channel/update.hpp"
#include "core/fs.hpp"
#include "core/manifest/indexes.hpp"
#include "core/ops/trust.hpp"
#include "core/sha256.hpp"
#include "core/sys/dynlib.hpp"

#include <algorithm>
#include <ctime>
#include <memory>

namespace cudaenv::ops {

namespace {

/// Every file a resolution downloads: its archives and NVIDIA's index files for its releases.
/// Archives the manifests know only by an absolute URL (another host) are not the mirror's.
void files_of(const Resolution& res,
              std::vector<mirror::File>& files,
              std::set<std::string>& elsewhere) {
    auto add = [&](const manifest::Artifact& a, const std::string& what) {
        if (!a.path.empty()) {
            files.push_back({a.path, a.sha256, a.size, what});
        } else if (!a.url.empty()) {
            elsewhere.insert(a.url);
        }
    };
    if (res.cuda && res.cuda->redistrib) {
        add(*res.cuda->redistrib, "NVIDIA's CUDA " + res.cuda->version.str() + " index");
    }
    if (res.cudnn) {
        for (const auto& r : res.cudnn->redistrib) {
            add(r, "NVIDIA's cuDNN " + res.cudnn->version.str() + " index");
        }
    }
    for (const auto& a : res.archives) {
        add(a.artifact, a.component + " " + a.version.str());
    }
}

struct Carried {
    std::optional<mirror::File> file;
    std::string note;                     ///< why none is carried
    std::vector<mirror::File> roots = {}; ///< the root metadata versions this machine took
};

/// The root metadata versions this machine took from the channel (its trust state), carried at
/// cudaenv-channel/root/<N>.root so hosts follow a key rotation from the mirror too.
Result<std::vector<mirror::File>> root_files(const channel::TrustState& state) {
    std::vector<mirror::File> out;
    for (const auto& [version, file] :
         channel::recorded_roots(state.anchors.state, state.root.anchor)) {
        auto bytes = CUDAENV_TRY(read_text_file(file));
        Sha256 h;
        h.update(bytes);
        out.push_back({std::string(channel::k_mirror_channel_dir) + "/root/" +
                           std::to_string(version) + ".root",
                       h.hex_digest(),
                       bytes.size(),
                       "the channel's root metadata, version " + std::to_string(version),
                       bytes});
    }
    return out;
}

/// The update channel's bundle of the manifests in use, which the mirror carries at
/// cudaenv-channel/manifests.bundle so hosts can `cudaenv update` from it with no route to the
/// channel (docs/channel.md). Verified again before it is carried; none when the manifests in
/// use are the shipped ones or a given directory.
Result<Carried> channel_file(Session& session, const std::string& cudaenv_version) {
    if (session.manifests_in_use().origin == channel::ManifestsInUse::Origin::given) {
        return Carried{std::nullopt,
                       "no update channel bundle carried: the manifests are a "
                       "given directory (--manifests, CUDAENV_MANIFESTS)"};
    }
    // the newest set from the channel, even where this machine's own floor (a newer package) is
    // newer still: the hosts the mirror serves may run older packages
    auto root = session.root();
    std::vector<std::filesystem::path> roots{root.dir};
    roots.insert(roots.end(), root.upstreams.begin(), root.upstreams.end());
    std::vector<std::string> warnings;
    auto set = channel::newest_channel_set(roots, warnings, session.set_check);
    if (!set) {
        return Carried{std::nullopt,
                       "no update channel bundle carried: no set from the channel "
                       "here (`cudaenv update` first)"};
    }
    auto path = set->dir / channel::k_bundle_file;
    channel::Trust trust;
    auto state = CUDAENV_TRY(trust_state(session));
    trust.ring = state.ring();
    trust.now = std::time(nullptr);
    trust.cudaenv_version = cudaenv_version;
    // read once: what is verified is what is carried, whatever happens to the set meanwhile
    auto bytes = read_text_file(path);
    auto bundle = bytes ? channel::open_bundle(*bytes, trust, path.string())
                        : Result<channel::Bundle>(bytes.error());
    if (!bundle) {
        return Carried{std::nullopt, "no update channel bundle carried: " + bundle.error().message};
    }
    Sha256 h;
    h.update(*bytes);
    mirror::File f{std::string(channel::k_mirror_channel_dir) + "/" + channel::k_bundle_file,
                   h.hex_digest(),
                   bytes->size(),
                   "the manifests bundle, serial " + std::to_string(bundle->info.serial),
                   *bytes};
    return Carried{f, "", CUDAENV_TRY(root_files(state))};
}

} // namespace

Result<MirrorReport> mirror_specs(Session& session,
                                  const MirrorRequest& request,
                                  const mirror::Observer& observer,
                                  const mirror::RecompressObserver& recompressing) {
    CUDAENV_TRY(sys::load(sys::k_curl | sys::k_crypto));
    mirror::RecompressOptions recompress;
    if (!request.recompress.empty()) {
        if (request.recompress != "zstd") {
            return Error(ErrorCode::usage,
                         "--recompress " + printable(request.recompress) +
                             ": cudaenv recompresses to zstd only")
                .with_hint("cudaenv mirror SPEC --to DIR --recompress zstd --sign-key FILE");
        }
        if (request.sign_keys.empty()) {
            return Error(ErrorCode::usage,
                         "--recompress needs --sign-key: hosts trust a recompressed archive "
                         "through the site's signature")
                .with_hint("cudaenv __bundle keygen --out site (once); then --sign-key "
                           "site.secret, and site.pub in each host's /etc/cudaenv/keys/");
        }
        if (request.level < 1 || request.level > 19) {
            return Error(ErrorCode::usage,
                         "--level " + std::to_string(request.level) + " is not one of 1 to 19");
        }
        for (const auto& k : request.sign_keys) {
            auto text = CUDAENV_TRY(read_text_file(k));
            recompress.keys.push_back(CUDAENV_TRY(channel::parse_secret_key(text, k)));
        }
        recompress.level = request.level;
        recompress.lock_timeout = session.lock_timeout();
    } else if (!request.sign_keys.empty()) {
        return Error(ErrorCode::usage,
                     "--sign-key signs a recompressed index: give --recompress zstd");
    }
    const auto* catalog = CUDAENV_TRY(session.catalog());
    auto trusted = CUDAENV_TRY(manifest::with_trusted(*catalog, session.root().dir));
    auto names = framework_names(*catalog);
    std::vector<std::string> platforms = request.platforms;
    if (platforms.empty()) {
        platforms.push_back(""); // this machine's
    }
    std::vector<mirror::File> files;
    MirrorReport report;
    std::vector<std::unique_ptr<ResolvedSpec>> keep; // the resolutions' catalogs
    for (const auto& platform : platforms) {
        SpecOptions so = request.spec_options;
        so.platform = platform;
        auto ro = CUDAENV_TRY(to_resolve_options(so, session));
        for (const auto& text : request.specs) {
            auto r = CUDAENV_TRY(
                resolve_with_indexes(session, trusted, names, text, ro, false, "mirror", {}));
            if (!r.res.installable()) {
                return Error(ErrorCode::failure,
                             "cannot mirror '" + text + "' for " + ro.platform + ": " +
                                 r.res.not_installable[0])
                    .with_hint("cudaenv resolve " + text + " --platform " + ro.platform +
                               " shows what is missing");
            }
            files_of(r.res, files, report.not_mirrored);
            keep.push_back(std::make_unique<ResolvedSpec>(std::move(r)));
        }
    }
    auto carried = CUDAENV_TRY(channel_file(session, request.cudaenv_version));
    if (carried.file) {
        files.push_back(*carried.file);
        report.channel_file = carried.file->path;
    }
    files.insert(files.end(), carried.roots.begin(), carried.roots.end());
    report.channel_note = carried.note;
    mirror::Options mo;
    mo.base_url = session.base_url();
    mo.policy = session.download_policy();
    mo.jobs = std::max(1u, request.jobs);
    mo.dry_run = request.dry_run;
    mo.lock_timeout = session.lock_timeout();
    report.outcome = CUDAENV_TRY(mirror::mirror(request.to, files, mo, observer));
    if (!request.recompress.empty() && !request.dry_run) {
        report.recompressed =
            CUDAENV_TRY(mirror::recompress(request.to, recompress, recompressing));
    }
    return report;
}

} // namespace cudaenv::ops
