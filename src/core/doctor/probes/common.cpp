#include "../../manifest/gpu_support.hpp"
#include "../../resolve/gpu_driver.hpp"
#include "probes.hpp"

#include <algorithm>
#include <cctype>

namespace cudaenv::doctor::checks {

std::string gpu_label(std::size_t index, const std::string& name) {
    return "GPU " + std::to_string(index) + (name.empty() ? "" : " (" + name + ")");
}

std::string sm(unsigned cc) {
    return "sm_" + std::to_string(cc);
}

std::string cc_dotted(unsigned cc) {
    return std::to_string(cc / 10) + "." + std::to_string(cc % 10);
}

std::string cuda_from_int(long long v) {
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string cudnn_from_int(long long v) {
    long long unit = v >= 90000 ? 10000 : 1000;
    return std::to_string(v / unit) + "." + std::to_string((v % unit) / 100) + "." +
           std::to_string(v % 100);
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    return s;
}

bool gpu_related(const ConfEntry& c) {
    std::string what = lower(c.file + " " + c.dir);
    return what.find("cuda") != std::string::npos || what.find("nvidia") != std::string::npos ||
           what.find("cudnn") != std::string::npos;
}

bool under_or_at(const std::string& path, const std::string& dir) {
    return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                           path[dir.size()] == '/');
}

std::string lib_dir(Host& h, const std::string& prefix) {
    std::string base = prefix == "/" ? "" : prefix;
    if (h.files().is_dir(base + "/lib64")) {
        return base + "/lib64";
    }
    return base + "/lib";
}

const manifest::Gpu* gpu_model(Host& h, const std::string& name) {
    return family_row(h.manifests().gpu_table(), name);
}

std::string library_label(const std::string& soname) {
    if (soname.rfind("libcudnn.", 0) == 0) {
        return "cuDNN";
    }
    if (soname.rfind("libcudart.", 0) == 0) {
        return "the CUDA runtime";
    }
    if (soname.rfind("libcublas.", 0) == 0) {
        return "cuBLAS";
    }
    return soname;
}

std::string library_version(Host& h, const std::string& soname, const std::string& path) {
    if (soname.rfind("libcudnn.", 0) == 0) {
        if (auto v = h.facts().query("cudnn", path).number("version"); v && *v > 0) {
            return cudnn_from_int(*v);
        }
    } else if (soname.rfind("libcudart.", 0) == 0) {
        const auto& a = h.facts().query("cudart", path);
        if (auto v = a.number("version"); v && *v > 0 && a.number("rc").value_or(0) == 0) {
            return cuda_from_int(*v);
        }
    }
    // libcudnn.so.8.2.4, libcudart.so.11.8.89: the file's name after the SONAME
    std::string real = h.files().canonical(path);
    std::string name = real.substr(real.rfind('/') + 1);
    std::string base = soname.substr(0, soname.find(".so") + 3) + ".";
    if (name.rfind(base, 0) == 0) {
        if (auto v = Version::try_parse(name.substr(base.size())); v && v->size() > 1) {
            return v->str();
        }
    }
    return {};
}

std::string wrong_copy_fix(Host& h, const LoaderPick& p) {
    std::string dir = p.path.substr(0, p.path.rfind('/'));
    std::string exec =
        ", or run programs through `cudaenv exec` (it puts the selected lib64 first)";
    if (p.via == "LD_LIBRARY_PATH") {
        return "drop " + dir +
               " from LD_LIBRARY_PATH (unset LD_LIBRARY_PATH, or eval \"$(cudaenv env)\")" + exec;
    }
    if (auto pkg = h.loader().package_owner(p.path); !pkg.empty()) {
        return "the Debian package " + pkg + " puts it there: sudo apt remove " + pkg +
               " if nothing else needs it (apt says what would go)" + exec;
    }
    std::string real_dir = h.files().canonical(dir);
    auto defaults = h.loader().default_lib_dirs();
    bool system_dir = std::any_of(defaults.begin(), defaults.end(), [&](const std::string& d) {
        return h.files().canonical(d) == real_dir;
    });
    if (!system_dir) {
        for (const auto& c : h.loader().conf_dirs()) {
            // a CUDA folder some package or admin listed; never the distribution's own lists
            // (libc.conf's /usr/local/lib, x86_64-linux-gnu.conf)
            if (gpu_related(c) && h.files().canonical(c.dir) == real_dir) {
                return "sudo rm " + c.file + " && sudo ldconfig (it lists " + c.dir +
                       "; cudaenv global manages the machine's entry)" + exec;
            }
        }
    }
    return "no package owns " + h.files().canonical(p.path) + " (a manual copy): move the " +
           p.soname.substr(0, p.soname.find(".so")) + "* files out of " + dir +
           " and run sudo ldconfig" + exec;
}

std::vector<std::string> gpus_without_forward_compat(Host& h) {
    const auto& support = h.manifests().gpu_support();
    std::vector<std::string> out;
    for (const auto& g : h.facts().pci_gpus()) {
        const auto* l = support.find(manifest::normalize_pci_id(g.device_id), g.subsystem);
        // the marks cover the ids NVIDIA's open-module lists hold (Turing on); a GPU they do not
        // list (a V100, a P100: data-center parts forward compatibility runs on) is counted
        // only when its name says it is not a data-center part
        bool consumer = false;
        for (std::string_view word : {"geforce", "titan", "quadro"}) {
            consumer = consumer || lower(g.name).find(word) != std::string::npos;
        }
        if (l ? !l->forward_compat : consumer) {
            std::string name = !g.name.empty() ? g.name
                               : l             ? l->name
                                               : "NVIDIA device " + g.device_id;
            out.push_back(name + " (" + g.address + ")");
        }
    }
    return out;
}

std::string jetson_gpu_name(const sys::HostMachine& m) {
    if (m.kind != sys::HostKind::jetson) {
        return {};
    }
    std::string soc = m.jetson ? m.jetson->soc : std::string();
    if (!soc.empty()) {
        soc[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(soc[0])));
    }
    std::string name = soc.empty() ? "Jetson integrated GPU" : "Jetson " + soc + " integrated GPU";
    if (m.jetson && !m.jetson->compatible.empty()) {
        name += " (" + m.jetson->compatible + ")";
    }
    return name;
}

unsigned jetson_compute_capability(const sys::HostMachine& m) {
    // Orin's iGPU is sm_87, Thor's sm_110 (../shared/reference/jetson.json)
    std::string soc = m.jetson ? m.jetson->soc : std::string();
    return soc == "orin" ? 87u : soc == "thor" ? 110u : 0u;
}

} // namespace cudaenv::doctor::checks
