// cudaenv verify [VERSION...]: every file of each version re-hashed and compared with the store's
// records; each change named with the command that repairs it. Exit 4 when anything changed.
#include "core/ops/verify.hpp"

#include "common.hpp"
#include "core/text.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct VerifyCli {
    std::vector<std::string> specs;
    unsigned jobs = 4;
};

nlohmann::json version_json(const ops::VerifiedVersion& v) {
    nlohmann::json problems = nlohmann::json::array();
    for (const auto& d : v.check.damage) {
        problems.push_back({{"path", d.path},
                            {"kind", install::to_string(d.kind)},
                            {"entry", d.entry},
                            {"problem", d.what},
                            {"in_store", d.in_store}});
    }
    return {{"version", v.check.version},
            {"prefix", v.check.prefix.string()},
            {"upstream", v.check.upstream},
            {"intact", v.check.intact()},
            {"files", v.check.files},
            {"unhashed", v.check.unhashed},
            {"problems", problems},
            {"fix", v.fix.empty() ? nlohmann::json() : nlohmann::json(v.fix)}};
}

void print_version(const ops::VerifiedVersion& v, Context& ctx) {
    auto& o = *ctx.out;
    const auto& c = v.check;
    if (c.intact()) {
        o << c.version << ": intact (" << c.files << " file" << (c.files == 1 ? "" : "s") << ")\n";
    } else {
        o << c.version << ": " << c.damage.size() << " change" << (c.damage.size() == 1 ? "" : "s")
          << " since it was installed\n";
        for (const auto& d : c.damage) {
            o << "  " << install::to_string(d.kind) << "  " << printable(d.path) << ": "
              << printable(d.what)
              << (d.in_store ? " (the store's object: every version sharing it has it too)" : "")
              << "\n";
        }
        o << "  fix: " << v.fix << "\n";
    }
    if (!c.unhashed.empty()) {
        *ctx.err << "cudaenv: warning: " << c.version
                 << ": checked by size, mode and link only: " << join(c.unhashed) << " "
                 << (c.unhashed.size() == 1 ? "was" : "were")
                 << " recorded by an older cudaenv, without each file's sha256; " << v.fix
                 << " records them\n";
    }
}

int run_verify(const VerifyCli& o, Context& ctx) {
    auto report = ops::verify(ctx, {o.specs, std::max(1u, o.jobs)});
    if (!report) {
        return report_error(ctx, report.error(), "verify");
    }
    nlohmann::json versions = nlohmann::json::array();
    std::size_t changed = 0;
    for (const auto& v : report->versions) {
        versions.push_back(version_json(v));
        changed += v.check.intact() ? 0u : 1u;
        if (!ctx.json) {
            print_version(v, ctx);
        }
    }
    if (report->versions.empty() && !ctx.json) {
        *ctx.out << "no version is installed in " << ctx.root().dir.string() << "\n";
    }
    if (report->intact()) {
        if (ctx.json) {
            emit_json(ctx,
                      {{"command", "verify"},
                       {"ok", true},
                       {"versions", versions},
                       {"bytes_hashed", report->bytes_hashed}});
        }
        return 0;
    }
    Error e(ErrorCode::integrity,
            std::to_string(changed) + " of " + std::to_string(report->versions.size()) +
                " version" + (report->versions.size() == 1 ? "" : "s") +
                " changed since installed (listed above)");
    e = std::move(e).with_hint("run the fix given for each: it extracts the damaged store entries "
                               "again and composes the version again");
    if (ctx.json) {
        // one document: the versions and the error
        ctx.json = false;
        int code = report_error(ctx, e, "verify");
        ctx.json = true;
        emit_json(ctx,
                  {{"command", "verify"},
                   {"ok", false},
                   {"versions", versions},
                   {"bytes_hashed", report->bytes_hashed},
                   {"error",
                    {{"code", to_string(e.code)},
                     {"exit_code", code},
                     {"message", e.full_message()},
                     {"hints", e.hints}}}});
        return code;
    }
    return report_error(ctx, e, "verify");
}

} // namespace

void setup_verify(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<VerifyCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Each file is compared with its store entry's record: content (sha256), size,\n"
                "mode, still the store's object; links and added files too. Exit 4 when\n"
                "anything changed, with the command that repairs it.\n"
                "Examples:\n"
                "  cudaenv verify                        every installed version\n"
                "  cudaenv verify 11.8.0+cudnn8.6.0.163\n"
                "  cudaenv verify tf-2.13 --json\n");
    sub->add_option("spec", o->specs, "installed versions or SPECs (default: every one)");
    sub->add_option("-j,--jobs", o->jobs, "files re-hashed at once")->capture_default_str();
    sub->callback([o, &ctx] { ctx.exit_code = run_verify(*o, ctx); });
}

} // namespace cudaenv::cli
