// Does this driver drive this GPU? The verdict for one GPU (by PCI id) and one driver version,
// from NVIDIA's own lists (gpu-support.json), falling back to the family rule (gpus.json: the
// first CUDA with the GPU's SM) only when the id is not listed -- and saying so. Also whether
// the driver's branch has reached its end of life. Pure: reads only the manifests' data.
#pragma once

#include "../manifest/model.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv {

struct GpuId {
    std::string device;              ///< "2331" (any case, with or without 0x)
    std::string subsystem;           ///< "10de:1626"; empty when unknown
    std::string name;                ///< for messages and the family rule's name match
    unsigned compute_capability = 0; ///< 90; 0 when unknown
};

struct GpuDriverVerdict {
    enum class Kind {
        ok,
        too_old, ///< the driver does not list the GPU yet: `need` is the one to install
        too_new, ///< the GPU's architecture ended on an older branch: `last_branch`
        unknown, ///< neither the lists nor the family rule can say
    };
    Kind kind = Kind::unknown;
    /// True when NVIDIA's list of the GPU's PCI id answered (with its subsystem, `exact`);
    /// false when the family rule or nothing did.
    bool by_id = false;
    bool exact = false;
    std::string gpu;             ///< "NVIDIA H100 PCIe (PCI 10de:2331, subsystem 10de:1626)"
    std::optional<Version> need; ///< too_old: the oldest driver that drives it on a fitting branch
    std::optional<unsigned> last_branch; ///< too_new
    /// NVIDIA's lists name the GPU from this driver on (the first listing on the driver's branch
    /// or the next one): a driver from there drives it. An upper bound of the minimum, never the
    /// minimum; with `too_old`, the driver to install.
    std::optional<Version> listed_from;
    std::string why; ///< one sentence: what the data says and where it is from
};

/// `gpu_name` names `model` (the family table's "NVIDIA A10", without "NVIDIA "/"GeForce ") as
/// whole words, case-insensitive: "NVIDIA A10" names A10, "GA107M [GeForce RTX 3050 Mobile]"
/// does not.
bool names_model(std::string_view gpu_name, std::string_view model);
/// The family table's row a GPU name names (the longest such: "RTX 3060 Ti" over "RTX 3060").
const manifest::Gpu* family_row(const std::vector<manifest::Gpu>& family, std::string_view name);

/// Does `driver` drive `gpu`, as far as the data can tell? Evidence on the machine (a driver bound
/// to the GPU, NVML enumerating it) outranks this verdict. `too_new`: the GPU's architecture
/// ended on an older branch (NVIDIA's matrix). `too_old`: the driver predates the first CUDA with
/// the GPU's SM (the family rule). NVIDIA's open-module lists say when a GPU was first named, so
/// they answer `ok` (listed) and never `too_old`.
GpuDriverVerdict check_gpu_driver(const manifest::GpuSupport& support,
                                  const std::vector<manifest::Gpu>& family,
                                  const GpuId& gpu,
                                  const Version& driver);

/// What this machine says about a CUDA release before it is installed: the loaded driver against
/// the release's minimum and its major's compatibility floor, and against each GPU on the PCI
/// bus (by its id, as check_gpu_driver). One sentence each; empty when all is well or the
/// machine has no NVIDIA driver loaded (installing for another machine is fine).
std::vector<std::string> machine_fit(const manifest::CudaRelease& release,
                                     const manifest::GpuSupport& support,
                                     const std::vector<manifest::Gpu>& family,
                                     const std::vector<GpuId>& gpus,
                                     const std::optional<Version>& driver);

/// The driver's branch has passed its end of life (`today` is "YYYY-MM-DD"): the sentence to
/// warn with, else empty. Branches the lifecycle data does not name and that are older than
/// its newest entry are no longer among NVIDIA's supported branches either.
std::string branch_end_of_life(const manifest::GpuSupport& support,
                               const Version& driver,
                               const std::string& today);

} // namespace cudaenv
