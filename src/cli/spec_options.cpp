#include "spec_options.hpp"

#include <CLI/CLI.hpp>

namespace cudaenv::cli {

void add_spec_options(CLI::App& sub, SpecOptions& o) {
    sub.add_option("--cuda", o.cuda, "CUDA version (checked against the framework)");
    sub.add_option("--cudnn", o.cudnn, "cuDNN version");
    sub.add_option("--profile", o.profile, "component set: runtime, devel or full")
        ->capture_default_str();
    sub.add_option("--platform",
                   o.platform,
                   "NVIDIA's platform to take: linux-x86_64, linux-sbsa or linux-aarch64 (Jetson) "
                   "(default: CUDAENV_PLATFORM, the config's platform, else this machine's for "
                   "the release)");
    sub.add_flag(
        "--compat",
        o.compat,
        "add NVIDIA's forward-compatibility libraries (cuda_compat): the version then runs "
        "on an older data-center driver (docs/compat.md)");
    sub.add_option("--patch",
                   o.patch,
                   "cublas: the newest cuBLAS patch NVIDIA published for the release, in place "
                   "of its own libcublas; cublas=LABEL: that patch; none: the release's own "
                   "(docs/manifests.md, cublas.json)");
}

} // namespace cudaenv::cli
