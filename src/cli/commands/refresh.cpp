// cudaenv __refresh --reference DIR [--nvidia DIR] [--psirt DIR] --out DIR  (hidden; maintainers
// only, docs/refresh.md): NVIDIA's newer indexes and bulletins into a new reference and manifests
// ready to sign. Parses, calls ops::refresh_reference, prints.
#include "core/ops/refresh.hpp"

#include "../context.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct RefreshCli {
    std::string reference, nvidia, psirt, psirt_commit, out, previous;
};

std::string next_command(const ops::RefreshReport& r) {
    return "cudaenv __bundle make --from " + r.manifests +
           " --key KEY.secret --out manifests.bundle --previous " + r.previous;
}

int run_refresh(const RefreshCli& o, Context& ctx) {
    ops::RefreshRequest req;
    req.reference = o.reference;
    req.inputs = {o.nvidia, o.psirt, o.psirt_commit};
    req.out = o.out;
    req.previous = o.previous;
    auto got = ops::refresh_reference(ctx, req);
    if (!got) {
        return report_error(ctx, got.error(), "__refresh");
    }
    const auto& r = *got;
    if (ctx.json) {
        nlohmann::json added = nlohmann::json::array();
        for (const auto& a : r.added) {
            added.push_back(
                {{"kind", a.kind_text()}, {"what", a.what}, {"input", a.input}, {"file", a.file}});
        }
        nlohmann::json changes = nlohmann::json::array();
        for (const auto& c : r.changes) {
            changes.push_back(
                {{"kind", c.kind_text()}, {"subject", c.subject}, {"detail", c.detail}});
        }
        emit_json(ctx,
                  {{"command", "__refresh"},
                   {"ok", true},
                   {"added", added},
                   {"bulletins_read", r.bulletins_seen},
                   {"bulletins_skipped", r.bulletins_skipped},
                   {"previous", {{"manifests", r.previous}, {"serial", r.previous_serial}}},
                   {"changes", changes},
                   {"out", r.out.empty() ? nlohmann::json() : nlohmann::json(r.out)},
                   {"serial", r.serial},
                   {"next", r.out.empty() ? nlohmann::json() : nlohmann::json(next_command(r))}});
        return 0;
    }
    auto& os = *ctx.out;
    if (r.added.empty()) {
        os << "nothing new in the inputs (" << r.bulletins_seen << " bulletins read, "
           << r.bulletins_skipped
           << " not cudaenv's or older than the reference): the reference is up to date; nothing "
              "written\n";
        return 0;
    }
    os << "new in the inputs (" << r.bulletins_seen << " bulletins read, " << r.bulletins_skipped
       << " not cudaenv's or older than the reference):\n";
    for (const auto& a : r.added) {
        std::string kind = a.kind_text();
        os << "  " << kind << std::string(kind.size() < 17 ? 17 - kind.size() : 1, ' ') << a.what
           << " (" << a.input << " -> " << a.file << ")\n";
    }
    os << "changes against the manifests in use (" << r.previous << ", serial " << r.previous_serial
       << "):\n";
    for (const auto& c : r.changes) {
        std::string kind = c.kind_text();
        os << "  " << kind << std::string(kind.size() < 9 ? 9 - kind.size() : 1, ' ') << c.subject
           << (c.detail.empty() ? "" : ": " + c.detail) << "\n";
    }
    if (r.changes.empty()) {
        os << "  (no release, verdict, advisory or pin changes)\n";
    }
    os << "wrote " << r.out << ": reference/ (the new reference data) and manifests/ (serial "
       << r.serial << ")\n"
       << "next: " << next_command(r) << "\n";
    return 0;
}

} // namespace

void setup_refresh(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto o = std::make_shared<RefreshCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->group(""); // hidden from --help
    sub->add_option("--reference", o->reference, "the reference data (data/reference)")->required();
    sub->add_option("--nvidia",
                    o->nvidia,
                    "a folder laid out like developer.download.nvidia.com/compute "
                    "(cuda|cudnn|cublas/redist/redistrib_<v>.json)");
    sub->add_option(
        "--psirt", o->psirt, "a copy of NVIDIA/product-security (<year>/<id>/<id>.json)");
    sub->add_option(
        "--psirt-commit", o->psirt_commit, "the commit that copy is of (for the source)");
    sub->add_option("--out", o->out, "the folder to make: reference/ and manifests/")->required();
    sub->add_option(
        "--previous", o->previous, "the manifests to compare with (default: the manifests in use)");
    sub->callback([o, &ctx] { ctx.exit_code = run_refresh(*o, ctx); });
}

} // namespace cudaenv::cli
