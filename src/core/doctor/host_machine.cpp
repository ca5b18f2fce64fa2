// The machine facts several probes share: PCI devices, the driver, the selected toolkit, WSL,
// containers.
#include "../activate/machine.hpp"
#include "../activate/selection.hpp"
#include "../manifest/codec.hpp"
#include "../manifest/gpu_support.hpp"
#include "../store/records.hpp"
#include "host_internal.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>

namespace cudaenv::doctor {

namespace fs = std::filesystem;
using detail::join_machine;
using detail::lines_of;
using detail::trim;

// -- facts ------------------------------------------------------------------------------------

namespace {

std::string pci_ids_name(const Host& h, std::string_view device_id) {
    // device_id "0x2330" -> look for "\t2330  name" in the 10de section of pci.ids.
    std::string want = std::string(device_id.substr(device_id.rfind('x') + 1));
    for (char& c : want) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    for (const char* db : {"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"}) {
        auto text = h.read(db, 8u << 20);
        if (!text) {
            continue;
        }
        auto vendor = text->rfind("10de  ", 0) == 0 ? 0 : text->find("\n10de  ");
        if (vendor == std::string::npos) {
            return {};
        }
        std::size_t pos = text->find('\n', vendor + 1) + 1;
        while (pos < text->size() && (*text)[pos] == '\t') {
            auto end = text->find('\n', pos);
            std::string_view line(text->data() + pos,
                                  (end == std::string::npos ? text->size() : end) - pos);
            if (line.size() > 1 && line[1] != '\t' && line.substr(1, want.size()) == want &&
                line.size() > want.size() + 3) {
                return trim(line.substr(1 + want.size()));
            }
            pos = end == std::string::npos ? text->size() : end + 1;
        }
        return {};
    }
    return {};
}

} // namespace

const std::vector<PciGpu>& Host::pci_gpus() {
    if (m_cache->pci) {
        return *m_cache->pci;
    }
    std::vector<PciGpu> out;
    const std::string base = "/sys/bus/pci/devices";
    for (const auto& dev : list(base)) {
        auto dir = join_machine(base, dev);
        auto vendor = read(join_machine(dir, "vendor"), 64);
        auto cls = read(join_machine(dir, "class"), 64);
        if (!vendor || trim(*vendor) != "0x10de" || !cls || trim(*cls).rfind("0x03", 0) != 0) {
            continue;
        }
        PciGpu g;
        g.address = dev;
        g.sysfs = dir;
        g.device_id = trim(read(join_machine(dir, "device"), 64).value_or(""));
        auto sv = manifest::normalize_pci_id(
            trim(read(join_machine(dir, "subsystem_vendor"), 64).value_or("")));
        auto sd = manifest::normalize_pci_id(
            trim(read(join_machine(dir, "subsystem_device"), 64).value_or("")));
        if (!sv.empty() && !sd.empty()) {
            g.subsystem = sv + ":" + sd;
        }
        g.name = pci_ids_name(*this, g.device_id);
        out.push_back(std::move(g));
    }
    return *(m_cache->pci = std::move(out));
}

std::string Host::today() {
    if (auto t = env("CUDAENV_TODAY"); t && t->size() == 10) {
        return *t;
    }
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
}

const DriverFacts& Host::driver() {
    if (m_cache->driver) {
        return *m_cache->driver;
    }
    DriverFacts d;
    d.module_loaded = is_dir("/sys/module/nvidia");
    if (!d.module_loaded) {
        if (auto mods = read("/proc/modules")) {
            d.module_loaded =
                mods->rfind("nvidia ", 0) == 0 || mods->find("\nnvidia ") != mods->npos;
        }
    }
    if (auto text = read("/proc/driver/nvidia/version", 4096)) {
        d.module_version = parse_driver_version(*text);
        d.module_loaded = true; // the file exists only while the module is loaded
    }
    auto nvml = pick("libnvidia-ml.so.1");
    d.nvml_path = nvml.path;
    if (nvml.path.empty()) {
        d.nvml_error = "libnvidia-ml.so.1 is not known to the loader";
    } else {
        const auto& a = query("nvml", nvml.path);
        d.nvml_ok = a.loaded && a.error.empty();
        d.nvml_error = a.error;
        d.nvml_version = a.get("driver_version");
        auto count = a.number("gpu_count").value_or(0);
        for (long long i = 0; i < count && i < 64; ++i) {
            auto k = [&](const char* f) { return "gpu." + std::to_string(i) + "." + f; };
            NvmlGpu g;
            g.name = a.get(k("name")).value_or("");
            g.bus_id = a.get(k("bus_id")).value_or("");
            if (auto cc = a.get(k("cc"))) {
                if (auto v = Version::try_parse(*cc)) {
                    g.compute_capability = v->major() * 10 + v->minor();
                }
            }
            if (auto m = a.number(k("mig_current"))) {
                g.mig_enabled = *m != 0;
            }
            if (auto m = a.number(k("mig_pending"))) {
                g.mig_pending = *m != 0;
            }
            for (int j = 0; j < 64; ++j) {
                auto name = a.get(k("mig.") + std::to_string(j));
                if (!name) {
                    break;
                }
                g.mig_instances.push_back(*name);
            }
            if (auto t = a.number(k("temperature"))) {
                g.temperature = static_cast<unsigned>(*t);
            }
            if (auto t = a.number(k("slowdown_temperature"))) {
                g.slowdown_temperature = static_cast<unsigned>(*t);
            }
            if (auto t = a.number(k("throttle_reasons"))) {
                g.throttle_reasons = static_cast<std::uint64_t>(*t);
            }
            d.gpus.push_back(std::move(g));
        }
    }
    return *(m_cache->driver = std::move(d));
}

std::optional<Version> Host::toolkit_version(const std::string& prefix) {
    if (auto text = read(join_machine(prefix, "version.json"))) {
        auto doc = manifest::parse_json_text(*text, "version.json");
        if (doc && doc->is_object() && doc->contains("cuda") && (*doc)["cuda"].is_object()) {
            auto v = (*doc)["cuda"].value("version", "");
            if (auto parsed = Version::try_parse(v)) {
                return parsed;
            }
        }
    }
    if (auto text = read(join_machine(prefix, "version.txt"), 4096)) {
        auto at = text->find("Version ");
        if (at != std::string::npos) {
            if (auto v =
                    Version::try_parse(trim(text->substr(at + 8, text->find('\n', at) - at - 8))))
                return v;
        }
    }
    auto nvcc = join_machine(prefix, "bin/nvcc");
    if (exists(nvcc)) {
        if (auto ran = run({nvcc, "--version"}); ran && ran->status == 0) {
            if (auto v = parse_nvcc_banner(ran->out)) {
                return v->truncated(std::min<std::size_t>(2, v->size()));
            }
        }
    }
    for (const auto& name : list(join_machine(prefix, "lib64"))) {
        // libcudart.so.11.8.89
        if (name.rfind("libcudart.so.", 0) == 0) {
            if (auto v = Version::try_parse(name.substr(13)); v && v->size() >= 3) {
                return v->truncated(2);
            }
        }
    }
    return std::nullopt;
}

const Toolkit& Host::toolkit() {
    if (m_cache->toolkit) {
        return *m_cache->toolkit;
    }
    Toolkit t;
    auto sel = activate::select(m_config.root, frameworks(), m_config.env, m_config.cwd);
    if (!sel) {
        t.selection_error = sel.error().message;
    } else if (sel->version) {
        t.cudaenv_version = sel->version;
        t.origin = "cudaenv: " + *sel->version + " (" + sel->origin_text() + ")";
        t.prefix = machine_path(m_config.root.version_dir(*sel->version));
        if (auto text = read(
                machine_path(m_config.root.version_dir(*sel->version) / store::k_version_record))) {
            if (auto rec = store::decode_version_record(*text, "record")) {
                t.cuda = Version::try_parse(rec->cuda);
                t.cudnn = Version::try_parse(rec->cudnn);
            }
        }
    }
    if (t.prefix.empty() && t.selection_error.empty()) {
        if (exists("/usr/local/cuda") && is_dir("/usr/local/cuda")) {
            t.prefix = "/usr/local/cuda";
            t.origin = "system: /usr/local/cuda";
        } else {
            for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
                if (auto v = env(var); v && !v->empty() && is_dir(*v)) {
                    t.prefix = *v;
                    t.origin = std::string("system: ") + var;
                    break;
                }
            }
        }
    }
    if (!t.prefix.empty() && !t.cuda) {
        t.cuda = toolkit_version(t.prefix);
    }
    return *(m_cache->toolkit = std::move(t));
}

bool Host::in_wsl() {
    if (!m_cache->wsl) {
        auto rel = read("/proc/sys/kernel/osrelease", 256).value_or("");
        auto ver = read("/proc/version", 1024).value_or("");
        auto has = [](const std::string& s) {
            std::string l = s;
            for (char& c : l) {
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            }
            return l.find("microsoft") != std::string::npos || l.find("wsl") != std::string::npos;
        };
        m_cache->wsl = has(rel) || has(ver) || exists("/dev/dxg");
    }
    return *m_cache->wsl;
}

std::string Host::container() {
    if (!m_cache->container) {
        std::string kind;
        if (exists("/run/.containerenv")) {
            kind = "podman";
        } else if (exists("/.dockerenv")) {
            kind = "docker";
        } else if (auto cg = read("/proc/1/cgroup", 64 * 1024)) {
            if (cg->find("kubepods") != std::string::npos) {
                kind = "kubernetes";
            } else if (cg->find("docker") != std::string::npos) {
                kind = "docker";
            } else if (cg->find("libpod") != std::string::npos) {
                kind = "podman";
            }
        }
        if (kind.empty() && env("container")) {
            kind = *env("container");
        }
        m_cache->container = kind;
    }
    return *m_cache->container;
}

} // namespace cudaenv::doctor
