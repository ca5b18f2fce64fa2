// cudaenv install [SPEC...] | __check-libs DIR FILE...
#include "core/install/install.hpp"

#include "../context.hpp"
#include "../fetch_resolve.hpp"
#include "../machine_check.hpp"
#include "../progress.hpp"
#include "../spec_options.hpp"
#include "common.hpp"
#include "core/activate/project.hpp"
#include "core/fetch/download.hpp"
#include "core/fs.hpp"
#include "core/manifest/codec.hpp"
#include "core/manifest/indexes.hpp"
#include "core/manifest/nvidia_redist.hpp"
#include "core/resolve/resolve.hpp"
#include "core/sha256.hpp"
#include "core/sys/dynlib.hpp"
#include "core/sys/process.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <set>

namespace cudaenv::cli {

namespace {

struct InstallCli {
    std::vector<std::string> specs;
    SpecOptions spec_options;
    unsigned jobs = 4;
    bool dry_run = false;
    bool allow_unpinned = false;
    bool match = false; ///< --match: what the active Python environment's framework needs
    std::vector<std::string> archives; ///< --archive FILE: artifacts known only by hash
};

/// Puts a file given with --archive where the download would have put it, by its hash (copied
/// and renamed into place: the file stays the user's); the install verifies it again there.
Status stage_local_archive(const std::filesystem::path& file,
                           const std::string& sha256,
                           const std::filesystem::path& downloads) {
    namespace fs = std::filesystem;
    std::error_code ec;
    CUDAENV_TRY(make_dirs(downloads));
    fs::path dest = downloads / sha256;
    fs::path tmp = downloads / (sha256 + ".local");
    fs::remove(tmp, ec);
    if (!fs::copy_file(file, tmp, ec) || ec) {
        return Error(ErrorCode::filesystem,
                     "cannot copy '" + file.string() + "' to '" + tmp.string() +
                         "': " + ec.message());
    }
    fs::rename(tmp, dest, ec);
    if (ec) {
        fs::remove(tmp, ec);
        return Error(ErrorCode::filesystem,
                     "cannot place '" + dest.string() + "': " + ec.message());
    }
    return Ok{};
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
    ResolveOptions ro = *ro_result;
    std::map<std::string, std::string> local; // sha256 -> the file given with --archive
    for (const auto& file : o.archives) {
        auto h = fetch::hash_file(file);
        if (!h) {
            return report_error(ctx, h.error(), "install");
        }
        local[h->sha256] = file;
        ro.local_archives.insert(h->sha256);
    }
    std::set<std::string> used;
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
    auto specs = o.specs;
    std::optional<activate::EnvironmentMatch> match;
    if (o.match) {
        if (!specs.empty()) {
            return report_error(
                ctx,
                Error(ErrorCode::usage, "install --match chooses what to install: give no SPEC"),
                "install");
        }
        auto m = activate::match_environment(**catalog, root, ctx.env);
        if (!m) {
            return report_error(ctx, m.error(), "install");
        }
        match = std::move(*m);
        if (!ctx.json) {
            *ctx.err << "cudaenv: " << match->found << " (" << match->found_by
                     << ") was built for CUDA " << match->cuda.str() << " (" << match->cuda_from
                     << ")\n";
        }
        // an installed version that matches is used as it is, otherwise the match is installed
        specs.push_back(match->installed ? *match->installed : match->spec);
    }
    if (specs.empty()) {
        // No SPEC: what the project asks for, as `rustup install` and `nvm install` do.
        auto asked = activate::project_request(**catalog, ctx.cwd, ctx.env);
        if (!asked) {
            return report_error(ctx, asked.error(), "install");
        }
        if (!*asked) {
            return report_error(
                ctx,
                Error(ErrorCode::usage,
                      "install needs a SPEC: no .cuda-version here or above, and no TensorFlow "
                      "pinned in this project's files or Python environment")
                    .with_hint("cudaenv install tf-2.13; cudaenv list --available"),
                "install");
        }
        if (!ctx.json) {
            *ctx.err << "cudaenv: installing " << (*asked)->spec << " (from " << (*asked)->source
                     << ")\n";
        }
        specs.push_back((*asked)->spec);
    }
    nlohmann::json versions = nlohmann::json::array();
    bool changed = false;
    // Every SPEC is resolved, and every --archive file matched, before anything is installed.
    std::vector<ResolvedSpec> todo;
    for (const auto& text : specs) {
        auto resolved =
            resolve_with_indexes(ctx, *trusted, names, text, ro, o.allow_unpinned, "install");
        if (!resolved) {
            return report_error(ctx, resolved.error(), "install");
        }
        for (const auto& a : resolved->res.archives) {
            if (local.count(a.artifact.sha256)) {
                used.insert(a.artifact.sha256);
            }
        }
        todo.push_back(std::move(*resolved));
    }
    for (const auto& [sha, file] : local) {
        if (!used.count(sha)) {
            return report_error(
                ctx,
                Error(ErrorCode::usage,
                      "--archive '" + file + "' (sha256 " + sha.substr(0, 16) +
                          "...) is none of the archives to install")
                    .with_hint("cudaenv resolve SPEC --json lists each archive's sha256"),
                "install");
        }
    }
    for (const auto& resolved : todo) {
        const Resolution* res = &resolved.res;
        if (!o.dry_run || !ctx.json) {
            for (const auto& w : machine_check(ctx, *res->cuda).warnings) {
                *ctx.err << "cudaenv: warning: " << w << "\n";
            }
        }
        for (const auto& a : res->archives) {
            auto it = local.find(a.artifact.sha256);
            if (it != local.end() && !o.dry_run) {
                if (auto st = stage_local_archive(it->second, it->first, root.downloads()); !st) {
                    return report_error(ctx, st.error(), "install");
                }
            }
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
    if (match && !o.dry_run) {
        // pin the project to what was installed (or found installed), as `use --match` would
        if (!match->installed) {
            match->installed = versions.back().value("version", std::string());
            match->why.back() = match->found + " was built for CUDA " + match->cuda.str() + " (" +
                                match->cuda_from + "): installed " + match->spec + " as " +
                                *match->installed;
        }
        auto written = activate::write_project_pin(root, ctx.cwd, *match->installed);
        if (!written) {
            return report_error(ctx, written.error(), "install");
        }
        print_match(ctx, *match, *written, "install");
        return 0;
    }
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", "install"},
                   {"ok", true},
                   {"changed", changed},
                   {"dry_run", o.dry_run},
                   {"versions", versions},
                   // this process only (VmHWM); the dlopen verification child is not included
                   {"stats", {{"peak_rss_kib", sys::peak_rss_kib()}}}});
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
        "  cudaenv install                          what this project's .cuda-version asks for\n"
        "  cudaenv install tf-2.13                  CUDA 11.8 + cuDNN 8.6, verified, in lib64\n"
        "  cudaenv install 12.4+cudnn-9.1 --profile devel\n"
        "  cudaenv install tf-2.15 --dry-run        show the plan, write nothing\n"
        "  cudaenv install torch-2.5+cu121          a PyTorch build's CUDA and cuDNN\n"
        "  cudaenv install --match                  what this Python environment's torch/jax "
        "needs\n"
        "  cudaenv install cuda-13.4.0 --allow-unpinned   a release newer than the manifests\n"
        "  cudaenv install 10.1+cudnn-7.6.4 --archive cudnn-10.1-linux-x64-v7.6.4.38.tgz\n");
    sub->add_option("spec",
                    o->specs,
                    "what to install (see `cudaenv resolve`); default: what the project's "
                    ".cuda-version or TensorFlow pin asks for");
    add_spec_options(*sub, o->spec_options);
    sub->add_option("-j,--jobs", o->jobs, "parallel downloads")->capture_default_str();
    sub->add_flag("--dry-run", o->dry_run, "show the plan; download and write nothing");
    sub->add_flag("--match",
                  o->match,
                  "install the CUDA that matches the torch, jax or tensorflow in the active "
                  "Python environment, and pin this project to it");
    sub->add_flag("--allow-unpinned",
                  o->allow_unpinned,
                  "trust NVIDIA's index for a release the manifests do not pin");
    sub->add_option("--archive",
                    o->archives,
                    "a file you downloaded yourself (a cuDNN NVIDIA serves only behind a login): "
                    "used for the archive whose pinned sha256 it has")
        ->check(CLI::ExistingFile);
    sub->callback([o, &ctx] { ctx.exit_code = run_install(*o, ctx); });
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
