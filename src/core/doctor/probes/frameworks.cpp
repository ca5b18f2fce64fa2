// Probe 11: TensorFlow and PyTorch in the active Python environment, read as files (nothing is
// imported): tensorflow-cpu installed instead of tensorflow; the CUDA and cuDNN TensorFlow was
// built with (tensorflow/python/platform/build_info.py) against what will load, and the manifests'
// verdict for that pair; PyTorch's torch/version.py likewise.
#include "../../resolve/resolve.hpp"
#include "../pyinfo.hpp"
#include "probes.hpp"

#include <algorithm>
#include <set>

namespace cudaenv::doctor::checks {

namespace {

/// site-packages folders of the active environment: VIRTUAL_ENV, CONDA_PREFIX, else the python3
/// on PATH (through pyenv's shims), then the user's site.
std::vector<std::string> site_dirs(Host& h) {
    std::vector<std::string> prefixes;
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
        if (auto v = h.env(var); v && !v->empty()) {
            prefixes.push_back(*v);
        }
    }
    if (prefixes.empty()) {
        if (auto py = h.which("python3")) {
            if (py->find("/.pyenv/shims/") != std::string::npos) {
                std::string pyenv = py->substr(0, py->find("/shims/"));
                std::string version = h.env("PYENV_VERSION").value_or("");
                if (version.empty()) {
                    auto text = h.read(pyenv + "/version", 256).value_or("");
                    version = text.substr(0, text.find_first_of("\r\n :"));
                }
                if (!version.empty()) {
                    prefixes.push_back(pyenv + "/versions/" + version);
                }
            } else {
                std::string real = h.canonical(*py);
                auto bin = real.rfind("/bin/");
                if (bin != std::string::npos) {
                    prefixes.push_back(bin == 0 ? "/" : real.substr(0, bin));
                }
            }
        }
    }
    std::vector<std::string> out;
    std::set<std::string> seen;
    auto add = [&](const std::string& d) {
        if (h.is_dir(d) && seen.insert(h.canonical(d)).second) {
            out.push_back(d);
        }
    };
    for (const auto& p : prefixes) {
        std::string base = p == "/" ? "" : p;
        for (const auto& name : h.list(base + "/lib")) {
            if (name.rfind("python3", 0) == 0) {
                add(base + "/lib/" + name + "/site-packages");
                add(base + "/lib/" + name + "/dist-packages");
            }
        }
        if (base == "/usr") {
            add("/usr/lib/python3/dist-packages");
            for (const auto& name : h.list("/usr/local/lib")) {
                if (name.rfind("python3", 0) == 0) {
                    add("/usr/local/lib/" + name + "/dist-packages");
                }
            }
        }
    }
    if (auto home = h.env("HOME"); home && !h.env("VIRTUAL_ENV")) {
        for (const auto& name : h.list(*home + "/.local/lib")) {
            if (name.rfind("python3", 0) == 0) {
                add(*home + "/.local/lib/" + name + "/site-packages");
            }
        }
    }
    return out;
}

struct Dist {
    std::string site;
    std::string version;
};

/// The installed distribution `name` (normalised: tensorflow_cpu) in the first site that has it.
std::optional<Dist> dist(Host& h, const std::vector<std::string>& sites, const std::string& name) {
    for (const auto& site : sites) {
        for (const auto& entry : h.list(site)) {
            if (entry.size() > name.size() + 11 && entry.rfind(name + "-", 0) == 0 &&
                entry.compare(entry.size() - 10, 10, ".dist-info") == 0) {
                return Dist{site, entry.substr(name.size() + 1, entry.size() - name.size() - 11)};
            }
        }
    }
    return std::nullopt;
}

/// Where a framework's copy of a library comes from: pip's nvidia-* wheel in its site-packages
/// (TensorFlow >= 2.14 `[and-cuda]` and PyTorch wheels find those first, through their RPATH),
/// else what the loader picks.
struct Load {
    std::string path;    ///< empty: nowhere
    std::string source;  ///< "pip's nvidia-cudnn-cu12 9.1.0.70", "the loader (ld.so.cache)"
    std::string version; ///< of the library loaded, when known
};

Load would_load(Host& h,
                const std::vector<std::string>& sites,
                bool wheels_first,
                const std::string& wheel, ///< "cudnn", "cuda_runtime"
                const std::string& cu,    ///< "cu12"
                const std::string& soname) {
    if (wheels_first) {
        for (const auto& site : sites) {
            std::string file = site + "/nvidia/" + wheel + "/lib/" + soname;
            if (h.exists(file)) {
                std::string dist_name = "nvidia_" + wheel + "_" + cu;
                auto d = dist(h, {site}, dist_name);
                std::string pretty = "nvidia-" + wheel + "-" + cu;
                std::replace(pretty.begin(), pretty.end(), '_', '-');
                return {file,
                        "pip's " + pretty + (d ? " " + d->version : std::string()),
                        d ? d->version : library_version(h, soname, file)};
            }
        }
    }
    auto p = h.pick(soname);
    if (p.path.empty()) {
        return {};
    }
    return {p.path, "the loader (" + p.via + ")", library_version(h, soname, p.path)};
}

/// "matches the selection" or how it differs, for a library the framework loads.
std::string against_selection(Host& h, const Load& l, const std::string& soname) {
    const auto& t = h.toolkit();
    if (t.prefix.empty()) {
        return "no toolkit is selected";
    }
    std::string mine = lib_dir(h, h.canonical(t.prefix)) + "/" + soname;
    if (!h.exists(mine)) {
        return "the selection (" + t.prefix + ") has no " + soname;
    }
    if (h.canonical(mine) == h.canonical(l.path)) {
        return "the selection's own copy";
    }
    std::string v = library_version(h, soname, mine);
    return "not the selection's " + (v.empty() ? mine : v + " in " + mine) +
           (v == l.version && !v.empty() ? " (the same version)" : "");
}

} // namespace

Finding frameworks(Host& h) {
    auto sites = site_dirs(h);
    if (sites.empty()) {
        return skip("no active Python environment found (no VIRTUAL_ENV, CONDA_PREFIX or python3 "
                    "on PATH)");
    }
    std::vector<std::string> details{"site-packages: " + join(sites)};
    std::vector<Issue> issues;
    std::vector<std::string> oks;
    auto tf = dist(h, sites, "tensorflow");
    if (!tf) {
        tf = dist(h, sites, "tensorflow_gpu");
    }
    auto tf_cpu = dist(h, sites, "tensorflow_cpu");
    if (tf_cpu && !tf) {
        issues.push_back(
            {Status::warn,
             "tensorflow-cpu " + tf_cpu->version +
                 " is installed instead of tensorflow: TensorFlow will never use the GPU",
             "pip uninstall -y tensorflow-cpu && pip install 'tensorflow[and-cuda]==" +
                 tf_cpu->version + "'"});
    }
    const auto& t = h.toolkit();
    if (tf) {
        auto text = h.read(tf->site + "/tensorflow/python/platform/build_info.py", 64 * 1024);
        auto info = text ? parse_tf_build_info(*text) : TfBuildInfo{};
        auto cuda = info.cuda;
        auto cudnn = info.cudnn;
        bool cuda_build = info.cuda_build;
        details.push_back("tensorflow " + tf->version + " in " + tf->site +
                          (cuda ? ", built with CUDA " + *cuda + " and cuDNN " + cudnn.value_or("?")
                                : std::string(", no CUDA build information")));
        // a plain value and a flag: GCC 12 misreads std::optional<Version> here
        // (maybe-uninitialized)
        const auto parsed = cuda ? Version::try_parse(*cuda) : std::nullopt;
        const bool has_built = parsed.has_value();
        const Version built_v = parsed.value_or(Version{});
        const Version* built = &built_v;
        if (!text) {
            issues.push_back({Status::warn,
                              "tensorflow " + tf->version + " has no build_info.py",
                              "pip install --force-reinstall 'tensorflow==" + tf->version + "'"});
        } else if (!cuda_build || !has_built) {
            issues.push_back({Status::warn,
                              "tensorflow " + tf->version + " is a CPU-only build",
                              "pip install 'tensorflow[and-cuda]==" + tf->version + "'"});
        } else {
            // what it will load, library by library: pip's nvidia-* wheels first from 2.14 on
            // (tensorflow[and-cuda]), else the loader's pick; and whether that is the selection
            auto tfv = Version::try_parse(tf->version);
            bool wheels_first = tfv && Version::compare_numeric(tfv->truncated(2),
                                                                *Version::try_parse("2.14")) >= 0;
            std::string cu = "cu" + std::to_string(built->major());
            std::string series = tfv ? tfv->truncated(2).str() : tf->version;
            auto rt = would_load(
                h, sites, wheels_first, "cuda_runtime", cu, cudart_soname(built->major()));
            details.push_back("tensorflow's CUDA runtime: " +
                              (rt.path.empty()
                                   ? "would load from nowhere"
                                   : rt.path + " (" + rt.source + "; " +
                                         against_selection(h, rt, cudart_soname(built->major())) +
                                         ")"));
            bool pip_cuda = rt.source.rfind("pip's", 0) == 0;
            if (rt.path.empty()) {
                bool toolkit_has = t.cuda && t.cuda->major() == built->major();
                issues.push_back(
                    {Status::fail,
                     "tensorflow " + tf->version + " needs CUDA " + *cuda + " (" +
                         cudart_soname(built->major()) +
                         ") but none will load: it falls back to the CPU",
                     toolkit_has
                         ? "the selected toolkit has it but the loader does not see it: run "
                           "python through cudaenv exec, enable the shell hook (cudaenv init), "
                           "or cudaenv global " +
                               t.cudaenv_version.value_or("<version>")
                         : "cudaenv install tf-" + series + " && cudaenv use tf-" + series});
            }
            std::optional<Version> loaded_cudnn;
            if (auto cm = cudnn ? Version::try_parse(*cudnn) : std::nullopt) {
                std::string soname = "libcudnn.so." + std::to_string(cm->major());
                auto dn = would_load(h, sites, wheels_first, "cudnn", cu, soname);
                details.push_back("tensorflow's cuDNN: " +
                                  (dn.path.empty() ? "would load from nowhere"
                                                   : dn.path + " (" + dn.source + "; " +
                                                         against_selection(h, dn, soname) + ")"));
                if (dn.path.empty() && !rt.path.empty()) {
                    issues.push_back(
                        {Status::fail,
                         "tensorflow " + tf->version + " needs cuDNN " + *cudnn + " (" + soname +
                             ") but none will load: it falls back to the CPU",
                         "cudaenv install tf-" + series + " && cudaenv use tf-" + series});
                }
                loaded_cudnn = Version::try_parse(dn.version);
            }
            const auto& fws = h.frameworks();
            const manifest::Framework* fw = nullptr;
            for (const auto& f : fws) {
                fw = f.name == "tensorflow" ? &f : fw;
            }
            const auto* row = fw && tfv ? fw->find(*tfv) : nullptr;
            // the pair judged: what loads (a wheel's versions), else the selected toolkit's
            auto judged_cuda = pip_cuda ? Version::try_parse(rt.version) : t.cuda;
            auto judged_cudnn = pip_cuda ? loaded_cudnn : t.cudnn;
            if (row && judged_cuda && !rt.path.empty()) {
                auto ok_pair = check_framework_compat(*fw, *row, *judged_cuda, judged_cudnn);
                if (!ok_pair) {
                    issues.push_back(
                        {Status::fail,
                         "the manifests refuse tensorflow " + tf->version + " with CUDA " +
                             judged_cuda->str() +
                             (judged_cudnn ? " + cuDNN " + judged_cudnn->str() : "") +
                             (pip_cuda ? " (from pip's nvidia-* wheels)" : "") + ": " +
                             ok_pair.error().message,
                         pip_cuda ? "pip install 'tensorflow[and-cuda]==" + tf->version +
                                        "' (reinstalls the wheels it was built for)"
                                  : "cudaenv install tf-" + row->series.str() +
                                        " && cudaenv use tf-" + row->series.str() + " (CUDA " +
                                        row->cuda.str() + " + cuDNN " + row->cudnn.str() + ")"});
                } else if (pip_cuda) {
                    oks.push_back("tensorflow " + tf->version + " built with CUDA " + *cuda +
                                  " (brings its own CUDA from pip: " + judged_cuda->str() + ")");
                } else {
                    oks.push_back("tensorflow " + tf->version + " (CUDA " + *cuda +
                                  ") can use CUDA " + judged_cuda->str());
                }
            } else if (!rt.path.empty()) {
                oks.push_back("tensorflow " + tf->version + " built with CUDA " + *cuda +
                              (pip_cuda ? " (brings its own CUDA from pip)" : ""));
            }
        }
    }
    if (auto torch = dist(h, sites, "torch")) {
        auto text = h.read(torch->site + "/torch/version.py", 64 * 1024);
        auto cuda = text ? parse_torch_cuda(*text) : std::nullopt;
        details.push_back("torch " + torch->version + " in " + torch->site +
                          (cuda ? ", built with CUDA " + *cuda : std::string(", no CUDA")));
        const auto parsed = cuda ? Version::try_parse(*cuda) : std::nullopt;
        const Version built_v = parsed.value_or(Version{});
        const Version* built = &built_v;
        if (!parsed) {
            issues.push_back(
                {Status::warn,
                 "torch " + torch->version + " is a CPU-only build",
                 "pip install torch --index-url https://download.pytorch.org/whl/cu126 "
                 "(pick the CUDA your driver supports)"});
        } else {
            // PyTorch's wheels load pip's nvidia-* libraries (their RPATH) before the loader's
            std::string cu = "cu" + std::to_string(built->major());
            auto dn = would_load(h,
                                 {torch->site},
                                 true,
                                 "cudnn",
                                 cu,
                                 "libcudnn.so." + std::string(built->major() >= 12 ? "9" : "8"));
            if (!dn.path.empty()) {
                details.push_back("torch's cuDNN: " + dn.path + " (" + dn.source + ")");
            }
            auto driver = h.driver().version();
            const auto* rel = h.cuda_release_for(built->truncated(2));
            if (driver && rel && rel->driver_compat_min &&
                Version::compare_numeric(*driver, *rel->driver_compat_min) < 0) {
                issues.push_back({Status::fail,
                                  "torch " + torch->version + " needs a driver for CUDA " + *cuda +
                                      " (>= " + rel->driver_compat_min->str() + "), this one is " +
                                      driver->str(),
                                  "upgrade the driver, or install a torch built for an older "
                                  "CUDA"});
            } else {
                oks.push_back("torch " + torch->version + " built with CUDA " + *cuda +
                              " (brings its own CUDA libraries)");
            }
        }
    }
    if (!tf && !tf_cpu && oks.empty() && issues.empty()) {
        return skip("no TensorFlow or PyTorch in " + join(sites), details);
    }
    return verdict(std::move(issues), ok(join(oks, "; "), details));
}

} // namespace cudaenv::doctor::checks
