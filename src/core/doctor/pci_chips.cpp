#include "pci_chips.hpp"

#include <charconv>

namespace cudaenv::doctor {

namespace {

struct Block {
    unsigned first, last; ///< device ids, inclusive
    PciChip chip;
};

// Blocks of device ids by chip family, from pci.ids (vendor 10de). Only datacenter, workstation
// and desktop GPUs of compute capability 3.5 and up (what some CUDA in the manifests targets);
// Jetson's integrated GPUs are not on PCI.
constexpr Block k_blocks[] = {
    {0x1020, 0x103f, {"GK110/GK210", "Kepler", 35}}, // Tesla K20/K40 (K80's GK210: 0x102d)
    {0x1280, 0x12bf, {"GK208", "Kepler", 35}},
    {0x1340, 0x13bf, {"GM107/GM108", "Maxwell", 50}}, // GTX 750 Ti: 0x1380
    {0x13c0, 0x13ff, {"GM204", "Maxwell", 52}},
    {0x1400, 0x143f, {"GM206", "Maxwell", 52}},
    {0x15f0, 0x15ff, {"GP100", "Pascal", 60}},  // Tesla P100
    {0x17c0, 0x17ff, {"GM200", "Maxwell", 52}}, // Tesla M40, GTX TITAN X, 980 Ti
    {0x1b00, 0x1d7f, {"GP102/GP104/GP106/GP107/GP108", "Pascal", 61}},
    {0x1d80, 0x1dbf, {"GV100", "Volta", 70}},                    // V100, TITAN V
    {0x1e00, 0x1fff, {"TU102/TU104/TU106/TU117", "Turing", 75}}, // T4: 0x1eb8
    {0x2000, 0x20ff, {"GA100", "Ampere", 80}},                   // A100: 0x20b0.., A30: 0x20b7
    {0x2180, 0x21ff, {"TU116", "Turing", 75}},
    {0x2200, 0x22ff, {"GA102", "Ampere", 86}}, // RTX 3090, A40, A10, RTX A6000
    {0x2300, 0x23ff, {"GH100", "Hopper", 90}}, // H100: 0x2330, H200, GH200: 0x2342
    {0x2400, 0x25ff, {"GA104/GA106/GA107", "Ampere", 86}},
    {0x2600, 0x28ff, {"AD102/AD103/AD104/AD106/AD107", "Ada Lovelace", 89}}, // L4, L40, RTX 4090
    {0x2900, 0x29ff, {"GB100/GB102", "Blackwell", 100}},                     // B200, GB200
    {0x2b00, 0x2fff, {"GB202/GB203/GB205/GB206/GB207", "Blackwell", 120}},   // RTX 50, PRO 6000
};

} // namespace

std::optional<PciChip> chip_of_device(std::string_view device_id) {
    if (device_id.rfind("0x", 0) == 0 || device_id.rfind("0X", 0) == 0) {
        device_id.remove_prefix(2);
    }
    unsigned id = 0;
    auto [end, ec] = std::from_chars(device_id.data(), device_id.data() + device_id.size(), id, 16);
    if (ec != std::errc() || end != device_id.data() + device_id.size() || device_id.empty()) {
        return std::nullopt;
    }
    for (const auto& b : k_blocks) {
        if (id >= b.first && id <= b.last) {
            return b.chip;
        }
    }
    return std::nullopt;
}

} // namespace cudaenv::doctor
