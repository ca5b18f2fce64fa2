// The machine cudaenv runs on, as NVIDIA's archives see it: an x86_64 host, an Arm server (Grace,
// DGX Spark: NVIDIA's "linux-sbsa" builds) or a Jetson (recognised from the machine itself:
// /etc/nv_tegra_release, the device tree's "nvidia,tegra*" compatible). Read from files under
// the sysroot plus uname's machine; no child, no library: the shim links it.
//
// Which platform's archives a host takes depends on the CUDA release as well as the host (a
// Jetson Orin takes "linux-aarch64" for CUDA 12.x and "linux-sbsa" plus cuda_compat_orin for
// 13.2 and later): `platform_for` is that one decision.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::sys {

enum class HostKind {
    x86_64,     ///< linux-x86_64
    arm_server, ///< aarch64 that is not a Jetson: linux-sbsa
    jetson,     ///< a Tegra SoC: linux-aarch64 or linux-sbsa by release
    other,      ///< an architecture NVIDIA ships nothing for
};

struct Jetson {
    std::string soc;        ///< "orin", "thor", "xavier", ... from the compatible; "" when unknown
    std::string compatible; ///< the tegra entry as the device tree says it: "nvidia,tegra234"
    std::string l4t;        ///< "36.4.3" from "# R36 (release), REVISION: 4.3"; "" when absent
    std::string jetpack;    ///< the JetPack major that L4T release belongs to ("6"); "" unknown
};

struct HostMachine {
    HostKind kind = HostKind::other;
    std::string machine; ///< uname's machine: "x86_64", "aarch64"
    std::optional<Jetson> jetson;
};

/// The host as the files under `sysroot` and `uname_machine` say.
HostMachine read_host_machine(const std::filesystem::path& sysroot, std::string_view uname_machine);

/// The same with this process's uname.
HostMachine read_host_machine(const std::filesystem::path& sysroot);

/// What a host takes for one CUDA release.
struct PlatformChoice {
    std::string platform;         ///< "linux-x86_64", "linux-sbsa", "linux-aarch64"; "" = none
    std::string compat_component; ///< a component the host also needs ("cuda_compat_orin")
    std::string refusal;          ///< when platform is empty: why, naming what exists instead
};

PlatformChoice platform_for(const HostMachine& host, int cuda_major, int cuda_minor);

/// The one platform a host takes when no release is named yet (listing, a mirror's default):
/// the platform of its newest CUDA line.
std::string default_platform(const HostMachine& host);

/// The machine a sysroot holds. "/" (or empty) is this machine: read_host_machine(sysroot), uname
/// decides. Any other sysroot (CUDAENV_SYSROOT: a fixture, a mounted image, a node's root seen from
/// another host) says its architecture through its own files, first that speaks:
/// /etc/nv_tegra_release or a "nvidia,tegra*" device-tree compatible (a Jetson: aarch64); the
/// kernel module's /proc/driver/nvidia/version ("... Kernel Module for aarch64 ...", "NVIDIA UNIX
/// x86_64 Kernel Module"); the one multiarch library folder /usr/lib/<triplet> of the two there
/// is; else uname's machine, as for "/".
HostMachine read_sysroot_machine(const std::filesystem::path& sysroot);

/// Debian's multiarch triplet of a host: "x86_64-linux-gnu", "aarch64-linux-gnu"; "" for other.
std::string multiarch_triplet(const HostMachine& host);

/// NVIDIA's folder under a toolkit's targets/ for a platform: linux-x86_64 -> "x86_64-linux",
/// linux-sbsa -> "sbsa-linux", linux-aarch64 (Jetson) -> "aarch64-linux"; "" for another.
std::string cuda_target(std::string_view platform);

/// The targets/ folders a toolkit on this host may have, most likely first: one for x86_64 and
/// Arm servers; a Jetson's default platform's first, then the other (an Orin runs linux-aarch64
/// toolkits and, from CUDA 13.2, linux-sbsa ones).
std::vector<std::string> cuda_targets(const HostMachine& host);

} // namespace cudaenv::sys
