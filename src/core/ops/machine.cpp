// A release against this machine's GPUs and driver (machine.hpp).
#include "machine.hpp"

#include "core/activate/compat.hpp"
#include "core/doctor/pci_chips.hpp"
#include "core/manifest/gpu_support.hpp"
#include "core/resolve/gpu_driver.hpp"
#include "core/sys/gpus.hpp"

namespace cudaenv::ops {

MachineCheck machine_check(Session& session, const manifest::CudaRelease& release) {
    MachineCheck out;
    auto machine = sys::read_machine_gpus(session.sysroot());
    std::vector<GpuId> ids;
    for (const auto& g : machine.gpus) {
        out.gpus.push_back({"10de:" + g.device, g.subsystem});
        // the chip family of the id gives the compute capability (an architecture's last
        // branch) for GPUs NVIDIA's lists do not name
        auto chip = doctor::chip_of_device(g.device);
        ids.push_back(GpuId{g.device, g.subsystem, "", chip ? chip->compute_capability : 0u});
    }
    out.driver = machine.driver;
    if (machine.driver || !machine.gpus.empty()) {
        auto support = manifest::load_gpu_support(session.manifests_path());
        auto catalog = session.catalog();
        std::vector<manifest::Gpu> family;
        if (catalog) {
            family = (*catalog)->gpus;
        }
        out.warnings = machine_fit(
            release, support ? *support : manifest::GpuSupport{}, family, ids, machine.driver);
    }
    return out;
}

Result<std::vector<std::string>> forward_compat_gpus(Session& session) {
    auto support = CUDAENV_TRY(manifest::load_gpu_support(session.manifests_path()));
    std::vector<std::string> ids;
    for (const auto& l : support.listings) {
        if (l.forward_compat) {
            ids.push_back(l.subsystem.empty() ? l.device : l.device + "/" + l.subsystem);
        }
    }
    if (ids.empty()) {
        return Error(ErrorCode::incompatible,
                     "the manifests in use do not say which GPUs support forward compatibility "
                     "(gpu-support.json has no forward_compat)")
            .with_hint("cudaenv update, or a newer cudaenv");
    }
    return ids;
}

Status check_forward_compat_here(Session& session,
                                 const Resolution& res,
                                 const std::vector<std::string>& gpus) {
    std::string needs = res.cuda->driver_min ? " >= " + res.cuda->driver_min->str() : "";
    for (const auto& g : sys::read_machine_gpus(session.sysroot()).gpus) {
        if (activate::forward_compat_listed(gpus, g.device, g.subsystem)) {
            continue;
        }
        auto support = manifest::load_gpu_support(session.manifests_path());
        const auto* listing = support ? support->find(g.device, g.subsystem) : nullptr;
        std::string name = (listing ? listing->name + " " : std::string("the GPU ")) +
                           "(PCI 10de:" + g.device + ", " + g.address + ")";
        return Error(ErrorCode::incompatible,
                     "forward compatibility does not run on " + name +
                         ": NVIDIA supports it on data-center GPUs only, and CUDA fails on others "
                         "with error 804 (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)")
            .with_hint("install a driver" + needs + " instead: it runs CUDA " +
                       res.cuda->version.str() + " without compat libraries");
    }
    return Ok{};
}

} // namespace cudaenv::ops
