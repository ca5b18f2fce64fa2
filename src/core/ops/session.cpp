// The run's choices and what follows from them (session.hpp).
#include "session.hpp"

#include "core/envnum.hpp"
#include "core/manifest/codec.hpp"

#include <unistd.h>

#ifndef CUDAENV_SHIM_FROM_BINDIR
#define CUDAENV_SHIM_FROM_BINDIR "../libexec/cudaenv/cudaenv-shim"
#endif
#ifndef CUDAENV_SOURCE_MANIFESTS
#define CUDAENV_SOURCE_MANIFESTS ""
#endif

namespace cudaenv::ops {

std::optional<std::string> Session::getenv(const std::string& name) const {
    auto it = env.find(name);
    if (it == env.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::filesystem::path Session::manifests_floor() const {
    if (system.manifests) {
        return under_sysroot(sysroot(), *system.manifests);
    }
    std::error_code ec;
    auto installed = exe_path.parent_path().parent_path() / "share" / "cudaenv" / "manifests";
    if (std::filesystem::is_directory(installed, ec)) {
        return installed;
    }
    return CUDAENV_SOURCE_MANIFESTS;
}

const channel::ManifestsInUse& Session::manifests_in_use() const {
    if (m_manifests) {
        return *m_manifests;
    }
    if (!manifests_dir.empty()) {
        m_manifests = channel::given_manifests(manifests_dir);
    } else if (auto e = getenv("CUDAENV_MANIFESTS"); e && !e->empty()) {
        m_manifests = channel::given_manifests(*e);
    } else {
        auto r = root();
        std::vector<std::filesystem::path> roots{r.dir};
        roots.insert(roots.end(), r.upstreams.begin(), r.upstreams.end());
        m_manifests = channel::choose_manifests(manifests_floor(), roots, set_check);
    }
    return *m_manifests;
}

std::string Session::channel_url() const {
    std::string url = channel;
    if (url.empty()) {
        url = getenv("CUDAENV_CHANNEL").value_or("");
    }
    if (url.empty()) {
        url = system.channel.value_or("");
    }
    if (url.empty()) {
        std::string base = base_url();
        url = base == manifest::k_nvidia_base ? std::string(channel::k_default_channel)
                                              : base + "/" + channel::k_mirror_channel_dir;
    }
    while (!url.empty() && url.back() == '/') {
        url.pop_back();
    }
    return url;
}

std::filesystem::path Session::shim_exe() const {
    std::error_code ec;
    // installed: <prefix>/libexec/cudaenv/cudaenv-shim (Debian's place for helper executables);
    // a build tree: next to this binary
    for (auto shim : {exe_path.parent_path() / CUDAENV_SHIM_FROM_BINDIR,
                      exe_path.parent_path() / "cudaenv-shim"}) {
        if (std::filesystem::exists(shim, ec)) {
            return shim.lexically_normal();
        }
    }
    return exe_path;
}

Status Session::load_config() {
    system = CUDAENV_TRY(load_system_config(sysroot()));
    m_root.reset(); // the config may name another machine-wide root
    m_manifests.reset();
    return Ok{};
}

std::filesystem::path Session::sysroot() const {
    auto s = getenv("CUDAENV_SYSROOT");
    return s && !s->empty() ? std::filesystem::path(*s) : std::filesystem::path("/");
}

const sys::HostMachine& Session::host() const {
    if (!m_host) {
        m_host = sys::read_sysroot_machine(sysroot());
    }
    return *m_host;
}

std::string Session::forced_platform() const {
    if (!platform.empty()) {
        return platform;
    }
    if (auto p = getenv("CUDAENV_PLATFORM"); p && !p->empty()) {
        return *p;
    }
    return system.platform.value_or("");
}

sys::PlatformChoice Session::platform_for(const Version& cuda) const {
    if (auto forced = forced_platform(); !forced.empty()) {
        return sys::PlatformChoice{forced, {}, {}};
    }
    return sys::platform_for(
        host(), static_cast<int>(cuda.major()), static_cast<int>(cuda.minor()));
}

std::filesystem::path Session::system_root() const {
    return under_sysroot(sysroot(), system.root.value_or(k_default_system_root));
}

store::Root Session::root() const {
    namespace fs = std::filesystem;
    if (m_root) {
        return *m_root;
    }
    fs::path machine_wide = system_root();
    store::Root r;
    bool chosen = false; // CUDAENV_ROOT may name the machine-wide root itself
    if (auto env_root = getenv("CUDAENV_ROOT"); env_root && !env_root->empty()) {
        r.dir = fs::absolute(*env_root);
        chosen = true;
    } else if (euid.value_or(::geteuid()) == 0) {
        r.dir = machine_wide;
    } else {
        r.dir = fs::path(getenv("HOME").value_or("/")) / ".cudaenv";
    }
    std::error_code ec;
    if (r.dir != machine_wide && fs::is_directory(machine_wide / "versions", ec) &&
        (!chosen || fs::weakly_canonical(machine_wide, ec) != fs::weakly_canonical(r.dir, ec))) {
        r.upstreams.push_back(machine_wide);
    }
    // which platform's copy of a version this run sees (docs/store.md, Platforms)
    r.platforms = store::HostPlatforms{forced_platform(), host()};
    m_root = r;
    return r;
}

std::string Session::base_url() const {
    std::string base = mirror;
    if (base.empty()) {
        base = getenv("CUDAENV_MIRROR").value_or("");
    }
    if (base.empty()) {
        base = system.mirror.value_or(std::string(manifest::k_nvidia_base));
    }
    while (!base.empty() && base.back() == '/') {
        base.pop_back();
    }
    return base;
}

namespace {

long env_number(const Session& s, const char* name, long fallback) {
    auto v = s.getenv(name);
    const NumberVar* var = number_var(name);
    if (!v || v->empty() || !var) {
        return fallback;
    }
    auto n = parse_number(*var, *v); // checked by check_environment() before any command
    return n ? static_cast<long>(*n) : fallback;
}

} // namespace

Status Session::check_environment() const {
    for (const auto& var : number_vars()) {
        if (auto v = getenv(std::string(var.name)); v && !v->empty()) {
            CUDAENV_TRY(parse_number(var, *v));
        }
    }
    if (auto p = getenv("CUDAENV_PLATFORM"); p && !p->empty() && !manifest::is_platform(*p)) {
        return Error(ErrorCode::usage,
                     "CUDAENV_PLATFORM must be " + manifest::platform_list() + ", got '" + *p +
                         "'");
    }
    return Ok{};
}

std::optional<std::uint64_t> Session::env_number_value(std::string_view name) const {
    const NumberVar* var = number_var(name);
    auto v = getenv(std::string(name));
    if (!var || !v || v->empty()) {
        return std::nullopt;
    }
    auto n = parse_number(*var, *v);
    return n ? std::optional(*n) : std::nullopt;
}

fetch::Policy Session::download_policy() const {
    fetch::Policy p;
    p.allow_http = base_url().rfind("http://", 0) == 0;
    p.connect_timeout_s = env_number(*this, "CUDAENV_CONNECT_TIMEOUT", p.connect_timeout_s);
    p.low_speed_time_s = env_number(*this, "CUDAENV_STALL_TIMEOUT", p.low_speed_time_s);
    p.max_attempts = static_cast<int>(std::max(1L, env_number(*this, "CUDAENV_RETRIES", 3) + 1));
    p.backoff = std::chrono::milliseconds(env_number(*this, "CUDAENV_RETRY_BACKOFF_MS", 500));
    p.cacert = getenv("CUDAENV_CACERT").value_or("");
    return p;
}

std::chrono::seconds Session::channel_timeout() const {
    return std::chrono::seconds(env_number(*this, "CUDAENV_CHANNEL_TIMEOUT", 120));
}

std::chrono::milliseconds Session::lock_timeout() const {
    return std::chrono::seconds(env_number(*this, "CUDAENV_LOCK_TIMEOUT", 600));
}

std::chrono::seconds Session::ldconfig_timeout() const {
    return std::chrono::seconds(std::max(1L, env_number(*this, "CUDAENV_LDCONFIG_TIMEOUT", 120)));
}

Result<const manifest::Catalog*> Session::catalog() {
    if (!m_catalog) {
        auto c = manifest::load_catalog(manifests_path());
        if (!c) {
            return std::move(c).error();
        }
        m_catalog = std::move(*c);
    }
    return &*m_catalog;
}

Result<const manifest::Catalog*> Session::frameworks_catalog() {
    if (m_catalog) {
        return &*m_catalog;
    }
    if (!m_frameworks) {
        auto f = manifest::load_frameworks(manifests_path());
        if (!f) {
            return std::move(f).error();
        }
        m_frameworks.emplace();
        m_frameworks->frameworks = std::move(*f);
    }
    return &*m_frameworks;
}

} // namespace cudaenv::ops
