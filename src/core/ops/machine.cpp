#include "machine_check.hpp"

#include "core/doctor/pci_chips.hpp"
#include "core/manifest/gpu_support.hpp"
#include "core/resolve/gpu_driver.hpp"
#include "core/sys/gpus.hpp"

namespace cudaenv::cli {

MachineCheck machine_check(Context& ctx, const manifest::CudaRelease& release) {
    using nlohmann::json;
    MachineCheck out;
    auto machine = sys::read_machine_gpus(ctx.sysroot());
    json gpus = json::array();
    std::vector<GpuId> ids;
    for (const auto& g : machine.gpus) {
        gpus.push_back(json{{"pci", "10de:" + g.device},
                            {"subsystem", g.subsystem.empty() ? json() : json(g.subsystem)}});
        // the chip family of the id gives the compute capability (an architecture's last
        // branch) for GPUs NVIDIA's lists do not name
        auto chip = doctor::chip_of_device(g.device);
        ids.push_back(GpuId{g.device, g.subsystem, "", chip ? chip->compute_capability : 0u});
    }
    if (machine.driver || !machine.gpus.empty()) {
        auto support = manifest::load_gpu_support(ctx.manifests_path());
        auto catalog = ctx.catalog();
        std::vector<manifest::Gpu> family;
        if (catalog) {
            family = (*catalog)->gpus;
        }
        out.warnings = machine_fit(
            release, support ? *support : manifest::GpuSupport{}, family, ids, machine.driver);
    }
    out.json = json{{"driver", machine.driver ? json(machine.driver->str()) : json()},
                    {"gpus", gpus},
                    {"warnings", out.warnings}};
    return out;
}

} // namespace cudaenv::cli
