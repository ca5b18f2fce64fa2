// cudaenv __generate-manifests --reference DIR [--out DIR]  (hidden; maintainers only)
#include "../context.hpp"
#include "core/manifest/generate.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct GenerateOptions {
    std::string reference;
    std::string out;
};

int run_generate(const GenerateOptions& o, Context& ctx) {
    std::string out = !o.out.empty()                    ? o.out
                      : !ctx.manifests_dir.empty()      ? ctx.manifests_dir
                      : ctx.getenv("CUDAENV_MANIFESTS") ? *ctx.getenv("CUDAENV_MANIFESTS")
                                                        : ctx.manifests_floor().string();
    auto report = manifest::generate_manifests(o.reference, out);
    if (!report) {
        return report_error(ctx, report.error(), "__generate-manifests");
    }
    const auto& r = *report;
    if (ctx.json) {
        emit_json(ctx,
                  {{"command", "__generate-manifests"},
                   {"ok", true},
                   {"out", out},
                   {"cuda_redist", r.cuda_redist},
                   {"cuda_runfile", r.cuda_runfile},
                   {"cudnn", r.cudnn},
                   {"cudnn_in_part", r.cudnn_in_part},
                   {"framework_rows", r.framework_rows},
                   {"gpus", r.gpus},
                   {"registry_checked", r.registry_checked},
                   {"advisories", r.advisories},
                   {"cublas_patches", r.cublas_patches},
                   {"announced", r.announced},
                   {"driver_indexes", r.driver_indexes},
                   {"frameworks", [&] {
                        nlohmann::json f = nlohmann::json::object();
                        for (const auto& [name, c] : r.frameworks) {
                            f[name] = {{"rows", c.rows},
                                       {"variants", c.variants},
                                       {"values", c.values},
                                       {"primary", c.primary}};
                        }
                        return f;
                    }()}});
    } else {
        *ctx.out << "wrote " << out << ": " << r.cuda_redist << " CUDA releases with archives, "
                 << r.cuda_runfile << " runfile-only, " << r.cudnn << " cuDNN releases ("
                 << r.cudnn_in_part << " known in part), " << r.framework_rows
                 << " TensorFlow rows, " << r.gpus << " GPUs; " << r.registry_checked
                 << " redistrib files matched the pinned registry; " << r.index_pinned
                 << " releases pinned by their index alone; " << r.cublas_patches
                 << " cuBLAS patches; " << r.advisories << " advisories; " << r.announced
                 << " CUDA releases announced (index not known); " << r.driver_indexes
                 << " driver indexes with cuda_compat\n";
        for (const auto& [name, c] : r.frameworks) {
            *ctx.out << "  " << name << ": " << c.rows << " rows, " << c.variants
                     << " CUDA builds, " << c.values << " values (" << c.primary
                     << " from primary sources)\n";
        }
    }
    for (const auto& u : r.unplaced) {
        *ctx.err << "cudaenv: warning: component " << u
                 << " is in no profile: only --profile full installs it; name it in "
                    "profiles.json (a profile's components, or full's exclude)\n";
    }
    return 0;
}

} // namespace

void setup_generate_manifests(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto opts = std::make_shared<GenerateOptions>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->group(""); // hidden from --help
    sub->add_option("--reference", opts->reference, "NVIDIA redistrib files and facts.json")
        ->required();
    sub->add_option("--out", opts->out, "output directory (default: the manifests in use)");
    sub->callback([opts, &ctx] { ctx.exit_code = run_generate(*opts, ctx); });
}

} // namespace cudaenv::cli
