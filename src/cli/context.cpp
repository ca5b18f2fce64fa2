#include "context.hpp"

#include "core/envnum.hpp"
#include "core/manifest/codec.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <ostream>

#ifndef CUDAENV_SHIM_FROM_BINDIR
#define CUDAENV_SHIM_FROM_BINDIR "../libexec/cudaenv/cudaenv-shim"
#endif
#ifndef CUDAENV_SOURCE_MANIFESTS
#define CUDAENV_SOURCE_MANIFESTS ""
#endif

namespace cudaenv::cli {

void capture_process(Context& ctx, char** environ_) {
    for (char** e = environ_; *e; ++e) {
        std::string kv = *e;
        auto eq = kv.find('=');
        if (eq != std::string::npos) {
            ctx.env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
        }
    }
    ctx.stderr_tty = ::isatty(2) == 1 && ctx.env.find("NO_COLOR") == ctx.env.end();
    ctx.stdout_color = ::isatty(1) == 1 && ctx.env.find("NO_COLOR") == ctx.env.end() &&
                       ctx.env.count("TERM") && ctx.env.at("TERM") != "dumb";
    std::error_code ec;
    ctx.exe_path = std::filesystem::read_symlink("/proc/self/exe", ec);
    ctx.cwd = std::filesystem::current_path(ec);
    ctx.out = &std::cout;
    ctx.err = &std::cerr;
}

std::string started_as(const Context& ctx, const char* argv0) {
    if (auto forced = ctx.getenv("CUDAENV_FORCE_ARG0")) {
        return *forced;
    }
    return std::filesystem::path(argv0).filename().string();
}

std::optional<std::string> Context::getenv(const std::string& name) const {
    auto it = env.find(name);
    if (it == env.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::filesystem::path Context::manifests_floor() const {
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

const channel::ManifestsInUse& Context::manifests_in_use() const {
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
        m_manifests = channel::choose_manifests(manifests_floor(), roots);
    }
    return *m_manifests;
}

std::string Context::channel_url() const {
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

std::filesystem::path Context::shim_exe() const {
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

Status Context::load_config() {
    system = CUDAENV_TRY(load_system_config(sysroot()));
    m_root.reset(); // the config may name another machine-wide root
    m_manifests.reset();
    return Ok{};
}

std::filesystem::path Context::sysroot() const {
    auto s = getenv("CUDAENV_SYSROOT");
    return s && !s->empty() ? std::filesystem::path(*s) : std::filesystem::path("/");
}

std::filesystem::path Context::system_root() const {
    return under_sysroot(sysroot(), system.root.value_or(k_default_system_root));
}

store::Root Context::root() const {
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
    } else if (::geteuid() == 0) {
        r.dir = machine_wide;
    } else {
        r.dir = fs::path(getenv("HOME").value_or("/")) / ".cudaenv";
    }
    std::error_code ec;
    if (r.dir != machine_wide && fs::is_directory(machine_wide / "versions", ec) &&
        (!chosen || fs::weakly_canonical(machine_wide, ec) != fs::weakly_canonical(r.dir, ec))) {
        r.upstreams.push_back(machine_wide);
    }
    m_root = r;
    return r;
}

std::string Context::base_url() const {
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

long env_number(const Context& ctx, const char* name, long fallback) {
    auto v = ctx.getenv(name);
    const NumberVar* var = number_var(name);
    if (!v || v->empty() || !var) {
        return fallback;
    }
    auto n = parse_number(*var, *v); // checked by check_environment() before any command
    return n ? static_cast<long>(*n) : fallback;
}

} // namespace

Status Context::check_environment() const {
    for (const auto& var : number_vars()) {
        if (auto v = getenv(std::string(var.name)); v && !v->empty()) {
            CUDAENV_TRY(parse_number(var, *v));
        }
    }
    return Ok{};
}

std::optional<std::uint64_t> Context::env_number_value(std::string_view name) const {
    const NumberVar* var = number_var(name);
    auto v = getenv(std::string(name));
    if (!var || !v || v->empty()) {
        return std::nullopt;
    }
    auto n = parse_number(*var, *v);
    return n ? std::optional(*n) : std::nullopt;
}

fetch::Policy Context::download_policy() const {
    fetch::Policy p;
    p.allow_http = base_url().rfind("http://", 0) == 0;
    p.connect_timeout_s = env_number(*this, "CUDAENV_CONNECT_TIMEOUT", p.connect_timeout_s);
    p.low_speed_time_s = env_number(*this, "CUDAENV_STALL_TIMEOUT", p.low_speed_time_s);
    p.max_attempts = static_cast<int>(std::max(1L, env_number(*this, "CUDAENV_RETRIES", 3) + 1));
    p.backoff = std::chrono::milliseconds(env_number(*this, "CUDAENV_RETRY_BACKOFF_MS", 500));
    p.cacert = getenv("CUDAENV_CACERT").value_or("");
    return p;
}

std::chrono::milliseconds Context::lock_timeout() const {
    return std::chrono::seconds(env_number(*this, "CUDAENV_LOCK_TIMEOUT", 600));
}

std::chrono::seconds Context::ldconfig_timeout() const {
    return std::chrono::seconds(std::max(1L, env_number(*this, "CUDAENV_LDCONFIG_TIMEOUT", 120)));
}

Result<const manifest::Catalog*> Context::catalog() {
    if (!m_catalog) {
        auto c = manifest::load_catalog(manifests_path());
        if (!c) {
            return std::move(c).error();
        }
        m_catalog = std::move(*c);
    }
    return &*m_catalog;
}

Result<const manifest::Catalog*> Context::frameworks_catalog() {
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

int report_error(Context& ctx, const Error& error, const std::string& command) {
    *ctx.err << "cudaenv: error: " << error.full_message() << "\n";
    for (const auto& h : error.hints) {
        *ctx.err << "help: " << h << "\n";
    }
    int code = exit_code(error.code);
    if (ctx.json) {
        emit_json(ctx,
                  nlohmann::json{{"command", command},
                                 {"ok", false},
                                 {"error",
                                  {{"code", to_string(error.code)},
                                   {"exit_code", code},
                                   {"message", error.full_message()},
                                   {"hints", error.hints}}}});
    }
    return code;
}

void emit_json(Context& ctx, nlohmann::json doc) {
    doc["schema_version"] = 1;
    *ctx.out << doc.dump(2) << "\n";
}

std::string human_size(std::uint64_t bytes) {
    static constexpr const char* k_units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    std::size_t u = 0;
    while (v >= 1024.0 && u + 1 < std::size(k_units)) {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    if (u == 0) {
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    } else {
        std::snprintf(buf, sizeof buf, "%.1f %s", v, k_units[u]);
    }
    return buf;
}

} // namespace cudaenv::cli
