#include "files.hpp"

#include "../activate/machine.hpp"
#include "../fs.hpp"
#include "answers.hpp"
#include "text.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace cudaenv::doctor {

namespace fs = std::filesystem;
using detail::join_machine;

Files::Files(const HostConfig& config)
    : m_config(config), m_sysroot(config.sysroot.empty() ? "/" : config.sysroot) {}

const sys::HostMachine& Files::machine() const {
    if (!m_machine) {
        m_machine = sys::read_sysroot_machine(m_sysroot);
    }
    return *m_machine;
}

std::string Files::jetson_cannot(std::string_view why) const {
    const auto& m = machine();
    if (m.kind != sys::HostKind::jetson) {
        return {};
    }
    std::string l4t = m.jetson && !m.jetson->l4t.empty() ? "L4T " + m.jetson->l4t : "L4T";
    return "cannot be checked on Jetson (" + l4t + "): " + std::string(why);
}

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

fs::path Files::at(std::string_view p) const {
    if (p.empty()) {
        return {}; // nothing (a link loop resolves to nothing)
    }
    if (m_sysroot == "/") {
        return fs::path(p);
    }
    // every link followed as the machine would: an absolute target stays in the sysroot
    return activate::resolve_in_sysroot(m_sysroot, machine_form(m_sysroot, p));
}

fs::path Files::at_entry(std::string_view p) const {
    if (m_sysroot == "/") {
        return fs::path(p);
    }
    auto mp = machine_form(m_sysroot, p);
    if (mp == "/" || !mp.has_filename()) {
        return at(p);
    }
    return activate::resolve_in_sysroot(m_sysroot, mp.parent_path()) / mp.filename();
}

std::string Files::machine_path(const fs::path& real) const {
    if (m_sysroot == "/") {
        return real.string();
    }
    auto rel = real.lexically_relative(m_sysroot);
    if (rel.empty() || *rel.begin() == "..") {
        return real.string();
    }
    return rel == "." ? "/" : "/" + rel.string();
}

std::optional<std::string> Files::read(std::string_view p, std::size_t max_bytes) const {
    return read_file_prefix(at(p), max_bytes);
}

bool Files::file_contains(std::string_view p, std::string_view needle) const {
    Fd fd(::open(at(p).c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
        return false;
    }

    struct stat st {};

    bool found = false;
    if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && !needle.empty()) {
        auto size = static_cast<std::size_t>(st.st_size);
        void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
        if (map != MAP_FAILED) {
            found = ::memmem(map, size, needle.data(), needle.size()) != nullptr;
            ::munmap(map, size);
        }
    }
    return found;
}

namespace {

/// "6,1234,5678,-;NVRM: Xid ..." -> "NVRM: Xid ..."; a continuation line (" KEY=value") or a line
/// of another shape -> nothing.
std::optional<std::string> kmsg_message(std::string_view record) {
    if (record.empty() || record.front() == ' ') {
        return std::nullopt;
    }
    auto semi = record.find(';');
    auto comma = record.find(',');
    if (semi == std::string_view::npos || comma == std::string_view::npos || comma > semi) {
        return std::nullopt;
    }
    auto end = record.find('\n', semi);
    auto text = record.substr(semi + 1, end == std::string_view::npos ? end : end - semi - 1);
    // the kernel writes a message's own newlines and other unprintable bytes as \xHH: a printk
    // of several lines ("The NVIDIA GPU 0000:b3:00.0\nNVRM: (PCI ID: 10de:26b5) installed in
    // this system has\nNVRM: fallen off the bus ...") is one record, made one line here, each
    // continuation's own "NVRM:" taken off
    std::string out;
    out.reserve(text.size());
    auto hex = [](char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] == 'x' && hex(text[i + 2]) >= 0 &&
            hex(text[i + 3]) >= 0) {
            out.push_back(static_cast<char>(hex(text[i + 2]) * 16 + hex(text[i + 3])));
            i += 3;
        } else {
            out.push_back(text[i]);
        }
    }
    for (auto nl = out.find('\n'); nl != std::string::npos; nl = out.find('\n', nl)) {
        auto next = out.find_first_not_of(" \t", nl + 1);
        if (next != std::string::npos && out.compare(next, 5, "NVRM:") == 0) {
            next = out.find_first_not_of(" \t", next + 5);
        }
        out.replace(nl, (next == std::string::npos ? out.size() : next) - nl, " ");
    }
    while (!out.empty() && out.back() == ' ') {
        out.pop_back();
    }
    return out;
}

constexpr std::size_t k_max_kmsg_records = 200000;

} // namespace

Files::KernelLog Files::kernel_log() const {
    KernelLog out;
    Fd fd(::open(at("/dev/kmsg").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) {
        int err = errno;
        auto restrict = read("/proc/sys/kernel/dmesg_restrict", 16);
        if (err == EPERM || err == EACCES) {
            out.why =
                "reading the kernel log needs root here" +
                std::string(restrict&& restrict->rfind('1', 0) == 0 ? " (kernel.dmesg_restrict = 1)"
                                                                    : "");
        } else {
            out.why = "no kernel log to read (/dev/kmsg: " + errno_text(err) + ")";
        }
        return out;
    }

    struct stat st {};

    if (::fstat(fd.get(), &st) != 0) {
        out.why = "cannot read /dev/kmsg: " + errno_text(errno);
        return out;
    }
    out.readable = true;
    if (!S_ISCHR(st.st_mode)) {
        auto text = read("/dev/kmsg", 16u << 20);
        if (!text) {
            out.readable = false;
            out.why = "cannot read /dev/kmsg";
            return out;
        }
        for (const auto& line : detail::lines_of(*text)) {
            if (auto m = kmsg_message(line); m && out.messages.size() < k_max_kmsg_records) {
                out.messages.push_back(std::move(*m));
            }
        }
        return out;
    }
    // the device: one record per read; EAGAIN at the end, EPIPE for records overwritten while
    // reading (go on with the next)
    char buf[8192];
    while (out.messages.size() < k_max_kmsg_records) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EPIPE)) {
            continue;
        }
        if (n <= 0) {
            if (n < 0 && errno != EAGAIN && out.messages.empty()) {
                out.readable = false;
                out.why = "cannot read /dev/kmsg: " + errno_text(errno);
            }
            break;
        }
        if (auto m = kmsg_message(std::string_view(buf, static_cast<std::size_t>(n)))) {
            out.messages.push_back(std::move(*m));
        }
    }
    return out;
}

bool Files::exists(std::string_view p) const {
    struct stat st {};

    return ::lstat(at_entry(p).c_str(), &st) == 0;
}

bool Files::is_dir(std::string_view p) const {
    std::error_code ec;
    return fs::is_directory(at(p), ec);
}

std::vector<std::string> Files::list(std::string_view p) const {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(at(p), ec), end; !ec && it != end; it.increment(ec)) {
        out.push_back(it->path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<std::string> Files::read_link(std::string_view p) const {
    std::error_code ec;
    auto t = fs::read_symlink(at_entry(p), ec);
    if (ec) {
        return std::nullopt;
    }
    return t.string();
}

std::string Files::canonical(std::string_view p) const {
    if (m_sysroot == "/") {
        std::error_code ec;
        auto c = fs::weakly_canonical(fs::path(p), ec);
        return ec ? std::string(p) : c.string();
    }
    auto real = activate::resolve_in_sysroot(m_sysroot, machine_form(m_sysroot, p));
    return real.empty() ? std::string() : machine_path(real);
}

std::optional<std::string> Files::env(std::string_view name) const {
    auto it = m_config.env.find(std::string(name));
    if (it == m_config.env.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::vector<std::string> Files::path_list(std::string_view var) const {
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

std::optional<std::string> Files::which(std::string_view tool) const {
    for (const auto& dir : path_list("PATH")) {
        auto candidate = join_machine(dir, tool);
        if (::access(at(candidate).c_str(), X_OK) == 0 && !is_dir(candidate)) {
            return candidate;
        }
    }
    return std::nullopt;
}

const sys::ProcessRunner& Files::processes() const {
    return m_config.processes ? *m_config.processes : sys::real_processes();
}

sys::ProcessOptions Files::child_options() const {
    sys::ProcessOptions o;
    o.timeout = m_config.child_timeout;
    std::vector<std::string> env;
    for (const auto& [k, v] : m_config.env) {
        env.push_back(k + "=" + v);
    }
    o.env = env;
    return o;
}

Result<sys::ProcessResult> Files::run(std::vector<std::string> argv) const {
    if (argv.empty()) {
        return Error(ErrorCode::internal, "nothing to run");
    }
    argv[0] = at(argv[0]).string();
    if (m_config.answers) {
        return m_config.answers->run(processes(), argv, child_options(), {argv[0]});
    }
    return processes().run(argv, child_options());
}

Result<sys::ProcessResult> Files::run_live(std::vector<std::string> argv) const {
    if (argv.empty()) {
        return Error(ErrorCode::internal, "nothing to run");
    }
    argv[0] = at(argv[0]).string();
    return processes().run(argv, child_options());
}

void Files::prefetch(std::vector<std::string> argv) const {
    if (argv.empty() || !m_config.answers) {
        return;
    }
    argv[0] = at(argv[0]).string();
    m_config.answers->prefetch(processes(), argv, child_options(), {argv[0]});
}

} // namespace cudaenv::doctor
