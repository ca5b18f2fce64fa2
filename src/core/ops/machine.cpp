// A release against this machine's GPUs and driver (machine.hpp).
#include "machine.hpp"

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

} // namespace cudaenv::ops
