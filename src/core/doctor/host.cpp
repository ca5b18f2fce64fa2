#include "host.hpp"

#include "../activate/machine.hpp"
#include "../activate/selection.hpp"
#include "../manifest/codec.hpp"
#include "../store/records.hpp"

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
#include <fstream>
#include <set>

namespace cudaenv::doctor {

namespace fs = std::filesystem;

namespace {

std::string trim(std::string_view s) {
    auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) {
        return {};
    }
    auto e = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> lines_of(std::string_view text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        out.emplace_back(text.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

std::string join_machine(std::string_view dir, std::string_view name) {
    std::string out(dir);
    while (out.size() > 1 && out.back() == '/') {
        out.pop_back();
    }
    if (out != "/") {
        out += '/';
    }
    out += name;
    return out;
}

} // namespace

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

std::optional<std::string> parse_driver_version(std::string_view text) {
    // NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023
    // NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build ...
    auto line = text.substr(0, text.find('\n'));
    auto at = line.find("Kernel Module");
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    std::string_view rest = line.substr(at);
    std::size_t pos = 0;
    while (pos < rest.size()) {
        auto b = rest.find_first_not_of(' ', pos);
        if (b == std::string_view::npos) {
            break;
        }
        auto e = rest.find(' ', b);
        std::string_view word = rest.substr(b, e == std::string_view::npos ? rest.npos : e - b);
        if (!word.empty() && word.find('.') != std::string_view::npos &&
            std::isdigit(static_cast<unsigned char>(word[0])) && Version::try_parse(word)) {
            return std::string(word);
        }
        pos = e == std::string_view::npos ? rest.size() : e;
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

std::string cudart_soname(unsigned cuda_major) {
    // CUDA 11 kept the ABI version "11.0"; from 12 on it is the major alone.
    return cuda_major == 11 ? "libcudart.so.11.0" : "libcudart.so." + std::to_string(cuda_major);
}

struct Host::Cache {
    std::optional<std::vector<PciGpu>> pci;
    std::optional<DriverFacts> driver;
    std::optional<Toolkit> toolkit;
    std::optional<bool> wsl;
    std::optional<std::string> container;
    std::optional<std::vector<ConfEntry>> conf;
    std::optional<std::vector<CacheEntry>> ld_cache;
    std::string ld_cache_error;
    std::map<std::string, LibraryAnswer, std::less<>> answers;
    std::map<std::string, std::optional<manifest::CudaRelease>, std::less<>> releases;
    std::optional<std::optional<manifest::Rules>> rules;
    std::optional<std::vector<manifest::Gpu>> gpus;
    std::optional<std::vector<manifest::Framework>> frameworks;
    std::map<std::string, std::string, std::less<>> owners; ///< real file -> package
};

Host::Host(HostConfig config) : m_config(std::move(config)), m_cache(std::make_unique<Cache>()) {
    if (m_config.sysroot.empty()) {
        m_config.sysroot = "/";
    }
}

Host::~Host() = default;

namespace {

/// `p` as the machine names it: a real path already under the sysroot is turned back.
fs::path machine_form(const fs::path& sysroot, std::string_view p) {
    fs::path path(p);
    auto rel = path.lexically_relative(sysroot);
    if (!rel.empty() && *rel.begin() != "..") {
        return rel == "." ? fs::path("/") : fs::path("/") / rel;
    }
    return path;
}

} // namespace

fs::path Host::at(std::string_view p) const {
    if (p.empty()) {
        return {}; // nothing (a link loop resolves to nothing)
    }
    if (m_config.sysroot == "/") {
        return fs::path(p);
    }
    // every link followed as the machine would: an absolute target stays in the sysroot
    return activate::resolve_in_sysroot(m_config.sysroot, machine_form(m_config.sysroot, p));
}

fs::path Host::at_entry(std::string_view p) const {
    if (m_config.sysroot == "/") {
        return fs::path(p);
    }
    auto mp = machine_form(m_config.sysroot, p);
    if (mp == "/" || !mp.has_filename()) {
        return at(p);
    }
    return activate::resolve_in_sysroot(m_config.sysroot, mp.parent_path()) / mp.filename();
}

std::string Host::machine_path(const fs::path& real) const {
    if (m_config.sysroot == "/") {
        return real.string();
    }
    auto rel = real.lexically_relative(m_config.sysroot);
    if (rel.empty() || *rel.begin() == "..") {
        return real.string();
    }
    return rel == "." ? "/" : "/" + rel.string();
}

std::optional<std::string> Host::read(std::string_view p, std::size_t max_bytes) const {
    std::ifstream in(at(p), std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    std::string out(max_bytes, '\0');
    in.read(out.data(), static_cast<std::streamsize>(max_bytes));
    out.resize(static_cast<std::size_t>(in.gcount()));
    return out;
}

bool Host::file_contains(std::string_view p, std::string_view needle) const {
    int fd = ::open(at(p).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }

    struct stat st {};

    bool found = false;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && !needle.empty()) {
        auto size = static_cast<std::size_t>(st.st_size);
        void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            found = ::memmem(map, size, needle.data(), needle.size()) != nullptr;
            ::munmap(map, size);
        }
    }
    ::close(fd);
    return found;
}

bool Host::exists(std::string_view p) const {
    struct stat st {};

    return ::lstat(at_entry(p).c_str(), &st) == 0;
}

bool Host::is_dir(std::string_view p) const {
    std::error_code ec;
    return fs::is_directory(at(p), ec);
}

std::vector<std::string> Host::list(std::string_view p) const {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(at(p), ec), end; !ec && it != end; it.increment(ec)) {
        out.push_back(it->path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<std::string> Host::read_link(std::string_view p) const {
    std::error_code ec;
    auto t = fs::read_symlink(at_entry(p), ec);
    if (ec) {
        return std::nullopt;
    }
    return t.string();
}

std::string Host::canonical(std::string_view p) const {
    if (m_config.sysroot == "/") {
        std::error_code ec;
        auto c = fs::weakly_canonical(fs::path(p), ec);
        return ec ? std::string(p) : c.string();
    }
    auto real = activate::resolve_in_sysroot(m_config.sysroot, machine_form(m_config.sysroot, p));
    return real.empty() ? std::string() : machine_path(real);
}

std::optional<std::string> Host::env(std::string_view name) const {
    auto it = m_config.env.find(std::string(name));
    if (it == m_config.env.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::vector<std::string> Host::path_list(std::string_view var) const {
    std::vector<std::string> out;
    auto v = env(var);
    if (!v) {
        return out;
    }
    std::size_t pos = 0;
    while (pos <= v->size()) {
        auto end = v->find(':', pos);
        if (end == std::string::npos) {
            end = v->size();
        }
        auto part = v->substr(pos, end - pos);
        if (!part.empty()) {
            out.push_back(part);
        }
        pos = end + 1;
    }
    return out;
}

std::optional<std::string> Host::which(std::string_view tool) const {
    for (const auto& dir : path_list("PATH")) {
        auto candidate = join_machine(dir, tool);
        if (::access(at(candidate).c_str(), X_OK) == 0 && !is_dir(candidate)) {
            return candidate;
        }
    }
    return std::nullopt;
}

Result<sys::ProcessResult> Host::run(std::vector<std::string> argv) const {
    if (argv.empty()) {
        return Error(ErrorCode::internal, "nothing to run");
    }
    argv[0] = at(argv[0]).string();
    sys::ProcessOptions o;
    o.timeout = m_config.child_timeout;
    std::vector<std::string> env;
    for (const auto& [k, v] : m_config.env) {
        env.push_back(k + "=" + v);
    }
    o.env = env;
    return sys::run_process(argv, o);
}

const LibraryAnswer& Host::query(std::string_view kind, std::string_view p) {
    std::string key = std::string(kind) + "\n" + std::string(p);
    if (auto it = m_cache->answers.find(key); it != m_cache->answers.end()) {
        return it->second;
    }
    LibraryAnswer a;
    if (m_config.self_exe.empty()) {
        a.error = "no query helper (cudaenv's own path is unknown)";
    } else {
        sys::ProcessOptions o;
        o.timeout = m_config.child_timeout;
        // The library's own dependencies come from the machine's loader, as they would for a
        // program; LD_LIBRARY_PATH is passed on because it is part of what the user runs with.
        std::vector<std::string> env;
        for (const auto& [k, v] : m_config.env) {
            env.push_back(k + "=" + v);
        }
        o.env = env;
        auto ran = sys::run_process(
            {m_config.self_exe.string(), "__doctor-query", std::string(kind), at(p).string()}, o);
        if (!ran) {
            a.error = ran.error().message;
        } else if (ran->timed_out) {
            char secs[32];
            std::snprintf(secs,
                          sizeof secs,
                          "%g",
                          static_cast<double>(m_config.child_timeout.count()) / 1000);
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
    return m_cache->answers.emplace(key, std::move(a)).first->second;
}

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
        g.name = pci_ids_name(*this, g.device_id);
        out.push_back(std::move(g));
    }
    return *(m_cache->pci = std::move(out));
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

// -- the loader ---------------------------------------------------------------------------------

const std::vector<ConfEntry>& Host::conf_dirs() {
    if (m_cache->conf) {
        return *m_cache->conf;
    }
    std::vector<ConfEntry> out;
    std::set<std::string> seen_files;
    // ld.so.conf and what it includes, in order; globs expand sorted, as ldconfig does.
    auto parse = [&](auto& self, const std::string& file, int depth) -> void {
        if (depth > 8 || !seen_files.insert(file).second) {
            return;
        }
        auto text = read(file);
        if (!text) {
            return;
        }
        for (auto line : lines_of(*text)) {
            line = trim(line.substr(0, line.find('#')));
            if (line.empty() || line.rfind("hwcap ", 0) == 0) {
                continue;
            }
            if (line.rfind("include", 0) == 0 && line.size() > 7 &&
                std::isspace(static_cast<unsigned char>(line[7]))) {
                std::string pattern = trim(line.substr(8));
                if (!pattern.empty() && pattern[0] != '/') {
                    pattern = join_machine(fs::path(file).parent_path().string(), pattern);
                }
                auto slash = pattern.rfind('/');
                std::string dir = pattern.substr(0, slash == 0 ? 1 : slash);
                std::string glob = pattern.substr(slash + 1);
                for (const auto& name : list(dir)) {
                    if (::fnmatch(glob.c_str(), name.c_str(), 0) == 0) {
                        self(self, join_machine(dir, name), depth + 1);
                    }
                }
                continue;
            }
            // "dir" or "dir=TYPE"; several may share a line
            std::size_t pos = 0;
            while (pos < line.size()) {
                auto b = line.find_first_not_of(" \t,:", pos);
                if (b == std::string::npos) {
                    break;
                }
                auto e = line.find_first_of(" \t,:", b);
                std::string dir = line.substr(b, e == std::string::npos ? e : e - b);
                dir = dir.substr(0, dir.find('='));
                while (dir.size() > 1 && dir.back() == '/') {
                    dir.pop_back();
                }
                if (!dir.empty()) {
                    out.push_back({dir, file});
                }
                pos = e == std::string::npos ? line.size() : e;
            }
        }
    };
    parse(parse, "/etc/ld.so.conf", 0);
    return *(m_cache->conf = std::move(out));
}

const std::vector<CacheEntry>& Host::ld_cache() {
    if (m_cache->ld_cache) {
        return *m_cache->ld_cache;
    }
    std::vector<CacheEntry> out;
    activate::Machine m;
    m.sysroot = m_config.sysroot;
    m.ldconfig = m_config.ldconfig;
    if (!exists("/etc/ld.so.cache")) {
        m_cache->ld_cache_error = "there is no loader cache (/etc/ld.so.cache)";
    } else if (auto text = activate::print_ld_cache(m); !text) {
        m_cache->ld_cache_error = text.error().message;
    } else {
        out = activate::parse_ld_cache(*text);
    }
    return *(m_cache->ld_cache = std::move(out));
}

const std::string& Host::ld_cache_error() {
    (void)ld_cache();
    return m_cache->ld_cache_error;
}

std::vector<std::string> Host::default_lib_dirs() const {
#if defined(__aarch64__)
    const char* triplet = "aarch64-linux-gnu";
#else
    const char* triplet = "x86_64-linux-gnu";
#endif
    return {std::string("/lib/") + triplet,
            std::string("/usr/lib/") + triplet,
            "/lib64",
            "/usr/lib64",
            "/lib",
            "/usr/lib"};
}

std::string Host::package_owner(std::string_view machine_path) {
    std::string real = canonical(machine_path);
    if (auto it = m_cache->owners.find(real); it != m_cache->owners.end()) {
        return it->second;
    }
    // dpkg's lists name files as the package ships them (/lib/x86_64-linux-gnu/… on a merged-/usr
    // machine is /usr/lib/…): compare the real files of the lines that end in the same name.
    std::string name = fs::path(real).filename().string();
    std::string owner;
    for (const auto& list : this->list("/var/lib/dpkg/info")) {
        if (list.size() < 6 || list.compare(list.size() - 5, 5, ".list") != 0) {
            continue;
        }
        auto text = read("/var/lib/dpkg/info/" + list);
        if (!text) {
            continue;
        }
        std::string_view rest = *text;
        while (!rest.empty() && owner.empty()) {
            auto nl = rest.find('\n');
            std::string_view line = rest.substr(0, nl);
            rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
            if (line.size() > name.size() && line.ends_with(name) &&
                line[line.size() - name.size() - 1] == '/' && canonical(line) == real) {
                owner = list.substr(0, list.size() - 5);
                owner = owner.substr(0, owner.find(':')); // libcudnn8:amd64 -> libcudnn8
            }
        }
        if (!owner.empty()) {
            break;
        }
    }
    m_cache->owners.emplace(real, owner);
    return owner;
}

LoaderPick Host::pick(std::string_view soname) {
    LoaderPick p;
    p.soname = soname;
    std::vector<std::string> candidates; // every copy, in the loader's order
    std::set<std::string> real_seen;
    auto consider = [&](const std::string& dir, const char* via) {
        auto file = join_machine(dir, soname);
        if (!exists(file) || is_dir(file)) {
            return;
        }
        if (p.path.empty() && via) {
            p.path = file;
            p.via = via;
        }
        candidates.push_back(file);
    };
    for (const auto& dir : path_list("LD_LIBRARY_PATH")) {
        consider(dir, "LD_LIBRARY_PATH");
    }
    const auto& cache = ld_cache();
    // Real folders and files, never names: on a merged-/usr machine /lib/x86_64-linux-gnu and
    // /usr/lib/x86_64-linux-gnu are one folder, and ldconfig records only the first name.
    std::set<std::string> cached_dirs, cached_files;
    for (const auto& e : cache) {
        if (e.soname == soname) {
            if (p.path.empty() && exists(e.path)) {
                p.path = e.path;
                p.via = "ld.so.cache";
            }
            candidates.push_back(e.path);
            cached_dirs.insert(canonical(fs::path(e.path).parent_path().string()));
            cached_files.insert(canonical(e.path));
        }
    }
    for (const auto& c : conf_dirs()) {
        auto file = join_machine(c.dir, soname);
        if (exists(file) && !is_dir(file)) {
            candidates.push_back(file);
            if (!cached_dirs.count(canonical(c.dir)) && !cached_files.count(canonical(file)) &&
                ld_cache_error().empty()) {
                p.not_in_cache.push_back(file);
            }
        }
    }
    for (const auto& dir : default_lib_dirs()) {
        consider(dir, "default directories");
    }
    // Shadowed: other real files (the same file reached through several folders is one copy).
    std::string chosen = p.path.empty() ? std::string() : canonical(p.path);
    real_seen.insert(chosen);
    for (const auto& c : candidates) {
        auto real = canonical(c);
        if (real_seen.insert(real).second) {
            p.shadowed.push_back(c);
        }
    }
    return p;
}

// -- manifests ----------------------------------------------------------------------------------

const manifest::CudaRelease* Host::cuda_release_for(const Version& mm) {
    std::string key = mm.str();
    auto it = m_cache->releases.find(key);
    if (it == m_cache->releases.end()) {
        std::optional<manifest::CudaRelease> best;
        std::optional<Version> best_v;
        std::error_code ec;
        for (fs::directory_iterator d(m_config.manifests / "cuda", ec), end; !ec && d != end;
             d.increment(ec)) {
            auto stem = d->path().stem().string();
            auto v = Version::try_parse(stem);
            if (!v || d->path().extension() != ".json" || !mm.is_prefix_of(*v) ||
                (best_v && *v < *best_v)) {
                continue;
            }
            best_v = v;
        }
        if (best_v) {
            auto path = m_config.manifests / "cuda" / (best_v->str() + ".json");
            std::ifstream in(path);
            std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
            if (auto doc = manifest::parse_json_text(text, path.string())) {
                if (auto r = manifest::parse_cuda_release(*doc, path.string())) {
                    best = std::move(*r);
                }
            }
        }
        it = m_cache->releases.emplace(key, std::move(best)).first;
    }
    return it->second ? &*it->second : nullptr;
}

const manifest::CudaRelease* Host::cuda_release() {
    const auto& t = toolkit();
    if (!t.cuda) {
        return nullptr;
    }
    return cuda_release_for(t.cuda->truncated(std::min<std::size_t>(2, t.cuda->size())));
}

namespace {

std::optional<nlohmann::json> load_json(const fs::path& p) {
    std::ifstream in(p);
    if (!in) {
        return std::nullopt;
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto doc = manifest::parse_json_text(text, p.string());
    if (!doc) {
        return std::nullopt;
    }
    return std::move(*doc);
}

} // namespace

namespace {

/// One manifest file parsed by `parse`; none when it is missing or invalid (the probes that need
/// it then say the manifests do not know).
template <typename T, typename Parse>
std::optional<T> load_manifest(const fs::path& dir, const char* name, Parse parse) {
    if (auto doc = load_json(dir / name)) {
        if (auto parsed = parse(*doc, name)) {
            return std::move(*parsed);
        }
    }
    return std::nullopt;
}

} // namespace

const manifest::Rules* Host::rules() {
    if (!m_cache->rules) {
        m_cache->rules =
            load_manifest<manifest::Rules>(m_config.manifests, "rules.json", manifest::parse_rules);
    }
    return *m_cache->rules ? &**m_cache->rules : nullptr;
}

const std::vector<manifest::Gpu>& Host::gpu_table() {
    if (!m_cache->gpus) {
        m_cache->gpus = load_manifest<std::vector<manifest::Gpu>>(
                            m_config.manifests, "gpus.json", manifest::parse_gpus)
                            .value_or(std::vector<manifest::Gpu>{});
    }
    return *m_cache->gpus;
}

const std::vector<manifest::Framework>& Host::frameworks() {
    if (!m_cache->frameworks) {
        auto f = manifest::load_frameworks(m_config.manifests);
        m_cache->frameworks = f ? std::move(*f) : std::vector<manifest::Framework>{};
    }
    return *m_cache->frameworks;
}

} // namespace cudaenv::doctor
