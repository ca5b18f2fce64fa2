// What this machine's GPUs and driver say about a CUDA release, for resolve (shown) and install
// (warned): the facts come from core/sys/gpus, the verdicts from core/resolve/gpu_driver.
#pragma once

#include "core/manifest/model.hpp"
#include "core/ops/session.hpp"
#include "core/resolve/resolve.hpp"
#include "core/version.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudaenv::ops {

struct MachineCheck {
    std::optional<Version> driver; ///< the loaded driver, if any

    struct Gpu {
        std::string pci;       ///< "10de:2330"
        std::string subsystem; ///< "10de:16c1", or empty
    };

    std::vector<Gpu> gpus;
    std::vector<std::string> warnings;
};

MachineCheck machine_check(Session& session, const manifest::CudaRelease& release);

/// install --compat here: the PCI ids NVIDIA supports forward compatibility on (gpu-support.json),
/// for the version's .cudaenv-compat. Refused (incompatible, exit 8) where a GPU on this machine
/// is not one of them -- CUDA would fail there with error 804 -- and where the manifests in use
/// say of no GPU whether it is (made before cudaenv knew).
Result<std::vector<std::string>> forward_compat_gpus(Session& session, const Resolution& res);

} // namespace cudaenv::ops
