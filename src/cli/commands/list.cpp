// cudaenv list --available [cuda|cudnn|FRAMEWORK]
#include "../context.hpp"
#include "common.hpp"
#include "core/install/install.hpp"
#include "core/manifest/model.hpp"
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

/// `v` falls under the filter: "12" takes 12.x, "2.1" takes 2.1 and 2.1.x but not 2.10.
bool passes(const std::string& filter, const Version& v) {
    if (filter.empty()) {
        return true;
    }
    auto f = Version::try_parse(filter);
    return f && f->is_prefix_of(v);
}

bool cudnn_installable(const manifest::CudnnRelease& r) {
    for (const auto& b : r.builds) {
        for (const auto& [p, a] : b.platforms) {
            if (a.downloadable()) {
                return true;
            }
        }
    }
    return false;
}

std::string cudnn_cuda_list(const manifest::CudnnRelease& r) {
    std::string s;
    for (const auto& b : r.builds) {
        s += (s.empty() ? "" : ", ") + b.cuda;
    }
    return s;
}

int run_list_installed(Context& ctx) {
    auto root = ctx.root();
    auto versions = install::list_installed(root, true);
    auto global_r = store::effective_global(root);
    if (!global_r) {
        return report_error(ctx, global_r.error(), "list");
    }
    const auto& global = global_r->version;
    auto global_file = global_r->owner.state_file();
    // What is selected here, and why (pyenv `versions`, `rustup show`): a broken pin is said,
    // not fatal, so that the list still shows what is there.
    auto sel = current_selection(ctx);
    std::optional<std::string> selected = sel ? sel->version : std::nullopt;
    std::string why = sel ? sel->origin_text() : sel.error().full_message();
    // A name in two roots is two entries: only the winner is what global and selection mean.
    auto mark = [&](const install::InstalledVersion& v) {
        return selected && *selected == v.name && v.shadowed_by.empty() ? "* " : "  ";
    };
    auto note = [&](const install::InstalledVersion& v) {
        const auto& name = v.name;
        if (!v.shadowed_by.empty()) {
            return "  (not used: " + v.shadowed_by.string() + " wins)";
        }
        auto copies = std::count_if(
            versions.begin(), versions.end(), [&](const auto& o) { return o.name == name; });
        std::string n = copies > 1 ? "  (wins over the copy below)" : "";
        if (selected && *selected == name) {
            n = "  (selected here by " + why + ")";
        }
        if (global && *global == name &&
            !(selected && *selected == name &&
              sel->origin == activate::Selection::Origin::global)) {
            n += "  (global: " + global_file.string() + ")";
        }
        return n;
    };
    if (ctx.json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& v : versions) {
            bool wins = v.shadowed_by.empty();
            nlohmann::json item{
                {"version", v.name},
                {"prefix", v.prefix.string()},
                {"root", v.root.string()},
                {"upstream", v.upstream},
                {"origin", v.upstream ? "upstream" : "root"},
                {"wins", wins},
                {"shadowed_by", wins ? nlohmann::json() : nlohmann::json(v.shadowed_by.string())},
                {"active", wins && global && *global == v.name},
                {"global", wins && global && *global == v.name},
                {"selected", wins && selected && *selected == v.name}};
            if (!v.problem.empty()) {
                item["problem"] = v.problem;
            } else {
                item["cuda"] = v.cuda;
                item["cudnn"] = v.cudnn.empty() ? nlohmann::json() : nlohmann::json(v.cudnn);
                item["profile"] = v.profile;
                item["platform"] = v.platform;
                item["bytes"] = v.bytes;
            }
            arr.push_back(std::move(item));
        }
        nlohmann::json ups = nlohmann::json::array();
        for (const auto& up : root.upstreams) {
            ups.push_back(up.string());
        }
        emit_json(ctx,
                  {{"command", "list"},
                   {"ok", true},
                   {"root", root.dir.string()},
                   {"upstreams", ups},
                   {"selected",
                    {{"version", selected.value_or("system")},
                     {"origin", sel ? nlohmann::json(why) : nlohmann::json()},
                     {"error", sel ? nlohmann::json() : nlohmann::json(why)}}},
                   {"versions", arr}});
        return 0;
    }
    if (versions.empty()) {
        *ctx.err << "cudaenv: no versions installed in " << root.dir.string()
                 << (root.upstreams.empty() ? "" : " (nor in " + root.upstreams[0].string() + ")")
                 << "\n"
                 << "help: cudaenv install tf-2.13, or cudaenv list --available\n";
        return 0;
    }
    for (const auto& v : versions) {
        if (!v.problem.empty()) {
            *ctx.out << mark(v) << std::left << std::setw(28) << v.name << " damaged: " << v.problem
                     << note(v) << "\n";
            continue;
        }
        *ctx.out << mark(v) << std::left << std::setw(28) << v.name << " cuDNN " << std::setw(11)
                 << (v.cudnn.empty() ? "-" : v.cudnn) << std::setw(9) << v.profile << std::right
                 << std::setw(10) << human_size(v.bytes)
                 << (v.upstream ? "  [machine-wide: " + v.root.string() + ", read-only]" : "")
                 << note(v) << "\n";
    }
    if (!selected) {
        *ctx.out << "* system"
                 << (sel ? "  (nothing selects a cudaenv version here)" : "  (" + why + ")")
                 << "\n";
    }
    return 0;
}

int run_list(const ListOptions& o, Context& ctx) {
    if (!o.available) {
        return run_list_installed(ctx);
    }
    auto catalog = ctx.catalog();
    if (!catalog) {
        return report_error(ctx, catalog.error(), "list");
    }
    const auto& c = **catalog;
    bool all = o.what.empty();
    if (!o.filter.empty() && !Version::try_parse(o.filter)) {
        return report_error(ctx,
                            Error(ErrorCode::usage, "'" + o.filter + "' is not a version prefix")
                                .with_hint("cudaenv list --available cuda 12"),
                            "list");
    }
    // What is installed, to mark it: CUDA versions, and (CUDA, cuDNN) pairs.
    auto installed = install::list_installed(ctx.root());
    auto cuda_installed = [&](const Version& v) {
        return std::any_of(installed.begin(), installed.end(), [&](const auto& i) {
            auto iv = Version::try_parse(i.cuda);
            return iv && v.is_prefix_of(*iv);
        });
    };
    auto pair_installed = [&](const Version& cuda, const Version& cudnn) {
        return std::any_of(installed.begin(), installed.end(), [&](const auto& i) {
            auto iv = Version::try_parse(i.cuda);
            auto dv = Version::try_parse(i.cudnn);
            return iv && dv && cuda.is_prefix_of(*iv) && cudnn.is_prefix_of(*dv);
        });
    };
    auto redist_cuda = [&](const Version& mm) {
        return std::any_of(c.cuda.begin(),
                           c.cuda.end(),
                           [&](const auto& r) {
                               return r.source == manifest::CudaSource::redist &&
                                      mm.is_prefix_of(r.version);
                           }) ||
               std::any_of(c.pinned_indexes.begin(), c.pinned_indexes.end(), [&](const auto& p) {
                   return p.product == "cuda" && mm.is_prefix_of(p.version);
               });
    };
    if (!all && o.what != "cuda" && o.what != "cudnn" && !c.framework(o.what)) {
        return report_error(ctx,
                            Error(ErrorCode::usage, "unknown kind '" + o.what + "'")
                                .with_hint("one of: cuda, cudnn, tensorflow, pytorch, jax"),
                            "list");
    }
    using nlohmann::json;
    json doc{{"command", "list"}, {"ok", true}};
    std::ostream& out = *ctx.out;

    if (all || o.what == "cuda") {
        json arr = json::array();
        std::vector<std::string> redist, runfile;
        for (auto it = c.cuda.rbegin(); it != c.cuda.rend(); ++it) {
            if (!passes(o.filter, it->version)) {
                continue;
            }
            bool r = it->source == manifest::CudaSource::redist;
            bool installable =
                r || std::any_of(it->runfiles.begin(), it->runfiles.end(), [](const auto& p) {
                    return p.second.downloadable();
                });
            bool inst = cuda_installed(it->version);
            arr.push_back({{"version", it->version.str()},
                           {"source", r ? "redist" : "runfile"},
                           {"installable", installable},
                           {"installed", inst},
                           {"release_date", it->release_date}});
            (r ? redist : runfile).push_back(it->version.str() + (inst ? "*" : ""));
        }
        std::vector<std::string> pinned;
        for (auto it = c.pinned_indexes.rbegin(); it != c.pinned_indexes.rend(); ++it) {
            if (it->product == "cuda" && passes(o.filter, it->version)) {
                auto j = pinned_json(*it);
                j["installed"] = cuda_installed(it->version);
                arr.push_back(j);
                pinned.push_back(it->version.str() + (cuda_installed(it->version) ? "*" : ""));
            }
        }
        doc["cuda"] = arr;
        auto wrap = [&](const std::vector<std::string>& vs) {
            for (std::size_t i = 0; i < vs.size(); ++i) {
                out << "  " << std::left << std::setw(8) << vs[i];
                if (i % 8 == 7 || i + 1 == vs.size()) {
                    out << "\n";
                }
            }
        };
        if (!ctx.json) {
            auto section = [&](const char* title, const std::vector<std::string>& vs) {
                if (!vs.empty()) {
                    out << title << "\n";
                    wrap(vs);
                }
            };
            section("CUDA (redistributable archives):", redist);
            section("CUDA (runfile installers, read as archives, never run):", runfile);
            section("CUDA (known by NVIDIA's index, its sha256 pinned; install fetches it):",
                    pinned);
            out << "  (* installed)\n";
        }
    }
    if (all || o.what == "cudnn") {
        json arr = json::array();
        if (!ctx.json) {
            out << "cuDNN (release, builds for CUDA):\n";
        }
        for (auto it = c.cudnn.rbegin(); it != c.cudnn.rend(); ++it) {
            if (!passes(o.filter, it->version)) {
                continue;
            }
            json cudas = json::array();
            for (const auto& b : it->builds) {
                cudas.push_back(b.cuda);
            }
            bool inst = cudnn_installable(*it);
            arr.push_back(
                {{"version", it->version.str()},
                 {"major", it->major},
                 {"cuda", cudas},
                 {"layout", it->layout == manifest::CudnnLayout::redist ? "redist" : "tarball"},
                 {"installable", inst}});
            if (!ctx.json) {
                out << "  " << std::left << std::setw(12) << it->version.str() << "CUDA "
                    << cudnn_cuda_list(*it) << (inst ? "" : "  (no download URL known)") << "\n";
            }
        }
        for (auto it = c.pinned_indexes.rbegin(); it != c.pinned_indexes.rend(); ++it) {
            if (it->product != "cudnn" || !passes(o.filter, it->version)) {
                continue;
            }
            arr.push_back(pinned_json(*it));
            if (!ctx.json) {
                out << "  " << std::left << std::setw(12) << it->version.str()
                    << "(known by NVIDIA's index, its sha256 pinned; install fetches it)\n";
            }
        }
        doc["cudnn"] = arr;
    }
    const manifest::Framework* only = all ? nullptr : c.framework(o.what);
    json fws = json::array();
    for (const auto& f : c.frameworks) {
        if (!all && only != &f) {
            continue;
        }
        json rows = json::array();
        if (!ctx.json) {
            out << f.name << " (release: CUDA, cuDNN, Python):\n";
        }
        for (const auto& r : f.releases) {
            if (!passes(o.filter, r.series)) {
                continue;
            }
            bool runfile_only = !redist_cuda(r.cuda);
            // a framework with CUDA builds (PyTorch, JAX): its default build's CUDA is installed
            bool inst = r.variants.empty()
                            ? pair_installed(r.cuda, r.cudnn)
                            : std::any_of(installed.begin(), installed.end(), [&](const auto& i) {
                                  auto iv = Version::try_parse(i.cuda);
                                  return iv && r.cuda.is_prefix_of(*iv);
                              });
            json row{{"series", r.series.str()},
                     {"tested", r.tested.str()},
                     {"cuda", r.cuda.str()},
                     {"cudnn", r.cudnn.size() ? json(r.cudnn.str()) : json(nullptr)},
                     {"python", r.python},
                     {"installed", inst},
                     {"runfile_only", runfile_only}};
            std::string builds;
            if (!r.variants.empty()) {
                json tags = json::array();
                for (const auto& v : r.variants) {
                    tags.push_back(v.tag);
                    builds += (builds.empty() ? "" : ", ") + v.tag;
                }
                row["builds"] = tags;
                row["default_build"] = r.default_variant;
                builds = "  (builds " + builds + "; default " + r.default_variant + ")";
            }
            rows.push_back(row);
            if (!ctx.json) {
                out << (inst ? "* " : "  ") << std::left << std::setw(7) << r.series.str()
                    << "CUDA " << std::setw(6) << r.cuda.str() << "cuDNN " << std::setw(5)
                    << (r.cudnn.size() ? r.cudnn.str() : "?") << "Python " << std::setw(10)
                    << r.python << (runfile_only ? "  (CUDA from its runfile)" : "") << builds
                    << "\n";
            }
        }
        fws.push_back({{"name", f.name}, {"releases", rows}});
    }
    if (all || only) {
        doc["frameworks"] = fws;
    }
    if (ctx.json) {
        emit_json(ctx, doc);
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
