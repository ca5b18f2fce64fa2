// cudaenv install SPEC... | uninstall VERSION | __check-libs DIR FILE...
#include "core/install/install.hpp"

#include "../context.hpp"
#include "../progress.hpp"
#include "../spec_options.hpp"
#include "core/manifest/codec.hpp"
#include "core/manifest/indexes.hpp"
#include "core/manifest/nvidia_redist.hpp"
#include "core/resolve/resolve.hpp"
#include "core/sha256.hpp"
#include "core/sys/dynlib.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct InstallCli {
    std::vector<std::string> specs;
    SpecOptions spec_options;
    unsigned jobs = 4;
    bool dry_run = false;
    bool allow_unpinned = false;
};

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

nlohmann::json outcome_json(const install::Outcome& o) {
    nlohmann::json archives = nlohmann::json::array();
    for (const auto& a : o.archives) {
        archives.push_back({{"component", a.component},
                            {"version", a.version},
                            {"url", a.url},
                            {"size", a.size ? nlohmann::json(*a.size) : nlohmann::json()},
                            {"store", a.store_entry},
                            {"present", a.present}});
    }
    return {{"version", o.version},
            {"prefix", o.prefix.string()},
            {"changed", o.changed},
            {"downloaded_bytes", o.downloaded_bytes},
            {"archives", archives}};
}

int run_install(const InstallCli& o, Context& ctx) {
    // the libraries an install uses, loaded here on the main thread (a broken copy on
    // LD_LIBRARY_PATH is this one-line error, never an abort in a worker)
    if (auto libs = sys::load(sys::k_curl | sys::k_archive | sys::k_crypto); !libs) {
        return report_error(ctx, libs.error(), "install");
    }
    auto catalog = ctx.catalog();
    if (!catalog) {
        return report_error(ctx, catalog.error(), "install");
    }
    auto names = framework_names(**catalog);
    auto ro_result = to_resolve_options(o.spec_options);
    if (!ro_result) {
        return report_error(ctx, ro_result.error(), "install");
    }
    const ResolveOptions& ro = *ro_result;
    install::Options io;
    io.base_url = ctx.base_url();
    io.policy = ctx.download_policy();
    io.jobs = std::max(1u, o.jobs);
    io.dry_run = o.dry_run;
    io.lock_timeout = ctx.lock_timeout();
    if (auto v = ctx.env_number_value("CUDAENV_EXTRACT_MAX_BYTES")) {
        io.limits.max_total_bytes = *v;
        io.limits.max_entry_bytes = std::min(io.limits.max_entry_bytes, io.limits.max_total_bytes);
    }
    if (auto v = ctx.env_number_value("CUDAENV_EXTRACT_MAX_ENTRIES")) {
        io.limits.max_entries = *v;
    }
    auto exe = ctx.exe_path;
    io.check_libraries = [exe](const std::filesystem::path& dir,
                               const std::vector<std::string>& files) {
        return install::check_libraries_in_child(exe, dir, files);
    };
    auto root = ctx.root();
    // The manifests plus the indexes this root trusted before (--allow-unpinned), read once.
    auto trusted = manifest::with_trusted(**catalog, root.dir);
    if (!trusted) {
        return report_error(ctx, trusted.error(), "install");
    }
    nlohmann::json versions = nlohmann::json::array();
    bool changed = false;
    for (const auto& text : o.specs) {
        auto spec = parse_spec(text, names);
        if (!spec) {
            return report_error(ctx, spec.error(), "install");
        }
        // Any index this SPEC needs: an index-pinned release (verified against its pin), or
        // with --allow-unpinned a release newer than the manifests -- a CUDA and its cuDNN
        // both, one after the other.
        const manifest::Catalog* cat = &*trusted;
        Result<manifest::Catalog> extended = Error(ErrorCode::internal, "not extended");
        auto res = resolve(*cat, *spec, ro);
        for (int round = 0; round < 4; ++round) {
            Result<manifest::Catalog> more = Error(ErrorCode::internal, "");
            if (const auto* p = pinned_for(*cat, *spec)) {
                more = with_pinned(ctx, *cat, *p);
            } else if (res || res.error().code != ErrorCode::not_found) {
                break;
            } else if (auto u = unpinned_candidate(*cat, *spec); u.kind != Unpinned::Kind::none) {
                if (!o.allow_unpinned) {
                    return report_error(
                        ctx,
                        Error(res.error())
                            .with_hint("to trust NVIDIA's index for a release newer than the "
                                       "manifests: cudaenv install " +
                                       text + " --allow-unpinned"),
                        "install");
                }
                more = with_unpinned(ctx, *cat, u);
            } else {
                break;
            }
            if (!more) {
                return report_error(ctx, more.error(), "install");
            }
            extended = std::move(more);
            cat = &*extended;
            res = resolve(*cat, *spec, ro);
        }
        if (!res) {
            return report_error(
                ctx, Error(res.error()).with_context("resolving '" + text + "'"), "install");
        }
        ProgressReporter progress(*ctx.err, ctx.stderr_tty, ctx.json || o.dry_run);
        auto out = install::install(
            root, *res, io, [&](const install::Event& e) { progress.on_event(e); });
        progress.finish();
        if (!out) {
            return report_error(ctx, out.error(), "install");
        }
        changed = changed || out->changed;
        versions.push_back(outcome_json(*out));
        if (!ctx.json) {
            if (o.dry_run) {
                *ctx.out << (out->changed ? "would install " : "already installed: ")
                         << out->version << "\n";
                for (const auto& a : out->archives) {
                    *ctx.out << "  " << (a.present ? "have " : "get  ") << a.component << " "
                             << a.version << "  "
                             << (a.size ? human_size(*a.size) : std::string("?")) << "  " << a.url
                             << "\n";
                }
            } else if (out->changed) {
                *ctx.out << "installed " << out->version << " in " << out->prefix.string() << "\n";
            } else {
                *ctx.out << out->version << " is already installed\n";
            }
        }
    }
    if (changed && !o.dry_run) {
        rehash_after_change(ctx);
    }
    if (ctx.json) {
        struct rusage self {};

        ::getrusage(RUSAGE_SELF, &self);
        emit_json(ctx,
                  {{"command", "install"},
                   {"ok", true},
                   {"changed", changed},
                   {"dry_run", o.dry_run},
                   {"versions", versions},
                   // this process only; the dlopen verification child is not included
                   {"stats", {{"peak_rss_kib", self.ru_maxrss}}}});
    }
    return 0;
}

struct UninstallCli {
    std::string version;
    bool force = false;
};

int run_uninstall(const UninstallCli& o, Context& ctx) {
    auto out = install::uninstall(ctx.root(), o.version, o.force, ctx.lock_timeout());
    if (!out) {
        return report_error(ctx, out.error(), "uninstall");
    }
    if (out->changed) {
        rehash_after_change(ctx);
    }
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", "uninstall"},
                   {"ok", true},
                   {"changed", out->changed},
                   {"version", o.version},
                   {"store_entries_removed", out->store_entries_removed}});
    } else {
        *ctx.out << (out->changed ? "removed " : "not installed: ") << o.version << "\n";
    }
    return 0;
}

struct CheckLibsCli {
    std::string dir;
    std::vector<std::string> files;
};

} // namespace

void setup_install(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<InstallCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer(
        "Examples:\n"
        "  cudaenv install tf-2.13                  CUDA 11.8 + cuDNN 8.6, verified, in lib64\n"
        "  cudaenv install 12.4+cudnn-9.1 --profile devel\n"
        "  cudaenv install tf-2.15 --dry-run        show the plan, write nothing\n"
        "  cudaenv install cuda-13.4.0 --allow-unpinned   a release newer than the manifests\n");
    sub->add_option("spec", o->specs, "what to install (see `cudaenv resolve`)")->required();
    add_spec_options(*sub, o->spec_options);
    sub->add_option("-j,--jobs", o->jobs, "parallel downloads")->capture_default_str();
    sub->add_flag("--dry-run", o->dry_run, "show the plan; download and write nothing");
    sub->add_flag("--allow-unpinned",
                  o->allow_unpinned,
                  "trust NVIDIA's index for a release the manifests do not pin");
    sub->callback([o, &ctx] { ctx.exit_code = run_install(*o, ctx); });
}

void setup_uninstall(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<UninstallCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Examples:\n  cudaenv uninstall 11.8.0+cudnn8.6.0.163\n");
    sub->add_option("version", o->version, "an installed version (cudaenv list)")->required();
    sub->add_flag("--force", o->force, "remove it even if it is the global version");
    sub->callback([o, &ctx] { ctx.exit_code = run_uninstall(*o, ctx); });
}

void setup_check_libs(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<CheckLibsCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->group("");
    sub->add_option("dir", o->dir)->required();
    sub->add_option("files", o->files);
    sub->callback([o, &ctx] {
        for (const auto& f : install::check_libraries_here(o->dir, o->files)) {
            *ctx.out << f << "\n";
        }
        ctx.exit_code = 0;
    });
}

} // namespace cudaenv::cli
