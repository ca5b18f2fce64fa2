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

/// The PCI ids NVIDIA supports forward compatibility on (gpu-support.json's marks), for a
/// version's .cudaenv-compat. Refused (incompatible, exit 8) when the manifests in use mark none
/// (made before cudaenv knew).
Result<std::vector<std::string>> forward_compat_gpus(Session& session);

/// install --compat here: refused (incompatible, exit 8) where a GPU on this machine is not one
/// of `gpus` -- CUDA would fail there with error 804 --, naming it and the driver to install.
Status check_forward_compat_here(Session& session,
                                 const Resolution& res,
                                 const std::vector<std::string>& gpus);

} // namespace cudaenv::ops
