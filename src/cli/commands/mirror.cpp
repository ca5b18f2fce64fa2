// cudaenv mirror SPEC... --to DIR [--platform P]... | mirror --verify DIR
#include "core/mirror/mirror.hpp"

#include "../context.hpp"
#include "../fetch_resolve.hpp"
#include "../spec_options.hpp"
#include "core/channel/keys.hpp"
#include "core/channel/update.hpp"
#include "core/fs.hpp"
#include "core/manifest/indexes.hpp"
#include "core/sha256.hpp"
#include "core/sys/dynlib.hpp"
#include "core/sys/process.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <ctime>
#include <mutex>
#include <ostream>
#include <set>

namespace cudaenv::cli {

namespace {

struct MirrorCli {
    std::vector<std::string> specs;
    std::string to;
    std::string verify;
    std::string cuda;
    std::string cudnn;
    std::string profile = "runtime";
    std::vector<std::string> platforms;
    unsigned jobs = 4;
    bool dry_run = false;
};

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
    std::string note; ///< why none is carried
};

/// The update channel's bundle of the manifests in use, which the mirror carries at
/// cudaenv-channel/manifests.bundle so hosts can `cudaenv update` from it with no route to the
/// channel (docs/channel.md). Verified again before it is carried; none when the manifests in
/// use are the shipped ones or a given directory.
Result<Carried> channel_file(Context& ctx) {
    if (ctx.manifests_in_use().origin == channel::ManifestsInUse::Origin::given) {
        return Carried{std::nullopt,
                       "no update channel bundle carried: the manifests are a "
                       "given directory (--manifests, CUDAENV_MANIFESTS)"};
    }
    // the newest set from the channel, even where this machine's own floor (a newer package) is
    // newer still: the hosts the mirror serves may run older packages
    auto root = ctx.root();
    std::vector<std::filesystem::path> roots{root.dir};
    roots.insert(roots.end(), root.upstreams.begin(), root.upstreams.end());
    std::vector<std::string> warnings;
    auto set = channel::newest_channel_set(roots, warnings);
    if (!set) {
        return Carried{std::nullopt,
                       "no update channel bundle carried: no set from the channel "
                       "here (`cudaenv update` first)"};
    }
    auto path = set->dir / channel::k_bundle_file;
    channel::Trust trust;
    trust.keys = CUDAENV_TRY(channel::trusted_keys(ctx.sysroot()));
    trust.now = std::time(nullptr);
    trust.cudaenv_version = CUDAENV_VERSION_STRING;
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
    return Carried{f, ""};
}

int run_verify(const MirrorCli& o, Context& ctx) {
    if (auto libs = sys::load(sys::k_crypto); !libs) {
        return report_error(ctx, libs.error(), "mirror");
    }
    auto problems = mirror::verify(o.verify, std::max(1u, o.jobs));
    if (!problems) {
        return report_error(ctx, problems.error(), "mirror");
    }
    if (problems->empty()) {
        if (ctx.json) {
            emit_json(ctx,
                      {{"command", "mirror"},
                       {"ok", true},
                       {"verify", o.verify},
                       {"problems", nlohmann::json::array()}});
        } else {
            *ctx.out << "every file of the mirror in " << o.verify << " is there and verified\n";
        }
        return 0;
    }
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& p : *problems) {
        arr.push_back({{"path", p.path}, {"problem", p.what}});
        if (!ctx.json) {
            *ctx.out << p.path << ": " << printable(p.what) << "\n";
        }
    }
    Error e(ErrorCode::integrity,
            std::to_string(problems->size()) + " file" + (problems->size() == 1 ? "" : "s") +
                " of the mirror in " + o.verify + " " + (problems->size() == 1 ? "is" : "are") +
                " missing or wrong (listed above)");
    e = std::move(e).with_hint("run the same `cudaenv mirror SPEC... --to " + o.verify +
                               "` again: it downloads exactly those");
    if (ctx.json) {
        // one document: the problems and the error
        ctx.json = false;
        int code = report_error(ctx, e, "mirror");
        ctx.json = true;
        emit_json(ctx,
                  {{"command", "mirror"},
                   {"ok", false},
                   {"verify", o.verify},
                   {"problems", arr},
                   {"error",
                    {{"code", to_string(e.code)},
                     {"exit_code", code},
                     {"message", e.full_message()},
                     {"hints", e.hints}}}});
        return code;
    }
    return report_error(ctx, e, "mirror");
}

int run_mirror(const MirrorCli& o, Context& ctx) {
    if (!o.verify.empty()) {
        if (!o.specs.empty() || !o.to.empty()) {
            return report_error(ctx,
                                Error(ErrorCode::usage, "--verify DIR takes no SPEC and no --to")
                                    .with_hint("cudaenv mirror --verify /srv/mirror"),
                                "mirror");
        }
        return run_verify(o, ctx);
    }
    if (o.specs.empty() || o.to.empty()) {
        return report_error(ctx,
                            Error(ErrorCode::usage, "mirror needs SPECs and --to DIR")
                                .with_hint("cudaenv mirror tf-2.13 12.4 --to /srv/mirror"),
                            "mirror");
    }
    if (auto libs = sys::load(sys::k_curl | sys::k_crypto); !libs) {
        return report_error(ctx, libs.error(), "mirror");
    }
    auto catalog = ctx.catalog();
    if (!catalog) {
        return report_error(ctx, catalog.error(), "mirror");
    }
    auto trusted = manifest::with_trusted(**catalog, ctx.root().dir);
    if (!trusted) {
        return report_error(ctx, trusted.error(), "mirror");
    }
    auto names = framework_names(**catalog);
    std::vector<std::string> platforms = o.platforms;
    if (platforms.empty()) {
        platforms.push_back(""); // this machine's
    }
    std::vector<mirror::File> files;
    std::set<std::string> elsewhere;
    std::vector<std::unique_ptr<ResolvedSpec>> keep; // the resolutions' catalogs
    for (const auto& platform : platforms) {
        SpecOptions so{o.cuda, o.cudnn, o.profile, platform};
        auto ro = to_resolve_options(so);
        if (!ro) {
            return report_error(ctx, ro.error(), "mirror");
        }
        for (const auto& text : o.specs) {
            auto r = resolve_with_indexes(ctx, *trusted, names, text, *ro, false, "mirror");
            if (!r) {
                return report_error(ctx, r.error(), "mirror");
            }
            if (!r->res.installable()) {
                return report_error(ctx,
                                    Error(ErrorCode::failure,
                                          "cannot mirror '" + text + "' for " + ro->platform +
                                              ": " + r->res.not_installable[0])
                                        .with_hint("cudaenv resolve " + text + " --platform " +
                                                   ro->platform + " shows what is missing"),
                                    "mirror");
            }
            files_of(r->res, files, elsewhere);
            keep.push_back(std::make_unique<ResolvedSpec>(std::move(*r)));
        }
    }
    auto carried = channel_file(ctx);
    if (!carried) {
        return report_error(ctx, carried.error(), "mirror");
    }
    if (carried->file) {
        files.push_back(*carried->file);
    }
    mirror::Options mo;
    mo.base_url = ctx.base_url();
    mo.policy = ctx.download_policy();
    mo.jobs = std::max(1u, o.jobs);
    mo.dry_run = o.dry_run;
    mo.lock_timeout = ctx.lock_timeout();
    std::mutex m;
    bool quiet = ctx.json || o.dry_run;
    auto out = mirror::mirror(o.to, files, mo, [&](const mirror::Event& e) {
        if (quiet || e.kind != mirror::Event::Kind::done) {
            return;
        }
        std::lock_guard<std::mutex> g(m);
        *ctx.err << "cudaenv: " << e.file->what << ": " << human_size(e.bytes)
                 << " downloaded and verified\n";
    });
    if (!out) {
        return report_error(ctx, out.error(), "mirror");
    }
    std::uint64_t total = 0;
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& fo : out->files) {
        total += fo.file.size.value_or(0);
        arr.push_back({{"path", fo.file.path},
                       {"what", fo.file.what},
                       {"sha256", fo.file.sha256},
                       {"size", fo.file.size ? nlohmann::json(*fo.file.size) : nlohmann::json()},
                       {"present", fo.present},
                       {"downloaded_bytes", fo.bytes}});
    }
    if (ctx.json) {
        emit_json(
            ctx,
            {{"command", "mirror"},
             {"ok", true},
             {"changed", out->changed},
             {"dry_run", o.dry_run},
             {"to", o.to},
             {"downloaded_bytes", out->downloaded_bytes},
             {"files", arr},
             {"not_mirrored", elsewhere},
             {"channel", carried->file ? nlohmann::json(carried->file->path) : nlohmann::json()},
             {"stats", {{"peak_rss_kib", sys::peak_rss_kib()}}}});
        return 0;
    }
    if (!carried->note.empty()) {
        *ctx.err << "cudaenv: note: " << carried->note << "\n";
    }
    for (const auto& url : elsewhere) {
        *ctx.err << "cudaenv: warning: not mirrored (the manifests give it on another host): "
                 << url << "\n";
    }
    if (o.dry_run) {
        for (const auto& fo : out->files) {
            *ctx.out << (fo.present ? "  have " : "  get  ") << fo.file.path << "  "
                     << (fo.file.size ? human_size(*fo.file.size) : std::string("?")) << "\n";
        }
        *ctx.out << (out->changed ? "would download into " : "nothing to download into ") << o.to
                 << "\n";
    } else if (out->changed) {
        *ctx.out << "mirrored " << out->files.size() << " files (" << human_size(total) << ", "
                 << human_size(out->downloaded_bytes) << " downloaded now) in " << o.to << "\n";
    } else {
        *ctx.out << o.to << " already holds all " << out->files.size() << " files ("
                 << human_size(total) << "); nothing downloaded\n";
    }
    return 0;
}

} // namespace

void setup_mirror(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<MirrorCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer(
        "Examples:\n"
        "  cudaenv mirror tf-2.13 12.4 --to /srv/nvidia      for "
        "`CUDAENV_MIRROR=http://host/nvidia`\n"
        "  cudaenv mirror tf-2.15 --platform linux-x86_64 --platform linux-sbsa --to /srv/nvidia\n"
        "  cudaenv mirror --verify /srv/nvidia                re-hash every file (exit 4 if any is "
        "bad)\n"
        "The tree is laid out like NVIDIA's host: serve it with any static web server.\n");
    sub->add_option("spec", o->specs, "what to mirror (see `cudaenv resolve`)");
    sub->add_option("--to", o->to, "the mirror's directory")->option_text("DIR");
    sub->add_option("--verify", o->verify, "re-hash an existing mirror and name every bad file")
        ->option_text("DIR");
    sub->add_option("--cuda", o->cuda, "CUDA version (checked against the framework)");
    sub->add_option("--cudnn", o->cudnn, "cuDNN version");
    sub->add_option("--profile", o->profile, "component set: runtime, devel or full")
        ->capture_default_str();
    sub->add_option("--platform",
                    o->platforms,
                    "linux-x86_64 or linux-sbsa, repeatable (default: this machine)");
    sub->add_option("-j,--jobs", o->jobs, "parallel downloads")->capture_default_str();
    sub->add_flag("--dry-run", o->dry_run, "say what would be downloaded; download nothing");
    sub->callback([o, &ctx] { ctx.exit_code = run_mirror(*o, ctx); });
}

} // namespace cudaenv::cli
