// CUDA forward compatibility, per version (docs/compat.md). `install --compat` lays NVIDIA's
// cuda_compat libraries (a newer driver's libcuda) out in <version>/compat and writes
// <version>/.cudaenv-compat: the driver the release needs, the compat libraries' driver version,
// and the GPUs NVIDIA supports forward compatibility on. exec, env, shims and modulefiles put
// compat/ first on LD_LIBRARY_PATH only when this machine's driver is older than the release
// needs and every GPU on the bus supports it -- decided here, at every call, from sysfs and
// /proc (no child, no library): a driver upgrade turns it off by itself. The machine-wide loader
// path (`global`) never holds compat/.
#pragma once

#include "../sys/gpus.hpp"
#include "../sys/platform.hpp"
#include "../version.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::activate {

inline constexpr const char* k_compat_file = ".cudaenv-compat";

/// <version>/.cudaenv-compat, a few plain lines (the shim reads it without a JSON parser).
struct CompatFile {
    Version needs;  ///< the driver the release needs (its Table 3 minimum)
    Version compat; ///< the driver version of the compat libraries (libcuda.so.<compat>)
    /// PCI ids NVIDIA supports forward compatibility on: "2330", or "2330/10de:16c1" where only
    /// that subsystem is.
    std::vector<std::string> gpus;
};

std::string encode_compat_file(const CompatFile& f);
std::optional<CompatFile> parse_compat_file(std::string_view text);

struct CompatState {
    enum class Kind {
        not_installed,   ///< the version has no compat libraries
        damaged,         ///< .cudaenv-compat cannot be read as one: compat/ is not used
        no_driver,       ///< no NVIDIA kernel module is loaded
        driver_suffices, ///< the loaded driver runs the release itself
        no_gpu,          ///< no NVIDIA GPU on the PCI bus
        gpu_unsupported, ///< a GPU forward compatibility does not support (error 804)
        used,            ///< compat/ goes first on LD_LIBRARY_PATH
    };
    Kind kind = Kind::not_installed;
    std::filesystem::path dir; ///< <version>/compat
    std::optional<CompatFile> file;
    std::optional<Version> driver; ///< the loaded driver
    std::string gpu;               ///< gpu_unsupported: "10de:2684"
    /// One sentence: why compat/ is or is not used.
    std::string why;

    bool use() const { return kind == Kind::used; }
};

/// Whether the version at `prefix` has compat libraries (its record exists): one access(2), for
/// the shim's hot path.
bool has_compat_libraries(const std::filesystem::path& prefix);

/// The decision for `prefix` against `machine`.
CompatState compat_state(const std::filesystem::path& prefix, const sys::MachineGpus& machine);

/// The same, reading the machine (under `sysroot`) only when the version has compat libraries:
/// a version without them costs one failed open.
CompatState compat_state(const std::filesystem::path& prefix, const std::filesystem::path& sysroot);

/// <version>/compat_orin: NVIDIA's cuda_compat_orin, the user-mode driver a Jetson Orin runs
/// CUDA 13.2 and later with (linux-sbsa; used "by putting its directory first on
/// LD_LIBRARY_PATH", ../shared/reference/jetson.json). install lays it out by itself for an Orin.
inline constexpr const char* k_compat_orin_dir = "compat_orin";

/// <version>/compat_orin when the version has it and this machine (under `sysroot`) is a Jetson
/// Orin; nothing elsewhere (its libcuda drives Orin's GPU only). A version without it costs one
/// stat.
std::optional<std::filesystem::path> compat_orin_dir(const std::filesystem::path& prefix,
                                                     const std::filesystem::path& sysroot);

/// The same for a machine already read.
std::optional<std::filesystem::path> compat_orin_dir(const std::filesystem::path& prefix,
                                                     const sys::HostMachine& host);

/// Whether `gpus` (a CompatFile's list) names this GPU.
bool forward_compat_listed(const std::vector<std::string>& gpus,
                           std::string_view device,
                           std::string_view subsystem);

} // namespace cudaenv::activate
