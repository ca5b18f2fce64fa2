// Probe 11: TensorFlow, PyTorch and JAX in the active Python environment, read as files (nothing
// is imported; core/pyenv finds them): tensorflow-cpu installed instead of tensorflow; the CUDA
// and cuDNN TensorFlow was built with (build_info.py) against what will load, and the manifests'
// verdict for that pair; for torch and jax, the CUDA they were built for, which libcudnn and
// libcublas they would load -- the wheel's, LD_LIBRARY_PATH's, the toolkit's -- in the loader's
// order for the object that needs them (its DT_RPATH comes before LD_LIBRARY_PATH, its
// DT_RUNPATH after; JAX from 0.6.2 preloads the wheels by path), a copy that does not satisfy the
// framework's rules, and a mismatch with the selected nvcc or the driver.
#include "../../pyenv/pyenv.hpp"
#include "../../pyenv/pyinfo.hpp"
#include "../../resolve/resolve.hpp"
#include "../../sys/elf.hpp"
#include "probes.hpp"

#include <algorithm>
#include <set>

namespace cudaenv::doctor::checks {

namespace {

/// The doctor's view of the machine (under the sysroot) for core/pyenv.
class HostFiles final : public pyenv::Files {
  public:
    explicit HostFiles(const doctor::Files& f) : m_f(f) {}

    std::vector<std::string> list(const std::string& dir) const override { return m_f.list(dir); }

    std::optional<std::string> read(const std::string& file, std::size_t max) const override {
        return m_f.read(file, max);
    }

    bool is_dir(const std::string& path) const override { return m_f.is_dir(path); }

    bool exists(const std::string& path) const override { return m_f.exists(path); }

    std::string canonical(const std::string& path) const override { return m_f.canonical(path); }

    std::optional<std::string> env(const std::string& name) const override { return m_f.env(name); }

    std::optional<std::string> which(const std::string& tool) const override {
        return m_f.which(tool);
    }

  private:
    const doctor::Files& m_f;
};

struct Dist {
    std::string site;
    std::string version;
};

std::optional<Dist> dist(Host& h, const std::vector<std::string>& sites, const std::string& name) {
    if (auto d = pyenv::find_dist(HostFiles(h.files()), sites, name)) {
        return Dist{d->site, d->version};
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
            if (h.files().exists(file)) {
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
    auto p = h.loader().pick(soname);
    if (p.path.empty()) {
        return {};
    }
    return {p.path, "the loader (" + p.via + ")", library_version(h, soname, p.path)};
}

/// "matches the selection" or how it differs, for a library the framework loads.
std::string against_selection(Host& h, const Load& l, const std::string& soname) {
    const auto& t = h.facts().toolkit();
    if (t.prefix.empty()) {
        return "no toolkit is selected";
    }
    std::string mine = lib_dir(h, h.files().canonical(t.prefix)) + "/" + soname;
    if (!h.files().exists(mine)) {
        return "the selection (" + t.prefix + ") has no " + soname;
    }
    if (h.files().canonical(mine) == h.files().canonical(l.path)) {
        return "the selection's own copy";
    }
    std::string v = library_version(h, soname, mine);
    return "not the selection's " + (v.empty() ? mine : v + " in " + mine) +
           (v == l.version && !v.empty() ? " (the same version)" : "");
}

/// The object whose dynamic section decides where a framework's CUDA libraries come from.
std::string loading_object(Host& h, const pyenv::Framework& fw) {
    const std::string& site = fw.dist.site;
    std::vector<std::string> candidates;
    if (fw.name == "pytorch") {
        candidates = {site + "/torch/lib/libtorch_cuda.so",
                      site + "/torch/lib/libtorch_global_deps.so"};
    } else {
        std::string m = fw.variant.size() > 4 ? fw.variant.substr(4) : "12";
        candidates = {site + "/jax_plugins/xla_cuda" + m + "/xla_cuda_plugin.so",
                      site + "/jaxlib/xla_extension.so"};
    }
    for (const auto& c : candidates) {
        if (h.files().exists(c)) {
            return c;
        }
    }
    return {};
}

struct FwLoad {
    std::string path; ///< empty: nowhere
    std::string how;  ///< "the wheel nvidia-cudnn-cu12 9.1.0.70, through DT_RPATH"
    std::string version;
    bool wheel = false;
    std::vector<std::string> passed_over; ///< other copies the framework would have found later
};

/// The wheel's copy of `soname`: site/nvidia/<dir>/lib (CUDA 13's wheels also nvidia/cu13/lib).
std::optional<std::pair<std::string, std::string>> wheel_copy(Host& h,
                                                              const std::vector<std::string>& sites,
                                                              const pyenv::Framework& fw,
                                                              const std::string& dir,
                                                              const std::string& soname) {
    for (const auto& site : sites) {
        for (const auto& sub : {dir, std::string("cu13")}) {
            std::string file = site + "/nvidia/" + sub + "/lib/" + soname;
            if (!h.files().exists(file)) {
                continue;
            }
            std::string label = "a wheel";
            for (const auto& [name, version] : fw.nvidia) {
                std::string pretty = name;
                std::replace(pretty.begin(), pretty.end(), '_', '-');
                if (name.rfind("nvidia_" + dir, 0) == 0) {
                    return std::make_pair(file, "the wheel " + pretty + " " + version);
                }
            }
            return std::make_pair(file, label);
        }
    }
    return std::nullopt;
}

/// Where a framework's `soname` comes from, in the loader's order for the object that needs it.
FwLoad framework_load(Host& h,
                      const std::vector<std::string>& sites,
                      const pyenv::Framework& fw,
                      const std::string& wheel_dir,
                      const std::string& soname) {
    struct Candidate {
        std::string path, how;
        bool wheel;
    };

    std::vector<Candidate> order;
    auto wheel = wheel_copy(h, sites, fw, wheel_dir, soname);
    std::string obj = loading_object(h, fw);
    std::string obj_name = obj.substr(obj.rfind('/') + 1);
    // PyTorch's wheels before 1.13 bundle cuDNN and cuBLAS in torch/lib (no nvidia-* wheels),
    // beside the object that loads them
    std::string own_lib = fw.name == "pytorch" ? fw.dist.site + "/torch/lib" : std::string();
    // JAX 0.6.2 and later load the nvidia-* wheels' libraries by path before anything else
    // (jax_plugins/cuda/__init__.py, jax-ml/jax 080294cf)
    bool preloads = fw.name == "jax" && fw.version &&
                    Version::compare_numeric(*fw.version, *Version::try_parse("0.6.2")) >= 0;
    if (preloads && wheel) {
        order.push_back(
            {wheel->first, wheel->second + ", preloaded by path by JAX's plugin", true});
    }
    std::optional<sys::ElfDynamic> dyn;
    if (!obj.empty()) {
        dyn = sys::read_elf_dynamic(h.files().at(obj));
    }
    auto dirs_of = [&](const std::vector<std::string>& entries, const char* tag) {
        std::string origin = obj.substr(0, obj.rfind('/'));
        for (const auto& e : entries) {
            std::string file = sys::expand_origin(e, origin) + "/" + soname;
            if (h.files().exists(file)) {
                bool is_wheel =
                    wheel && h.files().canonical(file) == h.files().canonical(wheel->first);
                bool bundled = !own_lib.empty() &&
                               under_or_at(h.files().canonical(file), h.files().canonical(own_lib));
                order.push_back({file,
                                 (is_wheel  ? wheel->second
                                  : bundled ? "the copy bundled in " + fw.dist.name + "'s wheel"
                                            : std::string("a copy")) +
                                     ", through " + tag + " of " + obj_name,
                                 is_wheel || bundled});
            }
        }
    };
    auto pick = h.loader().pick(soname);
    bool by_env = pick.via == "LD_LIBRARY_PATH";
    if (dyn && dyn->runpath.empty()) {
        dirs_of(dyn->rpath, "DT_RPATH"); // before LD_LIBRARY_PATH
    }
    if (by_env) {
        order.push_back({pick.path, "LD_LIBRARY_PATH", false});
    }
    if (dyn) {
        dirs_of(dyn->runpath, "DT_RUNPATH"); // after LD_LIBRARY_PATH
    }
    if (!dyn && !own_lib.empty() && h.files().exists(own_lib + "/" + soname)) {
        order.push_back({own_lib + "/" + soname,
                         "the copy bundled in " + fw.dist.name + "'s wheel (torch/lib)",
                         true});
    }
    if (!dyn && wheel && !preloads) {
        // no object to read: PyTorch's wheels set DT_RPATH to their nvidia-* wheels
        // (pytorch/builder#1150), so the wheel comes first
        order.push_back({wheel->first, wheel->second + " (the wheels' own search path)", true});
    }
    if (!by_env && !pick.path.empty()) {
        order.push_back({pick.path, "the loader (" + pick.via + ")", false});
    }
    FwLoad out;
    std::set<std::string> seen;
    for (const auto& c : order) {
        if (!seen.insert(h.files().canonical(c.path)).second) {
            continue;
        }
        if (out.path.empty()) {
            out.path = c.path;
            out.how = c.how;
            out.wheel = c.wheel;
        } else {
            out.passed_over.push_back(c.path + " (" + c.how + ")");
        }
    }
    if (!out.path.empty()) {
        if (out.wheel && out.how.rfind("the wheel ", 0) == 0) {
            auto sp = out.how.find(' ', std::string("the wheel ").size());
            out.version = out.how.rfind("the wheel ", 0) == 0 && sp != std::string::npos
                              ? out.how.substr(sp + 1, out.how.find(',', sp) - sp - 1)
                              : library_version(h, soname, out.path);
            out.version = out.version.substr(0, out.version.find(' '));
        } else {
            out.version = library_version(h, soname, out.path);
        }
    }
    return out;
}

/// PyTorch or JAX: what it was built for, what it would load, and what does not fit.
void python_framework(Host& h,
                      const std::vector<std::string>& sites,
                      const pyenv::Framework& fw,
                      std::vector<std::string>& details,
                      std::vector<Issue>& issues,
                      std::vector<std::string>& oks) {
    std::string label = fw.name == "pytorch"
                            ? "torch " + fw.dist.version
                            : "jax " + (fw.version ? fw.version->str() : fw.dist.version);
    if (!fw.also_installed.empty()) {
        issues.push_back({Status::warn,
                          label + " is installed twice in one site-packages (" +
                              fw.dist.dist_info.substr(fw.dist.dist_info.rfind('/') + 1) + " and " +
                              join(fw.also_installed) +
                              "): one installer wrote over the other's files (conda's egg-info "
                              "and a pip or uv wheel)",
                          "keep one: pip uninstall torch (repeat until none is left), then "
                          "reinstall with the installer that owns the environment"});
    }
    if (fw.cpu_only || !fw.cuda) {
        details.push_back(label + " in " + fw.dist.site + ", no CUDA");
        issues.push_back({Status::warn,
                          label + " is a CPU-only build",
                          fw.name == "pytorch"
                              ? "pip install torch --index-url "
                                "https://download.pytorch.org/whl/cu126 (see cudaenv env "
                                "--for pip)"
                              : "pip install 'jax[cuda12]'"});
        return;
    }
    const Version cuda = *fw.cuda;
    details.push_back(label + " in " + fw.dist.site + ", built for CUDA " + cuda.str() + " (" +
                      fw.cuda_from + (fw.variant.empty() ? "" : ", build " + fw.variant) + ")");
    const manifest::Framework* mf = nullptr;
    for (const auto& f : h.manifests().frameworks()) {
        mf = f.name == fw.name ? &f : mf;
    }
    const auto* row = mf && fw.version ? mf->find(*fw.version) : nullptr;
    const auto* var = row ? row->variant(fw.variant) : nullptr;
    unsigned dnn_major = var && var->cudnn ? var->cudnn->major() : (cuda.major() >= 12 ? 9u : 8u);
    for (const auto& [name, version] : fw.nvidia) {
        if (name.rfind("nvidia_cudnn_cu", 0) == 0) {
            if (auto v = Version::try_parse(version)) {
                dnn_major = v->major();
            }
        }
    }
    // torch before 1.13 carries its CUDA libraries in torch/lib; 1.13 on takes nvidia-* wheels
    bool bundles = fw.name == "pytorch" && fw.version &&
                   Version::compare_numeric(*fw.version, *Version::try_parse("1.13")) < 0;
    std::string cublas = "libcublas.so." + std::to_string(cuda.major());
    std::string cudnn = "libcudnn.so." + std::to_string(dnn_major);
    bool all_load = true;
    for (const auto& [dir, soname] :
         {std::pair<std::string, std::string>{"cudnn", cudnn}, {"cublas", cublas}}) {
        auto l = framework_load(h, sites, fw, dir, soname);
        if (l.path.empty()) {
            all_load = false;
            issues.push_back({Status::fail,
                              label + " needs " + soname + " but none would load",
                              fw.name == "pytorch" && bundles
                                  ? "pip install --force-reinstall 'torch==" + fw.dist.version +
                                        "' (its wheel bundles " + soname + " in torch/lib)"
                              : fw.name == "pytorch"
                                  ? "pip install --force-reinstall 'torch==" + fw.dist.version +
                                        "' (brings its nvidia-* wheels)"
                                  : "pip install --force-reinstall 'jax[" + fw.variant +
                                        "]==" + (fw.version ? fw.version->str() : "") + "'"});
            continue;
        }
        details.push_back(label + "'s " + soname + ": " + l.path + " (" + l.how +
                          (l.version.empty() ? "" : "; " + l.version) + ")" +
                          (l.passed_over.empty() ? "" : "; then: " + join(l.passed_over, "; ")));
        if (dir != "cudnn" || l.wheel) {
            continue;
        }
        // not the wheel: is the copy that wins one the framework accepts?
        auto loaded = Version::try_parse(l.version);
        if (mf && row && loaded) {
            auto ok = check_variant_compat(*mf, *row, var, cuda, loaded);
            if (!ok) {
                issues.push_back({Status::fail,
                                  label + " would load cuDNN " + l.version + " from " + l.path +
                                      " (" + l.how + "): " + ok.error().message,
                                  "unset LD_LIBRARY_PATH for it, or run it with cudaenv exec"});
                continue;
            }
        }
        if (!l.passed_over.empty()) {
            issues.push_back({Status::warn,
                              label + " would load " + soname + " from " + l.path + " (" + l.how +
                                  "), not the copy its wheels brought",
                              "remove that folder from LD_LIBRARY_PATH when running it"});
        }
    }
    // what its METADATA pins exactly against the wheels installed (pip check's view, without pip)
    for (const auto& pin : fw.pins) {
        auto op = pin.find("==");
        if (op == std::string::npos) {
            continue;
        }
        std::string name = pin.substr(0, std::min(pin.find('['), op));
        std::string want = pin.substr(op + 2);
        want = want.substr(0, want.find_first_of(" ,;"));
        std::string key = name;
        std::replace(key.begin(), key.end(), '-', '_');
        auto it = fw.nvidia.find(key);
        if (it == fw.nvidia.end()) {
            issues.push_back({Status::warn,
                              label + " pins " + name + "==" + want + ", which is not installed",
                              "pip install '" + name + "==" + want + "'"});
        } else if (it->second != want) {
            issues.push_back(
                {Status::warn,
                 label + " pins " + name + "==" + want + " but " + it->second + " is installed",
                 "pip install '" + name + "==" + want + "'"});
        } else {
            details.push_back(label + " pins " + pin + ": installed");
        }
    }
    // the selected nvcc against the CUDA it was built for: extensions are built with it
    const auto& t = h.facts().toolkit();
    if (t.cuda && t.cuda->major() != cuda.major()) {
        const auto* rule = mf ? mf->rule("cuda-major") : nullptr;
        issues.push_back({Status::warn,
                          label + " was built for CUDA " + cuda.str() +
                              " but the selected nvcc is " + t.cuda->str() +
                              ": extensions built with it fail" +
                              (rule ? " (" + rule->source + ")" : ""),
                          "cudaenv use --match (picks the installed CUDA that matches it)"});
    } else if (t.cuda && cuda.size() >= 2 && t.cuda->size() >= 2 &&
               t.cuda->minor() != cuda.minor() && !(var && var->cuda_floor)) {
        details.push_back(label + ": the selected nvcc " + t.cuda->str() +
                          " differs in the minor only (minor-version compatibility; PyTorch "
                          "warns)");
    }
    auto driver = h.facts().driver().version();
    const auto* rel = h.manifests().cuda_release_for(cuda.size() >= 2 ? cuda.truncated(2) : cuda);
    if (driver && rel && rel->driver_compat_min &&
        Version::compare_numeric(*driver, *rel->driver_compat_min) < 0) {
        issues.push_back({Status::fail,
                          label + " needs a driver for CUDA " + cuda.str() + " (>= " +
                              rel->driver_compat_min->str() + "), this one is " + driver->str(),
                          "upgrade the driver, or install a build for an older CUDA"});
    } else if (all_load) {
        oks.push_back(label + " built for CUDA " + cuda.str() + " (brings its own CUDA libraries)");
    }
}

} // namespace

Finding frameworks(Host& h) {
    HostFiles files(h.files());
    auto env = pyenv::active_environment(files);
    auto sites = env ? env->sites : std::vector<std::string>{};
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
    const auto& t = h.facts().toolkit();
    if (tf) {
        auto text =
            h.files().read(tf->site + "/tensorflow/python/platform/build_info.py", 64 * 1024);
        auto info = text ? pyenv::parse_tf_build_info(*text) : pyenv::TfBuildInfo{};
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
            auto rt = would_load(h, sites, wheels_first, "cuda_runtime", cu, cudart_soname(*built));
            details.push_back("tensorflow's CUDA runtime: " +
                              (rt.path.empty()
                                   ? "would load from nowhere"
                                   : rt.path + " (" + rt.source + "; " +
                                         against_selection(h, rt, cudart_soname(*built)) + ")"));
            bool pip_cuda = rt.source.rfind("pip's", 0) == 0;
            if (rt.path.empty()) {
                bool toolkit_has = t.cuda && t.cuda->major() == built->major();
                issues.push_back(
                    {Status::fail,
                     "tensorflow " + tf->version + " needs CUDA " + *cuda + " (" +
                         cudart_soname(*built) + ") but none will load: it falls back to the CPU",
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
            const auto& fws = h.manifests().frameworks();
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
    for (const auto& fw : pyenv::installed_frameworks(files, *env)) {
        if (fw.name != "tensorflow") {
            python_framework(h, sites, fw, details, issues, oks);
        }
    }
    if (!tf && !tf_cpu && oks.empty() && issues.empty()) {
        return skip("no TensorFlow, PyTorch or JAX in " + join(sites), details);
    }
    return verdict(std::move(issues), ok(join(oks, "; "), details));
}

} // namespace cudaenv::doctor::checks
