#include "pyenv.hpp"

#include "../fs.hpp"
#include "pyinfo.hpp"

#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace cudaenv::pyenv {

namespace fs = std::filesystem;

// ---- the real filesystem ------------------------------------------------------------------

std::vector<std::string> RealFiles::list(const std::string& dir) const {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        out.push_back(it->path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<std::string> RealFiles::read(const std::string& file, std::size_t max) const {
    return read_file_prefix(file, max);
}

bool RealFiles::is_dir(const std::string& path) const {
    std::error_code ec;
    return fs::is_directory(path, ec);
}

bool RealFiles::exists(const std::string& path) const {
    struct stat st {};

    return ::lstat(path.c_str(), &st) == 0;
}

std::string RealFiles::canonical(const std::string& path) const {
    std::error_code ec;
    auto p = fs::weakly_canonical(path, ec);
    return ec ? path : p.string();
}

std::optional<std::string> RealFiles::env(const std::string& name) const {
    auto it = m_env.find(name);
    return it == m_env.end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::optional<std::string> RealFiles::which(const std::string& tool) const {
    auto path = env("PATH").value_or("");
    std::size_t pos = 0;
    while (pos <= path.size()) {
        auto colon = path.find(':', pos);
        std::string dir = path.substr(pos, colon == std::string::npos ? path.npos : colon - pos);
        pos = colon == std::string::npos ? path.size() + 1 : colon + 1;
        if (dir.empty()) {
            continue;
        }
        std::string file = dir + "/" + tool;
        if (::access(file.c_str(), X_OK) == 0 && !is_dir(file)) {
            return file;
        }
    }
    return std::nullopt;
}

// ---- the environment --------------------------------------------------------------------------

std::optional<Environment> active_environment(const Files& f) {
    Environment e;
    std::vector<std::string> prefixes;
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
        if (auto v = f.env(var); v && !v->empty()) {
            prefixes.push_back(*v);
            if (e.found_by.empty()) {
                e.found_by = var;
                e.prefix = *v;
            }
        }
    }
    if (prefixes.empty()) {
        if (auto py = f.which("python3")) {
            if (py->find("/.pyenv/shims/") != std::string::npos) {
                std::string root = py->substr(0, py->find("/shims/"));
                std::string version = f.env("PYENV_VERSION").value_or("");
                if (version.empty()) {
                    auto text = f.read(root + "/version", 256).value_or("");
                    version = text.substr(0, text.find_first_of("\r\n :"));
                }
                if (!version.empty()) {
                    prefixes.push_back(root + "/versions/" + version);
                }
            } else {
                std::string real = f.canonical(*py);
                auto bin = real.rfind("/bin/");
                if (bin != std::string::npos) {
                    prefixes.push_back(bin == 0 ? "/" : real.substr(0, bin));
                }
            }
            if (!prefixes.empty()) {
                e.prefix = prefixes.back();
                e.found_by = "python3 on PATH (" + *py + ")";
            }
        }
    }
    std::set<std::string> seen;
    auto add = [&](const std::string& d) {
        if (f.is_dir(d) && seen.insert(f.canonical(d)).second) {
            e.sites.push_back(d);
        }
    };
    for (const auto& p : prefixes) {
        std::string base = p == "/" ? "" : p;
        for (const auto& name : f.list(base + "/lib")) {
            if (name.rfind("python3", 0) == 0) {
                add(base + "/lib/" + name + "/site-packages");
                add(base + "/lib/" + name + "/dist-packages");
            }
        }
        if (base == "/usr") {
            add("/usr/lib/python3/dist-packages");
            for (const auto& name : f.list("/usr/local/lib")) {
                if (name.rfind("python3", 0) == 0) {
                    add("/usr/local/lib/" + name + "/dist-packages");
                }
            }
        }
    }
    if (auto home = f.env("HOME"); home && !f.env("VIRTUAL_ENV")) {
        for (const auto& name : f.list(*home + "/.local/lib")) {
            if (name.rfind("python3", 0) == 0) {
                add(*home + "/.local/lib/" + name + "/site-packages");
            }
        }
    }
    if (e.sites.empty()) {
        return std::nullopt;
    }
    return e;
}

// ---- distributions ----------------------------------------------------------------------------

namespace {

/// PEP 503 normalisation with "_" (what wheel writes in dist-info names), lower case.
std::string normalise(std::string_view name) {
    std::string out;
    for (char c : name) {
        bool sep = c == '-' || c == '_' || c == '.';
        if (sep) {
            if (out.empty() || out.back() != '_') {
                out.push_back('_');
            }
        } else {
            out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
        }
    }
    return out;
}

/// "torch-2.5.1+cu121.dist-info" -> {"torch", "2.5.1+cu121"}: the version is after the last '-'
/// (dist-info names escape '-' in names as '_'). setuptools' egg-info, which conda's pytorch
/// channel packages carry, names it "torch-2.0.1-py3.10.egg-info" (name, version, the Python
/// tag) or "torch-2.0.1.egg-info".
std::optional<std::pair<std::string, std::string>> split_dist_info(const std::string& entry) {
    constexpr std::string_view dist = ".dist-info";
    constexpr std::string_view egg = ".egg-info";
    std::string stem;
    bool is_egg = false;
    if (entry.size() > dist.size() && entry.ends_with(dist)) {
        stem = entry.substr(0, entry.size() - dist.size());
    } else if (entry.size() > egg.size() && entry.ends_with(egg)) {
        stem = entry.substr(0, entry.size() - egg.size());
        is_egg = true;
        auto tag = stem.rfind("-py");
        if (tag != std::string::npos && tag > 0 && stem.find('-') < tag) {
            stem.erase(tag); // "-py3.10"
        }
    } else {
        return std::nullopt;
    }
    auto dash = is_egg ? stem.find('-') : stem.rfind('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 == stem.size()) {
        return std::nullopt;
    }
    return std::make_pair(stem.substr(0, dash), stem.substr(dash + 1));
}

} // namespace

std::string Dist::public_version() const {
    return version.substr(0, version.find('+'));
}

std::string Dist::local() const {
    auto plus = version.find('+');
    return plus == std::string::npos ? std::string() : version.substr(plus + 1);
}

std::optional<Dist>
find_dist(const Files& f, const std::vector<std::string>& sites, const std::string& name) {
    std::string want = normalise(name);
    for (const auto& site : sites) {
        for (const auto& entry : f.list(site)) {
            auto parts = split_dist_info(entry);
            if (parts && normalise(parts->first) == want) {
                return Dist{parts->first, parts->second, site, site + "/" + entry};
            }
        }
    }
    return std::nullopt;
}

std::vector<Dist> dists_with_prefix(const Files& f,
                                    const std::vector<std::string>& sites,
                                    const std::string& prefix) {
    std::vector<Dist> out;
    std::set<std::string> seen;
    std::string want = normalise(prefix);
    for (const auto& site : sites) {
        for (const auto& entry : f.list(site)) {
            auto parts = split_dist_info(entry);
            if (parts && normalise(parts->first).rfind(want, 0) == 0 &&
                seen.insert(normalise(parts->first)).second) {
                out.push_back(Dist{parts->first, parts->second, site, site + "/" + entry});
            }
        }
    }
    return out;
}

std::vector<std::string> requires_dist(const Files& f, const Dist& d) {
    std::vector<std::string> out;
    auto text = f.read(d.dist_info + "/METADATA", 1u << 20);
    if (!text) {
        text = f.read(d.dist_info + "/PKG-INFO", 1u << 20); // an egg-info's
    }
    if (!text) {
        return out;
    }
    std::size_t pos = 0;
    while (pos < text->size()) {
        auto end = text->find('\n', pos);
        std::string line = text->substr(pos, end == std::string::npos ? text->npos : end - pos);
        pos = end == std::string::npos ? text->size() : end + 1;
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        if (line.empty()) {
            break; // the headers end at the first blank line; the description follows
        }
        constexpr std::string_view key = "Requires-Dist:";
        if (line.rfind(key, 0) == 0) {
            auto v = line.substr(key.size());
            v.erase(0, v.find_first_not_of(' '));
            out.push_back(v);
        }
    }
    return out;
}

// ---- frameworks -------------------------------------------------------------------------------

namespace {

std::vector<std::string> cuda_pins(const std::vector<std::string>& reqs) {
    std::vector<std::string> out;
    for (const auto& r : reqs) {
        if (r.rfind("nvidia-", 0) == 0 || r.rfind("cuda-toolkit", 0) == 0) {
            // "nvidia-cudnn-cu12==8.9.2.26", or as older setuptools wrote it (torch 2.2.2's
            // METADATA): "nvidia-cudnn-cu12 (==8.9.2.26) ; platform_system == ..."
            std::string pin;
            for (char c : r.substr(0, r.find(';'))) {
                if (c != ' ' && c != '(' && c != ')') {
                    pin.push_back(c);
                }
            }
            out.push_back(pin);
        }
    }
    return out;
}

std::map<std::string, std::string> nvidia_wheels(const Files& f,
                                                 const std::vector<std::string>& sites) {
    std::map<std::string, std::string> out;
    for (const auto& d : dists_with_prefix(f, sites, "nvidia_")) {
        out[normalise(d.name)] = d.version;
    }
    for (const auto& d : dists_with_prefix(f, sites, "cuda_toolkit")) {
        out[normalise(d.name)] = d.version;
    }
    return out;
}

/// The major.minor of an installed CUDA wheel of `major` (nvidia-cuda-nvcc-cu12 12.6.85 ->
/// 12.6; CUDA 13's wheels drop the suffix).
std::optional<std::pair<Version, std::string>>
wheel_cuda(const std::map<std::string, std::string>& wheels, unsigned major) {
    for (const char* base : {"nvidia_cuda_nvcc", "nvidia_cuda_runtime", "cuda_toolkit"}) {
        for (const auto& name :
             {std::string(base) + "_cu" + std::to_string(major), std::string(base)}) {
            auto it = wheels.find(name);
            if (it == wheels.end()) {
                continue;
            }
            auto v = Version::try_parse(it->second.substr(0, it->second.find_first_of("+-")));
            if (v && v->major() == major && v->size() >= 2) {
                std::string pretty = name;
                std::replace(pretty.begin(), pretty.end(), '_', '-');
                return std::make_pair(v->truncated(2), pretty + " " + it->second);
            }
        }
    }
    return std::nullopt;
}

/// A package conda installed into the environment, from its record (conda-meta/<name>-<version>-
/// <build>.json, the JSON conda writes for every package it links in).
struct CondaRecord {
    std::string version; ///< "2.1.0"
    std::string
        build;        ///< "py3.10_cuda12.1_cudnn8.9.2_0" (pytorch channel), "cuda118_py310h..._300"
    std::string file; ///< the record's path
};

std::optional<CondaRecord>
conda_record(const Files& f, const std::string& prefix, const std::string& name) {
    std::string dir = prefix + "/conda-meta";
    for (const auto& entry : f.list(dir)) {
        if (!entry.starts_with(name + "-") || !entry.ends_with(".json")) {
            continue;
        }
        auto text = f.read(dir + "/" + entry, 4u << 20);
        auto doc = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
        if (!doc.is_object() || !doc.contains("name") || !doc["name"].is_string() ||
            doc["name"].get<std::string>() != name) {
            continue; // "pytorch-cuda-12.1-...json" is another package
        }
        auto str = [&](const char* k) {
            return doc.contains(k) && doc[k].is_string() ? doc[k].get<std::string>() : "";
        };
        return CondaRecord{str("version"), str("build"), dir + "/" + entry};
    }
    return std::nullopt;
}

/// The CUDA a conda build string names: the pytorch channel's "py3.10_cuda12.1_cudnn8.9.2_0",
/// conda-forge's "cuda118_py310h..." (118 = 11.8, 120 = 12.0); none for "cpu_..." builds.
std::optional<Version> conda_build_cuda(const std::string& build) {
    std::size_t at = 0;
    while ((at = build.find("cuda", at)) != std::string::npos) {
        bool starts = at == 0 || build[at - 1] == '_';
        std::size_t end = build.find('_', at);
        std::string tag =
            build.substr(at + 4, end == std::string::npos ? std::string::npos : end - at - 4);
        at += 4;
        if (!starts || tag.empty()) {
            continue;
        }
        if (tag.find('.') != std::string::npos) {
            if (auto v = Version::try_parse(tag); v && v->size() == 2) {
                return v;
            }
        } else if (tag.size() == 3 && tag.find_first_not_of("0123456789") == std::string::npos) {
            return Version::try_parse(tag.substr(0, 2) + "." + tag.substr(2));
        }
    }
    return std::nullopt;
}

} // namespace

std::vector<Framework> installed_frameworks(const Files& f, const Environment& env) {
    std::vector<Framework> out;
    auto wheels = nvidia_wheels(f, env.sites);
    // TensorFlow
    auto tf = find_dist(f, env.sites, "tensorflow");
    if (!tf) {
        tf = find_dist(f, env.sites, "tensorflow_gpu");
    }
    auto tf_cpu = find_dist(f, env.sites, "tensorflow_cpu");
    if (tf || tf_cpu) {
        Framework fw;
        fw.name = "tensorflow";
        fw.dist = tf ? *tf : *tf_cpu;
        fw.version = Version::try_parse(fw.dist.public_version());
        fw.cpu_only = !tf;
        if (tf) {
            auto text = f.read(tf->site + "/tensorflow/python/platform/build_info.py", 64 * 1024);
            auto info = text ? parse_tf_build_info(*text) : TfBuildInfo{};
            if (info.cuda_build && info.cuda) {
                fw.cuda = Version::try_parse(*info.cuda);
                fw.cuda_from = "tensorflow/python/platform/build_info.py";
            }
            fw.cpu_only = text && !info.cuda_build;
        }
        fw.pins = cuda_pins(requires_dist(f, fw.dist));
        fw.nvidia = wheels;
        out.push_back(std::move(fw));
    }
    // PyTorch: pip's dist-info, setuptools' egg-info (conda's pytorch channel), or conda's record
    // (conda's records are read only where pip's and setuptools' files do not say)
    auto torch = find_dist(f, env.sites, "torch");
    std::optional<CondaRecord> conda_torch;
    if (!torch) {
        conda_torch = conda_record(f, env.prefix, "pytorch");
        if (conda_torch && !env.sites.empty()) {
            torch = Dist{"torch", conda_torch->version, env.sites.front(), conda_torch->file};
        }
    }
    if (torch) {
        Framework fw;
        fw.name = "pytorch";
        fw.dist = *torch;
        fw.version = Version::try_parse(torch->public_version());
        auto text = f.read(torch->site + "/torch/version.py", 64 * 1024);
        auto cuda = text ? parse_torch_cuda(*text) : std::nullopt;
        if (!text && !conda_torch) {
            conda_torch = conda_record(f, env.prefix, "pytorch");
        }
        auto conda_cuda = conda_torch ? conda_build_cuda(conda_torch->build) : std::nullopt;
        if (cuda) {
            fw.cuda = Version::try_parse(*cuda);
            fw.cuda_from = "torch/version.py";
        } else if (!text && conda_cuda) {
            fw.cuda = conda_cuda;
            fw.cuda_from = "conda's record (build " + conda_torch->build + ")";
        } else if (text || (conda_torch && conda_torch->build.starts_with("cpu"))) {
            fw.cpu_only = true;
        }
        std::string local = torch->local();
        if (local.rfind("cu", 0) == 0) {
            fw.variant = local; // download.pytorch.org's +cu121
        } else if (fw.cuda) {
            fw.variant = "cu" + std::to_string(fw.cuda->major()) +
                         std::to_string(fw.cuda->size() > 1 ? fw.cuda->minor() : 0);
        }
        fw.pins = cuda_pins(requires_dist(f, fw.dist));
        fw.nvidia = wheels;
        for (const auto& entry : f.list(torch->site)) {
            auto parts = split_dist_info(entry);
            if (parts && normalise(parts->first) == "torch" &&
                torch->site + "/" + entry != torch->dist_info) {
                fw.also_installed.push_back(torch->site + "/" + entry);
            }
        }
        out.push_back(std::move(fw));
    }
    // JAX: jaxlib carries the version; its CUDA is the plugin's (0.4.26 on) or jaxlib's local
    // version (+cuda12.cudnn89, before)
    if (auto jaxlib = find_dist(f, env.sites, "jaxlib")) {
        Framework fw;
        fw.name = "jax";
        fw.dist = *jaxlib;
        if (auto jax = find_dist(f, env.sites, "jax")) {
            fw.version = Version::try_parse(jax->public_version());
        }
        if (!fw.version) {
            fw.version = Version::try_parse(jaxlib->public_version());
        }
        std::optional<unsigned> major;
        std::string local = jaxlib->local(); // "cuda12.cudnn89"
        if (local.rfind("cuda", 0) == 0) {
            // the dist-info's name is the machine's, not ours: a number of at most two digits
            auto dot = local.find('.'); // "cuda12.cudnn89": at 6, never before 4
            auto v = Version::try_parse(
                local.substr(4, dot == std::string::npos ? std::string::npos : dot - 4));
            if (v && v->size() == 1 && v->major() >= 9 && v->major() < 100) {
                major = v->major();
                fw.cuda_from = "jaxlib " + jaxlib->version;
            }
        }
        for (unsigned m : {13u, 12u, 11u}) {
            if (major) {
                break;
            }
            for (const auto& plugin : {"jax_cuda" + std::to_string(m) + "_plugin",
                                       "jax_cuda" + std::to_string(m) + "_pjrt"}) {
                if (auto d = find_dist(f, env.sites, plugin)) {
                    major = m;
                    fw.cuda_from = plugin + " " + d->version;
                    std::replace(fw.cuda_from.begin(), fw.cuda_from.end(), '_', '-');
                    fw.pins = cuda_pins(requires_dist(f, *d));
                    break;
                }
            }
        }
        if (major) {
            fw.variant = "cuda" + std::to_string(*major);
            if (auto w = wheel_cuda(wheels, *major)) {
                fw.cuda = w->first;
                fw.cuda_from += " + " + w->second;
            } else {
                fw.cuda = Version::try_parse(std::to_string(*major));
            }
        } else {
            fw.cpu_only = true;
        }
        fw.nvidia = wheels;
        out.push_back(std::move(fw));
    }
    return out;
}

} // namespace cudaenv::pyenv
