// What a manifests set changes against another (`update --check`, and what `update` reports):
// releases it adds or drops, and verdicts it changes -- a CUDA release's driver minimum or GPU
// range, a cuDNN's CUDA builds, a framework's tested pair, a GPU's first driver.
#pragma once

#include "../manifest/model.hpp"

#include <string>
#include <vector>

namespace cudaenv::channel {

struct SetChange {
    enum class Kind { added, removed, changed };
    Kind kind = Kind::added;
    std::string subject; ///< "CUDA 13.5.0", "tensorflow 2.21", "GPU 2331 (NVIDIA H100 PCIe)"
    std::string detail;  ///< "released 2026-12-01"; "driver 570.26 or newer (was 570.124.06)"

    const char* kind_text() const;
};

/// Every change from `before` to `after`, releases first, in version order.
std::vector<SetChange> diff_sets(const manifest::Catalog& before,
                                 const manifest::GpuSupport& before_gpus,
                                 const manifest::Catalog& after,
                                 const manifest::GpuSupport& after_gpus);

} // namespace cudaenv::channel
