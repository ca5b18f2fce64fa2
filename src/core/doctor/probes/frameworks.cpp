// Probe 11: TensorFlow and PyTorch in the active Python environment, read as files (nothing is
// imported): tensorflow-cpu installed instead of tensorflow; the CUDA and cuDNN TensorFlow was
// built with (tensorflow/python/platform/build_info.py) against what will load, and the manifests'
// verdict for that pair; PyTorch's torch/version.py likewise.
#include "../../resolve/resolve.hpp"
#include "../pyinfo.hpp"
#include "probes.hpp"

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

} // namespace

Finding frameworks(Host& h) {
    auto sites = site_dirs(h);
    if (sites.empty()) {
        return skip("no active Python environment found (no VIRTUAL_ENV, CONDA_PREFIX or python3 "
                    "on PATH)");
    }
    std::vector<std::string> details{"site-packages: " + join(sites)};
    std::vector<std::string> fails, warns, oks;
    std::string fail_fix, warn_fix;
    auto tf = dist(h, sites, "tensorflow");
    if (!tf) {
        tf = dist(h, sites, "tensorflow_gpu");
    }
    auto tf_cpu = dist(h, sites, "tensorflow_cpu");
    if (tf_cpu && !tf) {
        warns.push_back("tensorflow-cpu " + tf_cpu->version +
                        " is installed instead of tensorflow: TensorFlow will never use the GPU");
        warn_fix = "pip uninstall -y tensorflow-cpu && pip install 'tensorflow[and-cuda]==" +
                   tf_cpu->version + "'";
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
            warns.push_back("tensorflow " + tf->version + " has no build_info.py");
        } else if (!cuda_build || !has_built) {
            warns.push_back("tensorflow " + tf->version + " is a CPU-only build");
            if (warn_fix.empty()) {
                warn_fix = "pip install 'tensorflow[and-cuda]==" + tf->version + "'";
            }
        } else {
            // what will load: pip's nvidia-* packages (tensorflow[and-cuda]) or the loader's
            // libcudart
            bool pip_cuda = h.is_dir(tf->site + "/nvidia/cuda_runtime/lib");
            auto pick = h.pick(cudart_soname(built->major()));
            std::string loads = pip_cuda ? "pip's nvidia-* packages" : pick.path;
            details.push_back("its CUDA runtime would load from " +
                              (loads.empty() ? "nowhere" : loads));
            if (!pip_cuda && pick.path.empty() && !(t.cuda && t.cuda->major() == built->major())) {
                fails.push_back("tensorflow " + tf->version + " needs CUDA " + *cuda + " (" +
                                cudart_soname(built->major()) +
                                ") but none will load: it falls back to the CPU");
                fail_fix =
                    "cudaenv install tf-" + Version::try_parse(tf->version)->truncated(2).str() +
                    " && cudaenv use tf-" + Version::try_parse(tf->version)->truncated(2).str();
            }
            const auto& fws = h.frameworks();
            const manifest::Framework* fw = nullptr;
            for (const auto& f : fws) {
                fw = f.name == "tensorflow" ? &f : fw;
            }
            auto tfv = Version::try_parse(tf->version);
            const auto* row = fw && tfv ? fw->find(*tfv) : nullptr;
            if (row && t.cuda && !pip_cuda) {
                auto verdict = check_framework_compat(*fw, *row, *t.cuda, t.cudnn);
                if (!verdict) {
                    fails.push_back("the manifests refuse tensorflow " + tf->version +
                                    " with CUDA " + t.cuda->str() +
                                    (t.cudnn ? " + cuDNN " + t.cudnn->str() : "") + ": " +
                                    verdict.error().message);
                    if (fail_fix.empty()) {
                        fail_fix = "cudaenv install tf-" + row->series.str() +
                                   " && cudaenv use tf-" + row->series.str() + " (CUDA " +
                                   row->cuda.str() + " + cuDNN " + row->cudnn.str() + ")";
                    }
                } else {
                    oks.push_back("tensorflow " + tf->version + " (CUDA " + *cuda +
                                  ") can use CUDA " + t.cuda->str());
                }
            } else {
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
            warns.push_back("torch " + torch->version + " is a CPU-only build");
            if (warn_fix.empty()) {
                warn_fix = "pip install torch --index-url https://download.pytorch.org/whl/cu126 "
                           "(pick the CUDA your driver supports)";
            }
        } else {
            auto driver = h.driver().version();
            const auto* rel = h.cuda_release_for(built->truncated(2));
            if (driver && rel && rel->driver_compat_min &&
                Version::compare_numeric(*driver, *rel->driver_compat_min) < 0) {
                fails.push_back("torch " + torch->version + " needs a driver for CUDA " + *cuda +
                                " (>= " + rel->driver_compat_min->str() + "), this one is " +
                                driver->str());
                if (fail_fix.empty()) {
                    fail_fix = "upgrade the driver, or install a torch built for an older CUDA";
                }
            } else {
                oks.push_back("torch " + torch->version + " built with CUDA " + *cuda +
                              " (brings its own CUDA libraries)");
            }
        }
    }
    if (!tf && !tf_cpu && oks.empty() && warns.empty() && fails.empty()) {
        return skip("no TensorFlow or PyTorch in " + join(sites), details);
    }
    if (!fails.empty()) {
        return fail(join(fails, "; "), fail_fix, details);
    }
    if (!warns.empty()) {
        return warn(join(warns, "; "), warn_fix, details);
    }
    return ok(join(oks, "; "), details);
}

} // namespace cudaenv::doctor::checks
