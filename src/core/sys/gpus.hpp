// The machine's NVIDIA GPUs and loaded driver, as the files say (under CUDAENV_SYSROOT): the PCI
// bus (/sys/bus/pci/devices: vendor 0x10de, display class; device and subsystem ids) and
// /proc/driver/nvidia/version. No child, no library: what resolve and install check a release
// against. The doctor reads the same files through its Host, with more (NVML, pci.ids).
#pragma once

#include "../version.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::sys {

struct PciGpuIds {
    std::string address;   ///< 0000:65:00.0
    std::string device;    ///< "2330" (lower-case hex)
    std::string subsystem; ///< "10de:16c1"; empty when sysfs does not say
};

struct MachineGpus {
    std::vector<PciGpuIds> gpus;   ///< by PCI address
    std::optional<Version> driver; ///< the loaded kernel module's version
};

MachineGpus read_machine_gpus(const std::filesystem::path& sysroot);

/// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..." -> "535.104.05".
std::optional<std::string> parse_driver_version(std::string_view proc_version_text);

} // namespace cudaenv::sys
