// Probe 12: inside Docker, Podman or Kubernetes: GPU device nodes, NVIDIA_VISIBLE_DEVICES, and
// cuDNN in the image's loader cache.
#include "probes.hpp"

namespace cudaenv::doctor::checks {

Finding container(Host& h) {
    std::string kind = h.facts().container();
    if (kind.empty()) {
        return skip("not in a container");
    }
    std::vector<std::string> details{"container: " + kind};
    auto visible = h.files().env("NVIDIA_VISIBLE_DEVICES");
    details.push_back("NVIDIA_VISIBLE_DEVICES=" + visible.value_or("(unset)"));
    // on WSL2 the GPU is /dev/dxg and the Windows driver's libraries (no /dev/nvidia* at all)
    bool wsl = h.facts().in_wsl();
    bool nodes = wsl ? h.files().exists("/dev/dxg")
                     : h.files().exists("/dev/nvidiactl") && h.files().exists("/dev/nvidia0");
    std::string gpus_flag =
        kind == "podman" ? "podman run --device nvidia.com/gpu=all …"
        : kind == "kubernetes"
            ? "request nvidia.com/gpu in the pod's resources (NVIDIA device plugin)"
            : "docker run --gpus all … (with the NVIDIA Container Toolkit)";
    if (!nodes) {
        return fail("in " + kind + " without GPU access: " +
                        (wsl ? std::string("/dev/dxg missing (WSL2)")
                             : std::string("/dev/nvidiactl or /dev/nvidia0 missing")),
                    "start it with the GPUs: " + gpus_flag,
                    details);
    }
    if (visible && (*visible == "void" || *visible == "none" || visible->empty())) {
        return warn(
            "NVIDIA_VISIBLE_DEVICES=" + (visible->empty() ? std::string("\"\"") : *visible) +
                ": the container runtime exposes no GPU",
            "start it with NVIDIA_VISIBLE_DEVICES=all (or " + gpus_flag + ")",
            details);
    }
    bool cudnn = false;
    for (const auto& e : h.loader().ld_cache()) {
        cudnn = cudnn || e.soname.rfind("libcudnn.so.", 0) == 0;
    }
    if (!cudnn) {
        // not a fault: many GPU images need no cuDNN (NVIDIA's own sample runs nvidia-smi in
        // plain ubuntu); the frameworks probe says when a framework needs one that is missing
        details.push_back("no cuDNN in the image's loader cache (a …-cudnn-runtime image, or "
                          "cudaenv install <cuda>+cudnn-<version>, brings one)");
        return ok("in " + kind + " with GPU device nodes", details);
    }
    return ok("in " + kind + " with GPU device nodes and cuDNN in the loader cache", details);
}

} // namespace cudaenv::doctor::checks
