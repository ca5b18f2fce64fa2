// cudaenv list --available [cuda|cudnn|FRAMEWORK]
#include "../context.hpp"
#include "common.hpp"
#include "core/manifest/announced.hpp"
#include "core/ops/available.hpp"
#include "core/ops/select.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iomanip>
#include <memory>
#include <ostream>

namespace cudaenv::cli {

namespace {

/// A release the manifests know by its NVIDIA index's sha256 alone.
nlohmann::json pinned_json(const manifest::PinnedIndex& p) {
    return {{"version", p.version.str()},
            {"source", "index"},
            {"installable", true},
            {"index", p.index.path},
            {"index_sha256", p.index.sha256}};
}

struct ListOptions {
    bool available = false;
    std::string what;   ///< "", "cuda", "cudnn" or a framework name
    std::string filter; ///< a version prefix ("12", "2.1"); empty: all
};

std::string note_of(const ops::InstalledList& l, const ops::ListedVersion& v) {
    if (!v.wins) {
        return "  (not used: " + v.version.shadowed_by.string() + " wins)";
    }
    std::string n = v.copy_below ? "  (wins over the copy below)" : "";
    if (v.selected) {
        n = "  (selected here by " + l.selected_by + ")";
    }
    if (v.global && !(v.selected && l.selected_by_global)) {
        n += "  (global: " + l.global_file.string() + ")";
    }
    return n;
}

nlohmann::json installed_json(const ops::InstalledList& l) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& lv : l.versions) {
        const auto& v = lv.version;
        nlohmann::json item{
            {"version", v.name},
            {"prefix", v.prefix.string()},
            {"root", v.root.string()},
            {"upstream", v.upstream},
            {"origin", v.upstream ? "upstream" : "root"},
            {"wins", lv.wins},
            {"shadowed_by", lv.wins ? nlohmann::json() : nlohmann::json(v.shadowed_by.string())},
            {"active", lv.global},
            {"global", lv.global},
            {"selected", lv.selected}};
        if (!v.problem.empty()) {
            item["problem"] = v.problem;
        } else {
            item["cuda"] = v.cuda;
            item["cudnn"] = v.cudnn.empty() ? nlohmann::json() : nlohmann::json(v.cudnn);
            item["profile"] = v.profile;
            item["cublas_patch"] =
                v.cublas_patch.empty()
                    ? nlohmann::json()
                    : nlohmann::json{{"label", v.cublas_patch}, {"version", v.cublas_version}};
            item["platform"] = v.platform;
            item["bytes"] = v.bytes;
        }
        arr.push_back(std::move(item));
    }
    nlohmann::json ups = nlohmann::json::array();
    for (const auto& up : l.root.upstreams) {
        ups.push_back(up.string());
    }
    bool ok = l.selection_error.empty();
    return {{"command", "list"},
            {"ok", true},
            {"root", l.root.dir.string()},
            {"upstreams", ups},
            {"selected",
             {{"version", l.selected.value_or("system")},
              {"origin", ok ? nlohmann::json(l.selected_by) : nlohmann::json()},
              {"error", ok ? nlohmann::json() : nlohmann::json(l.selection_error)}}},
            {"versions", arr},
            {"platform", l.platform},
            {"other_platforms", l.other_platforms}};
}

/// "1 version for linux-sbsa" when the root holds other platforms' versions; "" otherwise.
std::string other_platforms_text(const ops::InstalledList& l) {
    std::string text;
    std::size_t n = 0;
    for (const auto& [platform, count] : l.other_platforms) {
        text += (text.empty() ? "" : ", ") + std::to_string(count) + " for " + platform;
        n += count;
    }
    return text.empty() ? text
                        : "(also " + std::to_string(n) + (n == 1 ? " version" : " versions") +
                              " of other platforms here: " + text + "; this host takes " +
                              (l.platform.empty() ? std::string("none") : l.platform) + ")";
}

void print_installed(Context& ctx, const ops::InstalledList& l) {
    if (l.versions.empty()) {
        *ctx.err << "cudaenv: no versions installed in " << l.root.dir.string()
                 << (l.root.upstreams.empty() ? ""
                                              : " (nor in " + l.root.upstreams[0].string() + ")")
                 << "\n"
                 << "help: cudaenv install tf-2.13, or cudaenv list --available\n";
        if (auto others = other_platforms_text(l); !others.empty()) {
            *ctx.err << others << "\n";
        }
        return;
    }
    for (const auto& lv : l.versions) {
        const auto& v = lv.version;
        *ctx.out << (lv.selected ? "* " : "  ") << std::left << std::setw(28) << v.name;
        if (!v.problem.empty()) {
            *ctx.out << " damaged: " << v.problem << note_of(l, lv) << "\n";
            continue;
        }
        *ctx.out << " cuDNN " << std::setw(11) << (v.cudnn.empty() ? "-" : v.cudnn) << std::setw(9)
                 << v.profile << std::right << std::setw(10) << human_size(v.bytes)
                 << (v.cublas_patch.empty()
                         ? ""
                         : "  cuBLAS patch " + v.cublas_patch + " (" + v.cublas_version + ")")
                 << (v.upstream ? "  [machine-wide: " + v.root.string() + ", read-only]" : "")
                 << note_of(l, lv) << "\n";
    }
    if (!l.selected) {
        *ctx.out << "* system"
                 << (l.selection_error.empty() ? "  (nothing selects a cudaenv version here)"
                                               : "  (" + l.selection_error + ")")
                 << "\n";
    }
    if (auto others = other_platforms_text(l); !others.empty()) {
        *ctx.out << others << "\n";
    }
}

int run_list_installed(Context& ctx) {
    auto listed = ops::installed_versions(ctx);
    if (!listed) {
        return report_error(ctx, listed.error(), "list");
    }
    if (ctx.json) {
        emit_json(ctx, installed_json(*listed));
    } else {
        print_installed(ctx, *listed);
    }
    return 0;
}

/// CUDA releases in three sections by how they are installed, eight to a line; "*" marks
/// an installed one.
void print_cuda(std::ostream& out, const ops::Availability& a) {
    using Source = ops::AvailableCuda::Source;
    auto section = [&](const char* title, Source source) {
        std::vector<std::string> vs;
        for (const auto& c : a.cuda) {
            if (c.source == source) {
                vs.push_back(c.version.str() + (c.installed ? "*" : ""));
            }
        }
        if (vs.empty()) {
            return;
        }
        out << title << "\n";
        for (std::size_t i = 0; i < vs.size(); ++i) {
            out << "  " << std::left << std::setw(8) << vs[i];
            if (i % 8 == 7 || i + 1 == vs.size()) {
                out << "\n";
            }
        }
    };
    section("CUDA (redistributable archives):", Source::redist);
    section("CUDA (runfile installers, read as archives, never run):", Source::runfile);
    section("CUDA (known by NVIDIA's index, its sha256 pinned; install fetches it):",
            Source::index);
    bool announced = false;
    for (const auto& c : a.cuda) {
        if (c.source != Source::announced) {
            continue;
        }
        if (!announced) {
            out << "CUDA (published by NVIDIA, not installable: its index is not known):\n";
            announced = true;
        }
        out << "  " << std::left << std::setw(8) << c.version.str() << " "
            << manifest::announced_summary(*c.announced) << "\n";
    }
    out << "  (* installed)\n";
}

void print_cudnn(std::ostream& out, const ops::Availability& a) {
    out << "cuDNN (release, builds for CUDA):\n";
    for (const auto& d : a.cudnn) {
        out << "  " << std::left << std::setw(12) << d.version.str();
        if (d.index) {
            out << "(known by NVIDIA's index, its sha256 pinned; install fetches it)\n";
            continue;
        }
        std::string cudas;
        for (const auto& c : d.cuda) {
            cudas += (cudas.empty() ? "" : ", ") + c;
        }
        out << "CUDA " << cudas << (d.installable ? "" : "  (no download URL known)") << "\n";
    }
}

void print_framework(std::ostream& out, const ops::AvailableFramework& f) {
    out << f.framework->name << " (release: CUDA, cuDNN, Python):\n";
    for (const auto& row : f.rows) {
        const auto& r = *row.release;
        std::string builds;
        for (const auto& v : r.variants) {
            builds += (builds.empty() ? "" : ", ") + v.tag;
        }
        if (!builds.empty()) {
            builds = "  (builds " + builds + "; default " + r.default_variant + ")";
        }
        out << (row.installed ? "* " : "  ") << std::left << std::setw(7) << r.series.str()
            << "CUDA " << std::setw(6) << r.cuda.str() << "cuDNN " << std::setw(5)
            << (r.cudnn.size() ? r.cudnn.str() : "?") << "Python " << std::setw(10) << r.python
            << (row.runfile_only ? "  (CUDA from its runfile)" : "") << builds << "\n";
    }
}

/// One framework's release rows for `list --available --json`.
nlohmann::json framework_rows_json(const ops::AvailableFramework& f) {
    using nlohmann::json;
    json rows = json::array();
    for (const auto& row : f.rows) {
        const auto& r = *row.release;
        json j{{"series", r.series.str()},
               {"tested", r.tested.str()},
               {"cuda", r.cuda.str()},
               {"cudnn", r.cudnn.size() ? json(r.cudnn.str()) : json(nullptr)},
               {"python", r.python},
               {"installed", row.installed},
               {"runfile_only", row.runfile_only}};
        if (!r.variants.empty()) {
            json tags = json::array();
            for (const auto& v : r.variants) {
                tags.push_back(v.tag);
            }
            j["builds"] = tags;
            j["default_build"] = r.default_variant;
        }
        rows.push_back(j);
    }
    return rows;
}

nlohmann::json availability_json(const ops::Availability& a) {
    using nlohmann::json;
    json doc{{"command", "list"}, {"ok", true}};
    if (a.has_cuda) {
        json arr = json::array();
        for (const auto& c : a.cuda) {
            if (c.index) {
                auto j = pinned_json(*c.index);
                j["installed"] = c.installed;
                arr.push_back(j);
                continue;
            }
            if (const auto* an = c.announced) {
                json one{
                    {"version", c.version.str()},
                    {"source", "announced"},
                    {"status", an->preview ? "preview" : "released"},
                    {"installable", false},
                    {"installed", false},
                    {"release_date", an->release_date.empty() ? json() : json(an->release_date)},
                    {"superseded_by", an->superseded_by ? json(an->superseded_by->str()) : json()},
                    {"driver_branch", an->driver_branch ? json(*an->driver_branch) : json()},
                    {"driver_branch_basis",
                     an->driver_branch ? json(an->driver_branch_inferred ? "inferred" : "stated")
                                       : json()},
                    {"index", an->index}};
                json unknown = json::array();
                for (const auto& [what, text] : an->not_known) {
                    unknown.push_back(what);
                }
                one["not_known"] = unknown;
                arr.push_back(one);
                continue;
            }
            arr.push_back(
                {{"version", c.version.str()},
                 {"source", c.source == ops::AvailableCuda::Source::redist ? "redist" : "runfile"},
                 {"installable", c.installable},
                 {"installed", c.installed},
                 {"release_date", c.release_date}});
        }
        doc["cuda"] = arr;
    }
    if (a.has_cudnn) {
        json arr = json::array();
        for (const auto& d : a.cudnn) {
            arr.push_back(d.index ? pinned_json(*d.index)
                                  : json{{"version", d.version.str()},
                                         {"major", d.major},
                                         {"cuda", d.cuda},
                                         {"layout", d.tarball ? "tarball" : "redist"},
                                         {"installable", d.installable}});
        }
        doc["cudnn"] = arr;
    }
    if (a.has_frameworks) {
        json fws = json::array();
        for (const auto& f : a.frameworks) {
            fws.push_back({{"name", f.framework->name}, {"releases", framework_rows_json(f)}});
        }
        doc["frameworks"] = fws;
    }
    return doc;
}

int run_list(const ListOptions& o, Context& ctx) {
    if (!o.available) {
        return run_list_installed(ctx);
    }
    auto a = ops::available(ctx, {o.what, o.filter});
    if (!a) {
        return report_error(ctx, a.error(), "list");
    }
    if (ctx.json) {
        emit_json(ctx, availability_json(*a));
        return 0;
    }
    if (a->has_cuda) {
        print_cuda(*ctx.out, *a);
    }
    if (a->has_cudnn) {
        print_cudnn(*ctx.out, *a);
    }
    for (const auto& f : a->frameworks) {
        print_framework(*ctx.out, f);
    }
    return 0;
}

} // namespace

void setup_list(CLI::App& app, const CommandSpec& spec, Context& ctx) {
    auto opts = std::make_shared<ListOptions>();
    auto* sub = app.add_subcommand(spec.name, spec.summary);
    sub->footer(
        "Examples:\n"
        "  cudaenv list --available              every release the manifests offer\n"
        "  cudaenv list --available cudnn\n"
        "  cudaenv list --available tensorflow --json\n"
        "  cudaenv list --available cuda 12      only CUDA 12.x\n"
        "  cudaenv list                          installed; * marks what is selected here\n");
    sub->add_flag("--available", opts->available, "list what the manifests offer");
    sub->add_option("what", opts->what, "cuda, cudnn or a framework name");
    sub->add_option("filter", opts->filter, "only versions under this prefix (12, 2.1)");
    sub->callback([opts, &ctx] { ctx.exit_code = run_list(*opts, ctx); });
}

} // namespace cudaenv::cli
