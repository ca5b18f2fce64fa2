// cudaenv list --available [cuda|cudnn|FRAMEWORK]
#include "../context.hpp"
#include "core/install/install.hpp"
#include "core/manifest/model.hpp"
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

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
    std::string what; ///< "", "cuda", "cudnn" or a framework name
};

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
    if (ctx.json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& v : versions) {
            if (!v.problem.empty()) {
                arr.push_back({{"version", v.name},
                               {"prefix", v.prefix.string()},
                               {"problem", v.problem},
                               {"root", v.root.string()},
                               {"upstream", v.upstream},
                               {"active", global && *global == v.name}});
                continue;
            }
            arr.push_back({{"version", v.name},
                           {"cuda", v.cuda},
                           {"cudnn", v.cudnn.empty() ? nlohmann::json() : nlohmann::json(v.cudnn)},
                           {"profile", v.profile},
                           {"platform", v.platform},
                           {"bytes", v.bytes},
                           {"prefix", v.prefix.string()},
                           {"root", v.root.string()},
                           {"upstream", v.upstream},
                           {"active", global && *global == v.name}});
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
        bool active = global && *global == v.name;
        if (!v.problem.empty()) {
            *ctx.out << (active ? "* " : "  ") << std::left << std::setw(28) << v.name
                     << " damaged: " << v.problem << "\n";
            continue;
        }
        *ctx.out << (active ? "* " : "  ") << std::left << std::setw(28) << v.name << " cuDNN "
                 << std::setw(11) << (v.cudnn.empty() ? "-" : v.cudnn) << std::setw(9) << v.profile
                 << std::right << std::setw(10) << human_size(v.bytes)
                 << (v.upstream ? "  [machine-wide: " + v.root.string() + ", read-only]" : "")
                 << (active ? "  (set by " + global_file.string() + ")" : "") << "\n";
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
    if (!all && o.what != "cuda" && o.what != "cudnn" && !c.framework(o.what)) {
        return report_error(ctx,
                            Error(ErrorCode::usage, "unknown kind '" + o.what + "'")
                                .with_hint("one of: cuda, cudnn, tensorflow"),
                            "list");
    }
    using nlohmann::json;
    json doc{{"command", "list"}, {"ok", true}};
    std::ostream& out = *ctx.out;

    if (all || o.what == "cuda") {
        json arr = json::array();
        std::vector<std::string> redist, runfile;
        for (auto it = c.cuda.rbegin(); it != c.cuda.rend(); ++it) {
            bool r = it->source == manifest::CudaSource::redist;
            arr.push_back({{"version", it->version.str()},
                           {"source", r ? "redist" : "runfile"},
                           {"installable", r},
                           {"release_date", it->release_date}});
            (r ? redist : runfile).push_back(it->version.str());
        }
        std::vector<std::string> pinned;
        for (auto it = c.pinned_indexes.rbegin(); it != c.pinned_indexes.rend(); ++it) {
            if (it->product == "cuda") {
                arr.push_back(pinned_json(*it));
                pinned.push_back(it->version.str());
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
            out << "CUDA (redistributable archives):\n";
            wrap(redist);
            out << "CUDA (runfile installers only; not installable yet):\n";
            wrap(runfile);
            out << "CUDA (known by NVIDIA's index, its sha256 pinned; install fetches it):\n";
            wrap(pinned);
        }
    }
    if (all || o.what == "cudnn") {
        json arr = json::array();
        if (!ctx.json) {
            out << "cuDNN (release, builds for CUDA):\n";
        }
        for (auto it = c.cudnn.rbegin(); it != c.cudnn.rend(); ++it) {
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
            if (it->product != "cudnn") {
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
            rows.push_back({{"series", r.series.str()},
                            {"tested", r.tested.str()},
                            {"cuda", r.cuda.str()},
                            {"cudnn", r.cudnn.str()},
                            {"python", r.python}});
            if (!ctx.json) {
                out << "  " << std::left << std::setw(7) << r.series.str() << "CUDA "
                    << std::setw(6) << r.cuda.str() << "cuDNN " << std::setw(5) << r.cudnn.str()
                    << "Python " << r.python << "\n";
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
    sub->footer("Examples:\n"
                "  cudaenv list --available              every release the manifests offer\n"
                "  cudaenv list --available cudnn\n"
                "  cudaenv list --available tensorflow --json\n");
    sub->add_flag("--available", opts->available, "list what the manifests offer");
    sub->add_option("what", opts->what, "cuda, cudnn or a framework name");
    sub->callback([opts, &ctx] { ctx.exit_code = run_list(*opts, ctx); });
}

} // namespace cudaenv::cli
