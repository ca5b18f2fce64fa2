// NVIDIA's PCI device ids by chip: each chip family owns a block of ids (the PCI ID Repository,
// pci.ids, vendor 10de, lists every device under its chip: "2330  GH100 [H100 SXM5 80GB]"). The
// block gives the chip, the chip its compute capability, so the SM check runs on a machine whose
// driver does not answer (no NVML) and which has no pci.ids to name the device.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cudaenv::doctor {

struct PciChip {
    std::string_view chip;         ///< "GH100", "AD10x"
    std::string_view architecture; ///< "Hopper"
    unsigned compute_capability;   ///< 90
};

/// The chip family of an NVIDIA PCI device id ("0x2330", "2330"); none for an id outside every
/// known block (newer than this table, or not a GPU).
std::optional<PciChip> chip_of_device(std::string_view device_id);

} // namespace cudaenv::doctor
