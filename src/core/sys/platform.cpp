#include "platform.hpp"

#include "../config.hpp"

#include <sys/utsname.h>

#include <fstream>
#include <iterator>

namespace cudaenv::sys {

namespace fs = std::filesystem;

namespace {

std::string read_small(const fs::path& p, std::size_t cap = 4096) {
    std::ifstream in(p, std::ios::binary);
    if (!in) {
        return {};
    }
    std::string text(cap, '\0');
    in.read(text.data(), static_cast<std::streamsize>(cap));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

/// "# R36 (release), REVISION: 4.3, GCID: ..." -> "36.4.3"; "" when the line is not that.
std::string l4t_release(std::string_view text) {
    auto r = text.find('R');
    if (r == std::string_view::npos) {
        return {};
    }
    std::size_t i = r + 1;
    std::string major;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        major += text[i++];
    }
    if (major.empty()) {
        return {};
    }
    auto rev = text.find("REVISION:", i);
    if (rev == std::string_view::npos) {
        return major;
    }
    i = rev + 9;
    while (i < text.size() && text[i] == ' ') {
        ++i;
    }
    std::string revision;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) {
        revision += text[i++];
    }
    return revision.empty() ? major : major + "." + revision;
}

std::string jetpack_of(const std::string& l4t) {
    auto major = l4t.substr(0, l4t.find('.'));
    if (major == "32") {
        return "4";
    }
    if (major == "34" || major == "35") { // R34: JetPack 5.0 developer previews
        return "5";
    }
    if (major == "36") {
        return "6";
    }
    if (major == "38") {
        return "7";
    }
    if (major == "39") {
        return "7.2";
    }
    return {};
}

/// The device tree's compatible list is NUL-separated; the SoC entry is "nvidia,tegraNNN".
void read_compatible(const fs::path& sysroot, Jetson& j) {
    std::string text = read_small(under_sysroot(sysroot, "/proc/device-tree/compatible"));
    if (text.empty()) {
        text = read_small(under_sysroot(sysroot, "/sys/firmware/devicetree/base/compatible"));
    }
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\0', start);
        if (end == std::string::npos) {
            end = text.size();
        }
        std::string_view entry(text.data() + start, end - start);
        if (entry.rfind("nvidia,tegra", 0) == 0) {
            j.compatible = std::string(entry);
            // "tegra210b01" (Nano 2GB, TX1 B01) is a tegra210; Orin lists "nvidia,tegra234"
            // before "nvidia,tegra23x", Thor "nvidia,tegra264" (platform_test.cpp's samples)
            auto chip = entry.substr(12);
            if (chip.rfind("264", 0) == 0) {
                j.soc = "thor";
            } else if (chip.rfind("234", 0) == 0) {
                j.soc = "orin";
            } else if (chip.rfind("194", 0) == 0) {
                j.soc = "xavier";
            } else if (chip.rfind("186", 0) == 0) {
                j.soc = "tx2";
            } else if (chip.rfind("210", 0) == 0) {
                j.soc = "nano";
            }
            return;
        }
        start = end + 1;
    }
}

} // namespace

HostMachine read_host_machine(const fs::path& sysroot, std::string_view uname_machine) {
    HostMachine h;
    h.machine = std::string(uname_machine);
    if (uname_machine == "x86_64") {
        h.kind = HostKind::x86_64;
        return h;
    }
    if (uname_machine != "aarch64" && uname_machine != "arm64") {
        return h;
    }
    Jetson j;
    std::string release = read_small(under_sysroot(sysroot, "/etc/nv_tegra_release"), 512);
    if (!release.empty()) {
        j.l4t = l4t_release(release.substr(0, release.find('\n')));
        j.jetpack = jetpack_of(j.l4t);
    }
    read_compatible(sysroot, j);
    if (release.empty() && j.compatible.empty()) {
        h.kind = HostKind::arm_server;
        return h;
    }
    h.kind = HostKind::jetson;
    h.jetson = std::move(j);
    return h;
}

HostMachine read_host_machine(const fs::path& sysroot) {
    struct utsname u {};

    if (::uname(&u) != 0) {
        return read_host_machine(sysroot, "");
    }
    return read_host_machine(sysroot, u.machine);
}

PlatformChoice platform_for(const HostMachine& host, int major, int minor) {
    PlatformChoice c;
    switch (host.kind) {
    case HostKind::x86_64:
        c.platform = "linux-x86_64";
        return c;
    case HostKind::arm_server:
        c.platform = "linux-sbsa";
        return c;
    case HostKind::other:
        c.refusal =
            "NVIDIA publishes CUDA for linux-x86_64, linux-sbsa and Jetson's linux-aarch64; "
            "this machine is " +
            (host.machine.empty() ? std::string("unknown") : host.machine);
        return c;
    case HostKind::jetson:
        break;
    }
    const std::string& soc = host.jetson ? host.jetson->soc : std::string();
    const bool cuda13 = major >= 13;
    if (soc == "thor") {
        if (cuda13) {
            c.platform = "linux-sbsa";
        } else {
            c.refusal = "Jetson Thor runs CUDA 13.0 and later (JetPack 7, linux-sbsa archives); "
                        "NVIDIA ships no CUDA " +
                        std::to_string(major) + "." + std::to_string(minor) + " for it";
        }
        return c;
    }
    if (!cuda13) {
        c.platform = "linux-aarch64";
        return c;
    }
    if (soc == "orin" && (major > 13 || minor >= 2)) {
        c.platform = "linux-sbsa";
        c.compat_component = "cuda_compat_orin";
        return c;
    }
    if (soc == "orin") {
        c.refusal = "Jetson Orin runs CUDA 13 from 13.2 (linux-sbsa with cuda_compat_orin, "
                    "JetPack 7.2); CUDA 13.0 and 13.1 are for Jetson Thor only";
        return c;
    }
    c.refusal = "NVIDIA ships CUDA 13 for Jetson Thor (JetPack 7) and Orin (from 13.2, JetPack "
                "7.2) only; this Jetson (" +
                (soc.empty() ? std::string("unrecognised SoC") : soc) +
                ") takes linux-aarch64 releases up to 12.9";
    return c;
}

std::string default_platform(const HostMachine& host) {
    switch (host.kind) {
    case HostKind::x86_64:
        return "linux-x86_64";
    case HostKind::arm_server:
        return "linux-sbsa";
    case HostKind::jetson:
        return host.jetson && host.jetson->soc == "thor" ? "linux-sbsa" : "linux-aarch64";
    case HostKind::other:
        break;
    }
    return {};
}

namespace {

/// The architecture a sysroot's own files say: "aarch64", "x86_64", or "" when they do not.
std::string sysroot_arch(const fs::path& sysroot) {
    if (fs::exists(under_sysroot(sysroot, "/etc/nv_tegra_release"))) {
        return "aarch64";
    }
    Jetson j;
    read_compatible(sysroot, j);
    if (!j.compatible.empty()) {
        return "aarch64";
    }
    // "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  ..." (the open module names its
    // architecture after "for"); "NVIDIA UNIX x86_64 Kernel Module" (the proprietary one)
    std::string version = read_small(under_sysroot(sysroot, "/proc/driver/nvidia/version"), 512);
    version = version.substr(0, version.find('\n'));
    for (const char* arch : {"aarch64", "x86_64"}) {
        if (version.find(std::string(" ") + arch + " ") != std::string::npos) {
            return arch;
        }
    }
    std::error_code ec;
    bool arm = fs::is_directory(under_sysroot(sysroot, "/usr/lib/aarch64-linux-gnu"), ec);
    bool x86 = fs::is_directory(under_sysroot(sysroot, "/usr/lib/x86_64-linux-gnu"), ec);
    if (arm != x86) {
        return arm ? "aarch64" : "x86_64";
    }
    return {};
}

} // namespace

HostMachine read_sysroot_machine(const fs::path& sysroot) {
    if (sysroot.empty() || sysroot == "/") {
        return read_host_machine(sysroot);
    }
    std::string arch = sysroot_arch(sysroot);
    if (arch.empty()) {
        return read_host_machine(sysroot);
    }
    return read_host_machine(sysroot, arch);
}

std::string multiarch_triplet(const HostMachine& host) {
    switch (host.kind) {
    case HostKind::x86_64:
        return "x86_64-linux-gnu";
    case HostKind::arm_server:
    case HostKind::jetson:
        return "aarch64-linux-gnu";
    case HostKind::other:
        break;
    }
    return {};
}

std::string cuda_target(std::string_view platform) {
    if (platform == "linux-x86_64") {
        return "x86_64-linux";
    }
    if (platform == "linux-sbsa") {
        return "sbsa-linux";
    }
    if (platform == "linux-aarch64") {
        return "aarch64-linux";
    }
    return {};
}

std::vector<std::string> cuda_targets(const HostMachine& host) {
    std::vector<std::string> out;
    if (auto first = cuda_target(default_platform(host)); !first.empty()) {
        out.push_back(first);
    }
    if (host.kind == HostKind::jetson) {
        for (const char* t : {"aarch64-linux", "sbsa-linux"}) {
            if (out.empty() || out.front() != t) {
                out.emplace_back(t);
            }
        }
    }
    return out;
}

} // namespace cudaenv::sys
