// cudaenv resolve SPEC [--cuda V] [--cudnn V] [--profile P] [--platform P]
#include "core/resolve/resolve.hpp"

#include "../context.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iomanip>
#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

struct ResolveOptionsCli {
    std::string spec;
    std::string cuda;
    std::string cudnn;
    std::string profile = "runtime";
    std::string platform;
};

nlohmann::json artifact_json(const ResolvedArchive& a) {
    nlohmann::json j{
        {"component", a.component}, {"version", a.version.str()}, {"sha256", a.artifact.sha256}};
    if (!a.artifact.path.empty()) {
        j["path"] = a.artifact.path;
    }
    if (!a.artifact.url.empty()) {
        j["url"] = a.artifact.url;
    }
    j["size"] = a.artifact.size ? nlohmann::json(*a.artifact.size) : nlohmann::json();
    return j;
}

nlohmann::json resolution_json(const Resolution& r) {
    using nlohmann::json;
    json j{{"command", "resolve"}, {"ok", true}, {"spec", r.spec}, {"version", r.version_name()}};
    if (r.framework) {
        const auto& fr = *r.framework_release;
        j["framework"] = json{{"name", r.framework->name},
                              {"requested", r.framework_version->str()},
                              {"series", fr.series.str()},
                              {"tested", fr.tested.str()},
                              {"cuda", fr.cuda.str()},
                              {"cudnn", fr.cudnn.str()},
                              {"python", fr.python},
                              {"compiler", fr.compiler}};
    }
    const auto& c = *r.cuda;
    json cuda{{"version", c.version.str()},
              {"source", c.source == manifest::CudaSource::redist ? "redist" : "runfile"},
              {"release_date", c.release_date}};
    if (c.nvcc_version) {
        cuda["nvcc_version"] = c.nvcc_version->str();
    }
    j["cuda"] = cuda;
    j["cudnn"] = r.cudnn ? json{{"version", r.cudnn->version.str()},
                                {"major", r.cudnn->major},
                                {"cuda_build", r.cudnn_build->cuda}}
                         : json();
    json driver = json::object();
    if (c.driver_min) {
        driver["min"] = c.driver_min->str();
        driver["min_source"] = c.driver_min_source;
    }
    driver["compat_min"] = c.driver_compat_min ? json(c.driver_compat_min->str()) : json();
    j["driver"] = driver;
    j["sm"] = c.sm ? json{{"min", c.sm->min}, {"max", c.sm->max}, {"archs", c.sm->archs}} : json();
    j["host_compilers"] = json{{"gcc_max", c.gcc_max ? json(c.gcc_max->str()) : json()},
                               {"clang_max", c.clang_max ? json(c.clang_max->str()) : json()}};
    j["profile"] = r.profile;
    j["platform"] = r.platform;
    json archives = json::array();
    for (const auto& a : r.archives) {
        archives.push_back(artifact_json(a));
    }
    j["archives"] = archives;
    j["total_size"] = r.total_size;
    j["unknown_sizes"] = r.unknown_sizes;
    j["installable"] = r.installable();
    j["not_installable"] = r.not_installable;
    j["notes"] = r.notes;
    return j;
}

void print_text(std::ostream& o, const Resolution& r) {
    const auto& c = *r.cuda;
    auto row = [&](const char* label, const std::string& value) {
        o << "  " << std::left << std::setw(9) << label << value << "\n";
    };
    if (r.framework) {
        const auto& fr = *r.framework_release;
        o << r.framework->name << " " << r.framework_version->str() << " (tested build "
          << fr.tested.str();
        if (!fr.python.empty()) {
            o << ", Python " << fr.python;
        }
        if (!fr.compiler.empty()) {
            o << ", " << fr.compiler;
        }
        o << ")\n";
    } else {
        o << r.spec << "\n";
    }
    std::string cuda_line = c.version.str();
    if (c.nvcc_version) {
        cuda_line += "  (nvcc " + c.nvcc_version->str();
        cuda_line += c.release_date.empty() ? ")" : ", released " + c.release_date + ")";
    }
    row("CUDA", cuda_line);
    if (r.cudnn) {
        row("cuDNN", r.cudnn->version.str() + "  (build for CUDA " + r.cudnn_build->cuda + ")");
    } else {
        row("cuDNN", "none (add one: " + c.version.truncated(2).str() + "+cudnn-9 or --cudnn)");
    }
    row("version", r.version_name());
    std::string driver;
    if (c.driver_min) {
        driver = ">= " + c.driver_min->str() + " for full support";
    }
    if (c.driver_compat_min) {
        driver += (driver.empty() ? "" : "; ") + std::string(">= ") + c.driver_compat_min->str() +
                  " with minor-version compatibility";
    }
    row("driver", driver.empty() ? "unknown" : driver);
    if (c.sm) {
        row("GPUs", "sm_" + std::to_string(c.sm->min) + " to sm_" + std::to_string(c.sm->max));
    }
    if (c.gcc_max || c.clang_max) {
        std::string cc;
        if (c.gcc_max) {
            cc += "gcc <= " + c.gcc_max->str();
        }
        if (c.clang_max) {
            cc += (cc.empty() ? "" : ", ") + std::string("clang <= ") + c.clang_max->str();
        }
        row("host cc", cc);
    }
    std::string total = human_size(r.total_size);
    if (r.unknown_sizes && r.total_size == 0) {
        total = "size unknown";
    } else if (r.unknown_sizes) {
        total += " + " + std::to_string(r.unknown_sizes) + " of unknown size";
    }
    if (!r.archives.empty()) {
        row("archives",
            r.profile + " profile, " + r.platform + ": " + std::to_string(r.archives.size()) +
                (r.archives.size() == 1 ? " archive, " : " archives, ") + total);
        std::size_t w = 0;
        for (const auto& a : r.archives) {
            w = std::max(w, a.component.size());
        }
        for (const auto& a : r.archives) {
            o << "    " << std::left << std::setw(static_cast<int>(w) + 2) << a.component
              << std::setw(14) << a.version.str() << std::right << std::setw(10)
              << (a.artifact.size ? human_size(*a.artifact.size) : std::string("?")) << "\n";
        }
        row("total", total + " to download");
    }
    for (const auto& n : r.notes) {
        o << "note: " << n << "\n";
    }
    for (const auto& n : r.not_installable) {
        o << "not installable yet: " << n << "\n";
    }
}

int run_resolve(const ResolveOptionsCli& o, Context& ctx) {
    auto catalog = ctx.catalog();
    if (!catalog) {
        return report_error(ctx, catalog.error(), "resolve");
    }
    const auto& cat = **catalog;
    std::vector<std::string> names;
    for (const auto& f : cat.frameworks) {
        names.push_back(f.name);
        names.insert(names.end(), f.aliases.begin(), f.aliases.end());
    }
    auto spec = parse_spec(o.spec, names);
    if (!spec) {
        return report_error(ctx, spec.error(), "resolve");
    }
    ResolveOptions ro;
    ro.profile = o.profile;
    ro.platform = o.platform.empty() ? host_platform() : o.platform;
    for (auto [text, out, what] :
         {std::tuple{&o.cuda, &ro.cuda, "--cuda"}, std::tuple{&o.cudnn, &ro.cudnn, "--cudnn"}}) {
        if (text->empty()) {
            continue;
        }
        auto v = Version::parse(*text);
        if (!v) {
            return report_error(
                ctx,
                Error(ErrorCode::usage, std::string(what) + ": " + v.error().message),
                "resolve");
        }
        *out = *v;
    }
    bool known_platform = false;
    for (auto p : manifest::k_platforms) {
        known_platform = known_platform || p == ro.platform;
    }
    if (!known_platform) {
        return report_error(ctx,
                            Error(ErrorCode::usage, "unknown platform '" + ro.platform + "'")
                                .with_hint("platforms: linux-x86_64, linux-sbsa"),
                            "resolve");
    }
    auto res = resolve(cat, *spec, ro);
    if (!res) {
        return report_error(
            ctx, Error(res.error()).with_context("resolving '" + o.spec + "'"), "resolve");
    }
    if (ctx.json) {
        emit_json(ctx, resolution_json(*res));
    } else {
        print_text(*ctx.out, *res);
    }
    return 0;
}

} // namespace

void setup_resolve(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto opts = std::make_shared<ResolveOptionsCli>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer("Examples:\n"
                "  cudaenv resolve tf-2.13                 TensorFlow 2.13's CUDA + cuDNN\n"
                "  cudaenv resolve 12.4                    newest CUDA 12.4.x\n"
                "  cudaenv resolve 12.4+cudnn-9.1          an explicit pair\n"
                "  cudaenv resolve cudnn-8.9 --cuda 12.2   a cuDNN for a CUDA\n"
                "  cudaenv resolve tf-2.15 --profile devel --json\n");
    sub->add_option("spec", opts->spec, "tf-2.13, 11.8, cuda-11.8, cudnn-8.6 or 11.8+cudnn-8.6")
        ->required();
    sub->add_option("--cuda", opts->cuda, "CUDA version to use (checked against the framework)");
    sub->add_option("--cudnn", opts->cudnn, "cuDNN version to use");
    sub->add_option("--profile", opts->profile, "component set: runtime, devel or full")
        ->capture_default_str();
    sub->add_option(
        "--platform", opts->platform, "linux-x86_64 or linux-sbsa (default: this machine)");
    sub->callback([opts, &ctx] { ctx.exit_code = run_resolve(*opts, ctx); });
}

} // namespace cudaenv::cli
