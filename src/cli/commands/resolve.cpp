// cudaenv resolve SPEC [--cuda V] [--cudnn V] [--profile P] [--platform P]
#include "core/resolve/resolve.hpp"

#include "../context.hpp"
#include "../spec_options.hpp"
#include "common.hpp"
#include "core/manifest/driver_indexes.hpp"
#include "core/ops/audit.hpp"
#include "core/ops/resolve_spec.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iomanip>
#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

/// {"driver": "535.104.05"|null, "gpus": [{"pci", "subsystem"}], "warnings": [...]}
nlohmann::json machine_json(const ops::MachineCheck& m) {
    using nlohmann::json;
    json gpus = json::array();
    for (const auto& g : m.gpus) {
        gpus.push_back(
            json{{"pci", g.pci}, {"subsystem", g.subsystem.empty() ? json() : json(g.subsystem)}});
    }
    return json{{"driver", m.driver ? json(m.driver->str()) : json()},
                {"gpus", gpus},
                {"warnings", m.warnings}};
}

struct ResolveOptionsCli {
    std::string spec;
    SpecOptions spec_options;
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

nlohmann::json framework_json(const Resolution& r) {
    using nlohmann::json;
    json out;
    const auto& fr = *r.framework_release;
    out = json{{"name", r.framework->name},
               {"requested", r.framework_version->str()},
               {"series", fr.series.str()},
               {"tested", fr.tested.str()},
               {"cuda", fr.cuda.str()},
               {"cudnn", fr.cudnn.str()},
               {"python", fr.python},
               {"compiler", fr.compiler}};
    if (const auto* v = r.framework_variant) {
        json sources = json::object();
        for (const auto& [what, src] : v->sources) {
            sources[what] = json{{"text", src.text}, {"primary", src.primary}};
        }
        json variant{{"tag", v->tag},
                     {"default", v->tag == fr.default_variant},
                     {"cuda", v->cuda.str()},
                     {"cuda_is_minimum", v->cuda_floor},
                     {"cudnn", v->cudnn ? json(v->cudnn->str()) : json(nullptr)},
                     {"cudnn_below", v->cudnn_below ? json(v->cudnn_below->str()) : json(nullptr)},
                     {"pins", v->pins},
                     {"pins_are", v->cuda_floor ? "minimums" : "exact"},
                     {"sources", sources}};
        out["variant"] = variant;
    }
    return out;
}

/// The "cuda" and "cudnn" members: each release, and how it is known (its manifest, or NVIDIA's
/// index alone).
void releases_json(nlohmann::json& j, const Resolution& r) {
    using nlohmann::json;
    const auto& c = *r.cuda;
    auto index_json = [](const manifest::PinnedIndex& p) {
        return json{{"path", p.index.path}, {"sha256", p.index.sha256}};
    };
    json cuda{{"version", c.version.str()},
              {"source", manifest::source_name(c.source)},
              {"known", r.cuda_index ? "index" : "full"},
              {"release_date", c.release_date},
              {"nvcc_version", c.nvcc_version ? json(c.nvcc_version->str()) : json()}};
    cuda["index"] = r.cuda_index ? index_json(*r.cuda_index) : json();
    j["cuda"] = cuda;
    if (r.cudnn) {
        j["cudnn"] = json{{"version", r.cudnn->version.str()},
                          {"major", r.cudnn->major},
                          {"known", "full"},
                          {"cuda_build", r.cudnn_build->cuda},
                          {"index", json()}};
    } else if (r.cudnn_index) {
        j["cudnn"] = json{{"version", r.cudnn_index->version.str()},
                          {"major", r.cudnn_index->version.major()},
                          {"known", "index"},
                          {"cuda_build", json()},
                          {"index", index_json(*r.cudnn_index)}};
    } else {
        j["cudnn"] = json();
    }
}

nlohmann::json patch_json(const manifest::CublasPatch& p) {
    using nlohmann::json;
    return json{{"label", p.label},
                {"version", p.version.str()},
                {"release_date", p.release_date},
                {"replaces", p.replaces.str()},
                {"replaces_basis", p.replaces_inferred ? "inferred" : "stated"},
                {"replaces_source", p.replaces_source},
                {"fixes", p.fixes.empty() ? json() : json(p.fixes)},
                {"fixes_source", p.fixes.empty() ? json() : json(p.fixes_source)}};
}

/// "cublas": the newest patch NVIDIA published for the release's cuBLAS (null: none), whether
/// the archives take it (--patch), and every applicable one.
nlohmann::json cublas_json(const Resolution& r) {
    using nlohmann::json;
    const auto* own = r.cuda->component("libcublas");
    json all = json::array();
    for (const auto* p : r.cublas_patches) {
        all.push_back(p->label);
    }
    const auto* shown = r.cublas_patch             ? r.cublas_patch
                        : r.cublas_patches.empty() ? nullptr
                                                   : r.cublas_patches.front();
    return json{{"release_version", own ? json(own->version.str()) : json()},
                {"patched", r.cublas_patch != nullptr},
                {"patch", shown ? patch_json(*shown) : json()},
                {"patches", all}};
}

nlohmann::json resolution_json(const Resolution& r) {
    using nlohmann::json;
    json j{{"command", "resolve"}, {"ok", true}, {"spec", r.spec}, {"version", r.version_name()}};
    if (r.framework) {
        j["framework"] = framework_json(r);
    }
    releases_json(j, r);
    const auto& c = *r.cuda;
    j["known"] = r.known();
    // every key always there (null when unknown): one schema for every release
    json driver{{"min", c.driver_min ? json(c.driver_min->str()) : json()},
                {"min_source", c.driver_min ? json(c.driver_min_source) : json()}};
    if (!c.driver_min_basis.empty()) {
        driver["min_basis"] = c.driver_min_basis;
    }
    driver["compat_min"] = c.driver_compat_min ? json(c.driver_compat_min->str()) : json();
    j["driver"] = driver;
    j["sm"] = c.sm ? json{{"min", c.sm->min}, {"max", c.sm->max}, {"archs", c.sm->archs}} : json();
    j["host_compilers"] = json{{"gcc_max", c.gcc_max ? json(c.gcc_max->str()) : json()},
                               {"clang_max", c.clang_max ? json(c.clang_max->str()) : json()}};
    j["profile"] = r.profile;
    j["platform"] = r.platform;
    j["platform_compat"] = r.platform_compat.empty() ? json() : json(r.platform_compat);
    json archives = json::array();
    for (const auto& a : r.archives) {
        archives.push_back(artifact_json(a));
    }
    j["archives"] = archives;
    j["cublas"] = cublas_json(r);
    j["total_size"] = r.total_size;
    j["unknown_sizes"] = r.unknown_sizes;
    j["installable"] = r.installable();
    j["not_installable"] = r.not_installable;
    j["notes"] = r.notes;
    json pins = json::array();
    for (const auto& p : r.pins_not_met) {
        pins.push_back({{"what", p.what},
                        {"pinned", p.pinned},
                        {"pin", p.pin.empty() ? json() : json(p.pin)},
                        {"used", p.used},
                        {"why", p.why}});
    }
    j["pins_not_met"] = pins;
    return j;
}

/// resolve's "  LABEL    value" lines.
struct Rows {
    std::ostream& o;

    void operator()(const char* label, const std::string& value) const {
        o << "  " << std::left << std::setw(9) << label << value << "\n";
    }
};

/// The first line (the framework release, or the SPEC) and the framework build's rows.
void print_framework(const Rows& row, const Resolution& r) {
    std::ostream& o = row.o;
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
        if (const auto* v = r.framework_variant) {
            bool floor = v->cuda_floor;
            std::string line = v->tag + (v->tag == fr.default_variant ? " (the default)" : "") +
                               ": CUDA " + v->cuda.str() + (floor ? " or later" : "");
            if (v->cudnn) {
                line += ", cuDNN " + v->cudnn->str() + (floor ? " or later" : "") +
                        (v->cudnn_below ? " (below " + v->cudnn_below->str() + ")" : "");
            }
            row("build", line);
            std::string pins;
            for (const auto& [name, req] : v->pins) {
                pins += (pins.empty() ? "" : ", ") + name + (req.empty() ? " (any)" : req);
            }
            row(floor ? "requires" : "pins", pins.empty() ? "unknown" : pins);
        }
    } else {
        o << r.spec << "\n";
    }
}

/// CUDA, cuDNN and the version's name.
void print_releases(const Rows& row, const Resolution& r) {
    const auto& c = *r.cuda;
    std::string cuda_line = c.version.str();
    if (r.cuda_index) {
        cuda_line += "  (known by NVIDIA's index only: " + r.cuda_index->index.path + ", sha256 " +
                     r.cuda_index->index.sha256.substr(0, 16) + "...)";
    } else if (c.nvcc_version) {
        cuda_line += "  (nvcc " + c.nvcc_version->str();
        cuda_line += c.release_date.empty() ? ")" : ", released " + c.release_date + ")";
    }
    row("CUDA", cuda_line);
    if (r.cudnn) {
        row("cuDNN", r.cudnn->version.str() + "  (build for CUDA " + r.cudnn_build->cuda + ")");
    } else if (r.cudnn_index) {
        row("cuDNN",
            r.cudnn_index->version.str() +
                "  (known by NVIDIA's index only: " + r.cudnn_index->index.path + ", sha256 " +
                r.cudnn_index->index.sha256.substr(0, 16) + "...)");
    } else {
        row("cuDNN", "none (add one: " + c.version.truncated(2).str() + "+cudnn-9 or --cudnn)");
    }
    row("version", r.version_name());
}

/// What the release needs of the machine: the driver, the GPUs, the host compiler.
void print_needs(const Rows& row, const manifest::CudaRelease& c) {
    std::string driver;
    if (c.driver_min && c.driver_min_source.rfind("branch:", 0) == 0) {
        driver = c.driver_min_source.substr(7) + " or newer for full support";
    } else if (c.driver_min) {
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
}

/// The archives of the profile, each with its size, and the total.
void print_archives(const Rows& row, const Resolution& r) {
    std::ostream& o = row.o;
    std::string total = human_size(r.total_size);
    if (r.unknown_sizes && r.total_size == 0) {
        total = "size unknown";
    } else if (r.unknown_sizes) {
        total += " + " + std::to_string(r.unknown_sizes) + " of unknown size";
    }
    if (!r.archives.empty()) {
        row("archives",
            r.profile + " profile, " + r.platform +
                (r.platform_compat.empty() ? "" : " with " + r.platform_compat) + ": " +
                std::to_string(r.archives.size()) +
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
}

/// The cuBLAS patch taken (--patch), or the newest NVIDIA published for the release, and
/// whether the toolkit line it is for is inferred.
void print_cublas(const Rows& row, const Resolution& r) {
    const auto* p = r.cublas_patch             ? r.cublas_patch
                    : r.cublas_patches.empty() ? nullptr
                                               : r.cublas_patches.front();
    if (!p) {
        return;
    }
    const auto* own = r.cuda->component("libcublas");
    std::string line = "patch " + p->label + " (libcublas " + p->version.str() +
                       (p->release_date.empty() ? "" : ", " + p->release_date) + ")";
    line += r.cublas_patch ? " in place of the release's own" : " newer than the release's own";
    if (own) {
        line += " " + own->version.str();
    }
    line += p->replaces_inferred ? "; for the " + p->replaces.str() +
                                       " line by inference from its version numbering (inferred)"
                                 : "; NVIDIA names it for the " + p->replaces.str() + " line";
    row("cuBLAS", line);
    row("fixes", p->fixes.empty() ? "not known" : p->fixes + " (" + p->fixes_source + ")");
    if (!r.cublas_patch) {
        row("", "install it with --patch cublas");
    }
}

void print_text(std::ostream& o, const Resolution& r) {
    Rows row{o};
    print_framework(row, r);
    print_releases(row, r);
    print_needs(row, *r.cuda);
    print_archives(row, r);
    print_cublas(row, r);
    for (const auto& n : r.notes) {
        o << "note: " << n << "\n";
    }
    for (const auto& n : r.not_installable) {
        o << "not installable yet: " << n << "\n";
    }
}

/// The per-driver index whose cuda_compat is for an announced release's minor (the newest), or
/// null.
const manifest::DriverIndex* announced_compat(const manifest::Catalog& c,
                                              const manifest::AnnouncedRelease& a) {
    const manifest::DriverIndex* out = nullptr;
    for (const auto& d : c.driver_indexes) {
        if (d.compat_cuda == a.version.truncated(2) && a.version.size() == 2) {
            out = &d;
        }
    }
    return out;
}

/// `resolve --json` of an announced release: the same members as any resolution (null where
/// nothing is known), `known: "announced"`, and the announcement itself.
nlohmann::json announced_json(const manifest::Catalog& c,
                              const manifest::AnnouncedRelease& a,
                              const Resolution& r) {
    using nlohmann::json;
    auto list = [](const std::vector<std::pair<std::string, std::string>>& v,
                   const char* k1,
                   const char* k2) {
        json out = json::array();
        for (const auto& [x, y] : v) {
            out.push_back(json{{k1, x}, {k2, y}});
        }
        return out;
    };
    json ann{
        {"status", a.preview ? "preview" : "released"},
        {"superseded_by", a.superseded_by ? json(a.superseded_by->str()) : json()},
        {"status_source", a.status_source},
        {"index", a.index},
        {"release_date_text", a.release_date_text.empty() ? json() : json(a.release_date_text)},
        {"platforms", a.platforms.empty() ? json() : json(a.platforms)},
        {"components", list(a.components, "name", "version")},
        {"components_source", a.components_source.empty() ? json() : json(a.components_source)},
        {"not_known", list(a.not_known, "what", "text")}};
    const auto* d = announced_compat(c, a);
    ann["cuda_compat"] =
        d ? json{{"driver", d->driver.str()}, {"index", d->index}, {"cuda", d->compat_cuda.str()}}
          : json();
    json driver{{"min", a.driver_branch ? json(std::to_string(*a.driver_branch)) : json()},
                {"min_source",
                 a.driver_branch ? json("branch:R" + std::to_string(*a.driver_branch)) : json()}};
    if (a.driver_branch) {
        driver["min_basis"] = a.driver_source;
        driver["min_inferred"] = a.driver_branch_inferred;
    }
    driver["compat_min"] = a.driver_compat_min ? json(a.driver_compat_min->str()) : json();
    return json{{"command", "resolve"},
                {"ok", true},
                {"spec", r.spec},
                {"version", json()},
                {"cuda",
                 {{"version", a.version.str()},
                  {"source", "announced"},
                  {"known", "announced"},
                  {"release_date", a.release_date.empty() ? json() : json(a.release_date)},
                  {"nvcc_version", json()},
                  {"index", json()}}},
                {"cudnn", json()},
                {"known", "announced"},
                {"announced", ann},
                {"driver", driver},
                {"sm", json()},
                {"host_compilers", json{{"gcc_max", json()}, {"clang_max", json()}}},
                {"profile", r.profile},
                {"platform", r.platform},
                {"platform_compat", json()},
                {"archives", json::array()},
                {"cublas", json()},
                {"total_size", 0},
                {"unknown_sizes", 0},
                {"installable", false},
                {"not_installable", r.not_installable},
                {"notes", r.notes},
                {"pins_not_met", json::array()}};
}

/// What is known of an announced release, row by row, and why it does not install.
void print_announced(std::ostream& o,
                     const manifest::Catalog& c,
                     const manifest::AnnouncedRelease& a,
                     const Resolution& r) {
    Rows row{o};
    o << r.spec << "\n";
    std::string v = a.version.str();
    if (a.preview) {
        row("CUDA",
            v + "  (a developer preview, superseded by " + a.superseded_by->str() +
                "; NVIDIA published no index for it)");
        row("source", a.status_source);
    } else {
        row("CUDA", v + "  (released; NVIDIA's index for it is not known to the manifests)");
        row("released",
            a.release_date.empty() ? "date not known: " + a.release_date_text : a.release_date);
        std::string driver;
        if (a.driver_branch) {
            driver = "R" + std::to_string(*a.driver_branch) + " or newer for full support" +
                     (a.driver_branch_inferred ? " (inferred: " + a.driver_source + ")" : "");
        }
        if (a.driver_compat_min) {
            driver += (driver.empty() ? "" : "; ") + std::string(">= ") +
                      a.driver_compat_min->str() + " with minor-version compatibility";
        }
        row("driver", driver.empty() ? "not known" : driver);
        if (!a.platforms.empty()) {
            row("archs", a.platforms);
        }
        if (!a.components.empty()) {
            row("versions", "as NVIDIA's release notes list them (" + a.components_source + "):");
            std::size_t w = 0;
            for (const auto& [name, ver] : a.components) {
                w = std::max(w, name.size());
            }
            for (const auto& [name, ver] : a.components) {
                o << "    " << std::left << std::setw(static_cast<int>(w) + 2) << name << ver
                  << "\n";
            }
        }
        if (const auto* d = announced_compat(c, a)) {
            row("compat",
                "cuda_compat for CUDA " + v + " in driver " + d->driver.str() + "'s index (" +
                    d->index +
                    "): install --compat takes it once the "
                    "release installs");
        }
        row("index", "not known: " + a.index);
        for (const auto& [what, text] : a.not_known) {
            row("unknown", what + ": " + text);
        }
    }
    for (const auto& n : r.notes) {
        o << "note: " << n << "\n";
    }
    for (const auto& n : r.not_installable) {
        o << "not installable yet: " << n << "\n";
    }
}

int run_resolve(const ResolveOptionsCli& o, Context& ctx) {
    ctx.platform = o.spec_options.platform; // forced_platform() sees --platform
    auto d = ops::describe_spec(ctx, o.spec, o.spec_options);
    if (!d) {
        return report_error(ctx, d.error(), "resolve");
    }
    if (const auto* a = d->described.announced) {
        if (ctx.json) {
            emit_json(ctx, announced_json(*d->described.catalog, *a, d->described.res));
        } else {
            print_announced(*ctx.out, *d->described.catalog, *a, d->described.res);
        }
        return 0;
    }
    auto advisories = ops::advisories_for(ctx, d->described.res);
    if (ctx.json) {
        auto j = resolution_json(d->described.res);
        j["machine"] = machine_json(d->machine);
        j["advisories"] = advisories_json(advisories);
        emit_json(ctx, j);
    } else {
        print_text(*ctx.out, d->described.res);
        for (const auto& w : d->machine.warnings) {
            *ctx.out << "this machine: " << w << "\n";
        }
        print_advisories(*ctx.out, advisories);
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
    add_spec_options(*sub, opts->spec_options);
    sub->callback([opts, &ctx] { ctx.exit_code = run_resolve(*opts, ctx); });
}

} // namespace cudaenv::cli
