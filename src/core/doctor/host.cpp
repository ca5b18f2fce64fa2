#include "../activate/machine.hpp"
#include "../activate/selection.hpp"
#include "../fs.hpp"
#include "../manifest/codec.hpp"
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
#include <set>

namespace cudaenv::doctor {

namespace fs = std::filesystem;
using detail::join_machine;
using detail::lines_of;
using detail::trim;

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

std::string cudart_soname(unsigned cuda_major) {
    // CUDA 11 kept the ABI version "11.0"; from 12 on it is the major alone.
    return cuda_major == 11 ? "libcudart.so.11.0" : "libcudart.so." + std::to_string(cuda_major);
}

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
    return read_file_prefix(at(p), max_bytes);
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

} // namespace cudaenv::doctor
