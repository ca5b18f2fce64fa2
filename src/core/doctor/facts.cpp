// The machine facts several probes share: PCI devices, the driver, the selected toolkit, WSL,
// containers; and the library query child's answers.
#include "facts.hpp"

#include "../activate/selection.hpp"
#include "../manifest/codec.hpp"
#include "../manifest/gpu_support.hpp"
#include "../store/records.hpp"
#include "answers.hpp"
#include "text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

namespace cudaenv::doctor {

namespace fs = std::filesystem;
using detail::join_machine;
using detail::lines_of;
using detail::trim;

Facts::Facts(const Files& files, Loader& loader, Manifests& manifests)
    : m_files(files), m_loader(loader), m_manifests(manifests) {}

std::optional<std::string> LibraryAnswer::get(const std::string& key) const {
    auto it = values.find(key);
    if (it == values.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::optional<long long> LibraryAnswer::number(const std::string& key) const {
    auto v = get(key);
    if (!v) {
        return std::nullopt;
    }
    long long n = 0;
    auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc() || p != v->data() + v->size()) {
        return std::nullopt;
    }
    return n;
}

std::optional<Version> DriverFacts::version() const {
    if (module_version) {
        if (auto v = Version::try_parse(*module_version)) {
            return v;
        }
    }
    if (nvml_version) {
        return Version::try_parse(*nvml_version);
    }
    return std::nullopt;
}

std::optional<Version> parse_nvcc_banner(std::string_view text) {
    // "Cuda compilation tools, release 11.8, V11.8.89"
    auto at = text.find("release ");
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    auto line = text.substr(at, text.find('\n', at) - at);
    auto v = line.find(", V");
    if (v != std::string_view::npos) {
        auto full = line.substr(v + 3);
        if (auto parsed = Version::try_parse(trim(full))) {
            return parsed;
        }
    }
    auto rel = line.substr(8, line.find(',') - 8);
    return Version::try_parse(trim(rel));
}

std::string cudart_soname(const Version& cuda) {
    // CUDA 10.x and older name the runtime by major.minor (libcudart.so.10.2, .9.0); CUDA 11
    // kept the ABI version "11.0"; from 12 on it is the major alone.
    unsigned major = cuda.major();
    if (major <= 10) {
        return "libcudart.so." + std::to_string(major) + "." +
               std::to_string(cuda.size() > 1 ? cuda.minor() : 0);
    }
    return major == 11 ? "libcudart.so.11.0" : "libcudart.so." + std::to_string(major);
}

namespace {

std::string pci_ids_name(const Files& f, std::string_view device_id) {
    // device_id "0x2330" -> look for "\t2330  name" in the 10de section of pci.ids.
    std::string want = std::string(device_id.substr(device_id.rfind('x') + 1));
    for (char& c : want) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    for (const char* db : {"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"}) {
        auto text = f.read(db, 8u << 20);
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

const std::vector<PciGpu>& Facts::pci_gpus() {
    if (m_pci) {
        return *m_pci;
    }
    std::vector<PciGpu> out;
    const std::string base = "/sys/bus/pci/devices";
    for (const auto& dev : m_files.list(base)) {
        auto dir = join_machine(base, dev);
        auto vendor = m_files.read(join_machine(dir, "vendor"), 64);
        auto cls = m_files.read(join_machine(dir, "class"), 64);
        if (!vendor || trim(*vendor) != "0x10de" || !cls || trim(*cls).rfind("0x03", 0) != 0) {
            continue;
        }
        PciGpu g;
        g.address = dev;
        g.sysfs = dir;
        g.device_id = trim(m_files.read(join_machine(dir, "device"), 64).value_or(""));
        auto sv = manifest::normalize_pci_id(
            trim(m_files.read(join_machine(dir, "subsystem_vendor"), 64).value_or("")));
        auto sd = manifest::normalize_pci_id(
            trim(m_files.read(join_machine(dir, "subsystem_device"), 64).value_or("")));
        if (!sv.empty() && !sd.empty()) {
            g.subsystem = sv + ":" + sd;
        }
        g.name = pci_ids_name(m_files, g.device_id);
        out.push_back(std::move(g));
    }
    return *(m_pci = std::move(out));
}

const DriverFacts& Facts::driver() {
    if (m_driver) {
        return *m_driver;
    }
    DriverFacts d;
    d.module_loaded = m_files.is_dir("/sys/module/nvidia");
    if (!d.module_loaded) {
        if (auto mods = m_files.read("/proc/modules")) {
            d.module_loaded =
                mods->rfind("nvidia ", 0) == 0 || mods->find("\nnvidia ") != mods->npos;
        }
    }
    if (auto text = m_files.read("/proc/driver/nvidia/version", 4096)) {
        d.module_version = parse_driver_version(*text);
        d.module_loaded = true; // the file exists only while the module is loaded
    }
    auto nvml = m_loader.pick("libnvidia-ml.so.1");
    d.nvml_path = nvml.path;
    if (nvml.path.empty()) {
        d.nvml_error = "libnvidia-ml.so.1 is not known to the loader";
    } else {
        const auto& a = query("nvml", nvml.path);
        d.nvml_ok = a.loaded && a.error.empty();
        d.nvml_error = a.error;
        d.nvml_version = a.get("driver_version");
        if (auto code = a.number("init_code")) {
            d.nvml_init_code = static_cast<int>(*code);
        }
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
            auto flag = [&](const char* f) -> std::optional<bool> {
                auto v = a.number(k(f));
                return v ? std::optional<bool>(*v != 0) : std::nullopt;
            };
            auto counter = [&](const char* f) -> std::optional<std::uint64_t> {
                auto v = a.number(k(f));
                return v && *v >= 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*v))
                                    : std::nullopt;
            };
            g.persistence = flag("persistence");
            g.ecc_uncorrected = counter("ecc_uncorrected_volatile");
            g.ecc_uncorrected_all = counter("ecc_uncorrected_aggregate");
            g.remap_pending = flag("remap_pending");
            g.remap_failed = flag("remap_failed");
            g.retired_pending = flag("retired_pages_pending");
            if (auto f = a.number(k("fabric_state")); f && *f > 0 && *f < 256) {
                g.fabric_state = static_cast<unsigned>(*f);
                if (auto st = a.number(k("fabric_status"))) {
                    g.fabric_status = static_cast<int>(*st);
                }
            }
            d.gpus.push_back(std::move(g));
        }
    }
    // the libraries' own version, from the real file's name: libnvidia-ml.so.1 ->
    // libnvidia-ml.so.550.54.15 (NVIDIA's installers and packages name them so)
    for (std::string_view base : {"libnvidia-ml.so.", "libcuda.so."}) {
        std::string soname = std::string(base) + "1";
        const auto& path = base == "libnvidia-ml.so." ? nvml.path : m_loader.pick(soname).path;
        if (path.empty()) {
            continue;
        }
        std::string real = m_files.canonical(path);
        std::string name = real.substr(real.rfind('/') + 1);
        if (name.starts_with(base)) {
            auto v = Version::try_parse(std::string_view(name).substr(base.size()));
            if (v && v->size() >= 2 && v->major() >= 100) {
                d.library_version = v->str();
                d.library_file = real;
                break;
            }
        }
    }
    return *(m_driver = std::move(d));
}

std::optional<Version> Facts::toolkit_version(const std::string& prefix) const {
    if (auto text = m_files.read(join_machine(prefix, "version.json"))) {
        auto doc = manifest::parse_json_text(*text, "version.json");
        if (doc && doc->is_object() && doc->contains("cuda") && (*doc)["cuda"].is_object()) {
            auto v = (*doc)["cuda"].value("version", "");
            if (auto parsed = Version::try_parse(v)) {
                return parsed;
            }
        }
    }
    if (auto text = m_files.read(join_machine(prefix, "version.txt"), 4096)) {
        auto at = text->find("Version ");
        if (at != std::string::npos) {
            if (auto v =
                    Version::try_parse(trim(text->substr(at + 8, text->find('\n', at) - at - 8))))
                return v;
        }
    }
    auto nvcc = join_machine(prefix, "bin/nvcc");
    if (m_files.exists(nvcc)) {
        if (auto ran = m_files.run({nvcc, "--version"}); ran && ran->status == 0) {
            if (auto v = parse_nvcc_banner(ran->out)) {
                return v->truncated(std::min<std::size_t>(2, v->size()));
            }
        }
    }
    for (const auto& name : m_files.list(join_machine(prefix, "lib64"))) {
        // libcudart.so.11.8.89
        if (name.rfind("libcudart.so.", 0) == 0) {
            if (auto v = Version::try_parse(name.substr(13)); v && v->size() >= 3) {
                return v->truncated(2);
            }
        }
    }
    return std::nullopt;
}

const Toolkit& Facts::toolkit() {
    if (m_toolkit) {
        return *m_toolkit;
    }
    Toolkit t;
    auto sel = activate::select(m_files.config().root,
                                m_manifests.frameworks(),
                                m_files.config().env,
                                m_files.config().cwd);
    if (!sel) {
        t.selection_error = sel.error().message;
    } else if (sel->version) {
        t.cudaenv_version = sel->version;
        t.origin = "cudaenv: " + *sel->version + " (" + sel->origin_text() + ")";
        t.prefix = m_files.machine_path(m_files.config().root.version_dir(*sel->version));
        if (auto text = m_files.read(m_files.machine_path(
                m_files.config().root.version_dir(*sel->version) / store::k_version_record))) {
            if (auto rec = store::decode_version_record(*text, "record")) {
                t.cuda = Version::try_parse(rec->cuda);
                t.cudnn = Version::try_parse(rec->cudnn);
                for (const auto& c : rec->components) {
                    if (c.component == "libcublas") {
                        t.cublas = Version::try_parse(c.version);
                        if (c.patch.starts_with("cublas ")) {
                            t.cublas_patch = c.patch.substr(7);
                        }
                    }
                }
            }
        }
    }
    if (t.prefix.empty() && t.selection_error.empty()) {
        if (m_files.exists("/usr/local/cuda") && m_files.is_dir("/usr/local/cuda")) {
            t.prefix = "/usr/local/cuda";
            t.origin = "system: /usr/local/cuda";
        } else {
            for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
                if (auto v = m_files.env(var); v && !v->empty() && m_files.is_dir(*v)) {
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
    return *(m_toolkit = std::move(t));
}

const manifest::CudaRelease* Facts::toolkit_release() {
    const auto& t = toolkit();
    if (!t.cuda) {
        return nullptr;
    }
    return m_manifests.cuda_release_for(*t.cuda);
}

bool Facts::in_wsl() {
    if (!m_wsl) {
        auto rel = m_files.read("/proc/sys/kernel/osrelease", 256).value_or("");
        auto ver = m_files.read("/proc/version", 1024).value_or("");
        auto has = [](const std::string& s) {
            std::string l = s;
            for (char& c : l) {
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            }
            return l.find("microsoft") != std::string::npos || l.find("wsl") != std::string::npos;
        };
        m_wsl = has(rel) || has(ver) || m_files.exists("/dev/dxg");
    }
    return *m_wsl;
}

std::string Facts::container() {
    if (!m_container) {
        std::string kind;
        if (m_files.exists("/run/.containerenv")) {
            kind = "podman";
        } else if (m_files.exists("/.dockerenv")) {
            kind = "docker";
        } else if (auto cg = m_files.read("/proc/1/cgroup", 64 * 1024)) {
            if (cg->find("kubepods") != std::string::npos) {
                kind = "kubernetes";
            } else if (cg->find("docker") != std::string::npos) {
                kind = "docker";
            } else if (cg->find("libpod") != std::string::npos) {
                kind = "podman";
            }
        }
        if (kind.empty() && m_files.env("container")) {
            kind = *m_files.env("container");
        }
        m_container = kind;
    }
    return *m_container;
}

std::vector<std::string> Facts::query_argv(std::string_view kind, std::string_view p) const {
    return {m_files.config().self_exe.string(),
            "__doctor-query",
            std::string(kind),
            m_files.at(p).string()};
}

void Facts::prefetch_query(std::string_view kind, std::string_view p) {
    // only what is remembered: a live answer (cuInit, NVML) is asked when a probe asks
    auto* answers = m_files.config().answers;
    if (!answers || m_files.config().self_exe.empty() || (kind != "cudart" && kind != "cudnn") ||
        m_answers.count(std::string(kind) + "\n" + std::string(p))) {
        return;
    }
    auto argv = query_argv(kind, p);
    answers->prefetch(m_files.processes(),
                      argv,
                      m_files.child_options(),
                      {argv[0], argv[3]},
                      m_files.env("LD_LIBRARY_PATH").value_or(""));
}

const LibraryAnswer& Facts::query(std::string_view kind, std::string_view p) {
    std::string key = std::string(kind) + "\n" + std::string(p);
    if (auto it = m_answers.find(key); it != m_answers.end()) {
        return it->second;
    }
    LibraryAnswer a;
    if (m_files.config().self_exe.empty()) {
        a.error = "no query helper (cudaenv's own path is unknown)";
    } else {
        // The library's own dependencies come from the machine's loader, as they would for a
        // program; LD_LIBRARY_PATH is passed on because it is part of what the user runs with.
        auto argv = query_argv(kind, p);
        // a library's version is the file's; libcuda's cuInit and NVML are the machine's now
        auto* answers = m_files.config().answers;
        auto ran = !answers ? m_files.processes().run(argv, m_files.child_options())
                   : kind == "cudart" || kind == "cudnn"
                       ? answers->run(m_files.processes(),
                                      argv,
                                      m_files.child_options(),
                                      {argv[0], argv[3]},
                                      m_files.env("LD_LIBRARY_PATH").value_or(""))
                       : answers->ask(m_files.processes(), argv, m_files.child_options());
        if (!ran) {
            a.error = ran.error().message;
        } else if (ran->timed_out) {
            char secs[32];
            std::snprintf(secs,
                          sizeof secs,
                          "%g",
                          static_cast<double>(m_files.config().child_timeout.count()) / 1000);
            a.error = std::string("did not answer within ") + secs + " s";
        } else {
            for (const auto& line : lines_of(ran->out)) {
                auto eq = line.find('=');
                if (eq != std::string::npos) {
                    a.values[line.substr(0, eq)] = line.substr(eq + 1);
                }
            }
            a.loaded = a.values.count("loaded") && a.values["loaded"] == "1";
            if (auto e = a.get("error")) {
                a.error = *e;
            } else if (ran->status != 0) {
                a.error =
                    ran->status > 128
                        ? "the query crashed (signal " + std::to_string(ran->status - 128) + ")"
                        : "the query exited with " + std::to_string(ran->status);
            }
        }
    }
    return m_answers.emplace(key, std::move(a)).first->second;
}

} // namespace cudaenv::doctor
