// cudaenv mirror SPEC... --to DIR [--platform P]... | mirror --verify DIR
#include "core/ops/mirror.hpp"

#include "../context.hpp"
#include "core/sys/dynlib.hpp"
#include "core/sys/process.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <mutex>
#include <ostream>

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
    bool compat = false;
    unsigned jobs = 4;
    bool dry_run = false;
    std::string recompress;
    std::vector<std::string> sign_keys;
    int level = mirror::k_default_zstd_level;
};

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

nlohmann::json recompressed_json(const ops::MirrorReport& report) {
    if (!report.recompressed) {
        return nullptr;
    }
    const auto& r = *report.recompressed;
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& a : r.archives) {
        arr.push_back({{"original",
                        {{"path", a.original_path},
                         {"sha256", a.original_sha256},
                         {"size", a.original_size}}},
                       {"path", a.path},
                       {"sha256", a.sha256},
                       {"size", a.size}});
    }
    return {{"codec", "zstd"},
            {"index", r.index_path},
            {"made", r.made},
            {"original_bytes", r.original_bytes},
            {"recompressed_bytes", r.recompressed_bytes},
            {"archives", arr}};
}

nlohmann::json mirror_json(const ops::MirrorReport& report, const MirrorCli& o) {
    const auto& out = report.outcome;
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& fo : out.files) {
        arr.push_back({{"path", fo.file.path},
                       {"what", fo.file.what},
                       {"sha256", fo.file.sha256},
                       {"size", fo.file.size ? nlohmann::json(*fo.file.size) : nlohmann::json()},
                       {"present", fo.present},
                       {"downloaded_bytes", fo.bytes}});
    }
    return {
        {"command", "mirror"},
        {"ok", true},
        {"changed", out.changed},
        {"dry_run", o.dry_run},
        {"to", o.to},
        {"downloaded_bytes", out.downloaded_bytes},
        {"files", arr},
        {"not_mirrored", report.not_mirrored},
        {"channel", report.channel_file ? nlohmann::json(*report.channel_file) : nlohmann::json()},
        {"recompressed", recompressed_json(report)},
        {"stats", {{"peak_rss_kib", sys::peak_rss_kib()}}}};
}

void print_mirror(Context& ctx, const ops::MirrorReport& report, const MirrorCli& o) {
    const auto& out = report.outcome;
    std::uint64_t total = 0;
    for (const auto& fo : out.files) {
        total += fo.file.size.value_or(0);
    }
    if (!report.channel_note.empty()) {
        *ctx.err << "cudaenv: note: " << report.channel_note << "\n";
    }
    for (const auto& url : report.not_mirrored) {
        *ctx.err << "cudaenv: warning: not mirrored (the manifests give it on another host): "
                 << url << "\n";
    }
    if (o.dry_run) {
        for (const auto& fo : out.files) {
            *ctx.out << (fo.present ? "  have " : "  get  ") << fo.file.path << "  "
                     << (fo.file.size ? human_size(*fo.file.size) : std::string("?")) << "\n";
        }
        *ctx.out << (out.changed ? "would download into " : "nothing to download into ") << o.to
                 << "\n";
    } else if (out.changed) {
        *ctx.out << "mirrored " << out.files.size() << " files (" << human_size(total) << ", "
                 << human_size(out.downloaded_bytes) << " downloaded now) in " << o.to << "\n";
    } else {
        *ctx.out << o.to << " already holds all " << out.files.size() << " files ("
                 << human_size(total) << "); nothing downloaded\n";
    }
    if (report.recompressed) {
        const auto& r = *report.recompressed;
        *ctx.out << "recompressed " << r.archives.size() << " archives to zstd ("
                 << human_size(r.original_bytes) << " as xz, " << human_size(r.recompressed_bytes)
                 << " as zstd; " << r.made << " made now), index signed: " << o.to << "/"
                 << r.index_path << "\n";
    }
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
    ops::MirrorRequest request{o.specs,
                               o.to,
                               {o.cuda, o.cudnn, o.profile, "", o.compat, {}},
                               o.platforms,
                               o.jobs,
                               o.dry_run,
                               CUDAENV_VERSION_STRING,
                               o.recompress,
                               o.sign_keys,
                               o.level};
    std::mutex m;
    bool quiet = ctx.json || o.dry_run;
    auto report = ops::mirror_specs(
        ctx,
        request,
        [&](const mirror::Event& e) {
            if (quiet || e.kind != mirror::Event::Kind::done) {
                return;
            }
            std::lock_guard<std::mutex> g(m);
            *ctx.err << "cudaenv: " << e.file->what << ": " << human_size(e.bytes)
                     << " downloaded and verified\n";
        },
        [&](const mirror::RecompressedArchive& a) {
            if (!quiet) {
                *ctx.err << "cudaenv: recompressing " << a.original_path << " ("
                         << human_size(a.original_size) << ")\n";
            }
        });
    if (!report) {
        return report_error(ctx, report.error(), "mirror");
    }
    if (ctx.json) {
        emit_json(ctx, mirror_json(*report, o));
    } else {
        print_mirror(ctx, *report, o);
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
        "  cudaenv mirror 12.4 --to /srv/nvidia --recompress zstd --sign-key site.secret\n"
        "                                     zstd copies and a signed index: installs at zstd "
        "speed\n"
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
                    "linux-x86_64, linux-sbsa or linux-aarch64 (Jetson), repeatable (default: this "
                    "machine's for each release)");
    sub->add_flag("--compat",
                  o->compat,
                  "NVIDIA's forward-compatibility libraries (cuda_compat) too (docs/compat.md)");
    sub->add_option("--recompress",
                    o->recompress,
                    "also keep a zstd copy of every archive, with an index signed by --sign-key "
                    "(docs/fleet.md)")
        ->option_text("zstd");
    sub->add_option("--sign-key", o->sign_keys, "the site's secret key file, repeatable")
        ->option_text("FILE");
    sub->add_option("--level", o->level, "zstd level for --recompress (1 to 19)")
        ->capture_default_str();
    sub->add_option("-j,--jobs", o->jobs, "parallel downloads")->capture_default_str();
    sub->add_flag("--dry-run", o->dry_run, "say what would be downloaded; download nothing");
    sub->callback([o, &ctx] { ctx.exit_code = run_mirror(*o, ctx); });
}

} // namespace cudaenv::cli
