// The active Python environment, read as files (nothing is imported, no Python runs): which
// environment is active (VIRTUAL_ENV, CONDA_PREFIX, else the python3 on PATH, through pyenv's
// shims), its site-packages, the distributions installed there (dist-info folders and their
// METADATA), and the GPU frameworks among them: TensorFlow, PyTorch (torch/version.py, the
// +cuXYZ local version, its nvidia-* and cuda-toolkit[...] pins) and JAX (jaxlib's +cudaNN local
// version, the jax-cudaNN-plugin, the nvidia-* wheels it installed).
//
// One reader for `use --match`, `install --match`, `env --for`, the project's framework pin and
// the doctor's framework probe; the doctor reads through its Host (under CUDAENV_SYSROOT),
// commands through the real filesystem.
#pragma once

#include "../version.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::pyenv {

/// What the reader needs of the machine. Paths are the machine's.
class Files {
  public:
    virtual ~Files() = default;
    virtual std::vector<std::string> list(const std::string& dir) const = 0; ///< sorted names
    virtual std::optional<std::string> read(const std::string& file, std::size_t max) const = 0;
    virtual bool is_dir(const std::string& path) const = 0;
    virtual bool exists(const std::string& path) const = 0;
    virtual std::string canonical(const std::string& path) const = 0;
    virtual std::optional<std::string> env(const std::string& name) const = 0;
    /// The first executable `tool` on PATH.
    virtual std::optional<std::string> which(const std::string& tool) const = 0;
};

/// The real filesystem and a captured environment.
class RealFiles final : public Files {
  public:
    explicit RealFiles(std::map<std::string, std::string> env) : m_env(std::move(env)) {}

    std::vector<std::string> list(const std::string& dir) const override;
    std::optional<std::string> read(const std::string& file, std::size_t max) const override;
    bool is_dir(const std::string& path) const override;
    bool exists(const std::string& path) const override;
    std::string canonical(const std::string& path) const override;
    std::optional<std::string> env(const std::string& name) const override;
    std::optional<std::string> which(const std::string& tool) const override;

  private:
    std::map<std::string, std::string> m_env;
};

struct Environment {
    std::string prefix;             ///< "/home/u/proj/.venv"
    std::string found_by;           ///< "VIRTUAL_ENV", "CONDA_PREFIX", "python3 on PATH (...)"
    std::vector<std::string> sites; ///< site-packages in import order
};

/// The active environment; none when there is no VIRTUAL_ENV, CONDA_PREFIX or python3 on PATH
/// with a site-packages folder.
std::optional<Environment> active_environment(const Files& files);

struct Dist {
    std::string name;    ///< as its dist-info folder writes it: "torch", "nvidia_cudnn_cu12"
    std::string version; ///< "2.5.1+cu121"
    std::string site;
    std::string dist_info; ///< its folder
    /// The public version (2.5.1) and the local label (cu121); "" when there is none.
    std::string public_version() const;
    std::string local() const;
};

/// `name` normalised as wheels do (PEP 503: lower case, runs of -_. as "_"): the first site
/// that has its dist-info.
std::optional<Dist>
find_dist(const Files& files, const std::vector<std::string>& sites, const std::string& name);

/// Every dist-info in `sites` whose name starts with `prefix` ("nvidia_").
std::vector<Dist> dists_with_prefix(const Files& files,
                                    const std::vector<std::string>& sites,
                                    const std::string& prefix);

/// The Requires-Dist lines of a distribution's METADATA (markers kept).
std::vector<std::string> requires_dist(const Files& files, const Dist& dist);

struct Framework {
    std::string name;               ///< "pytorch", "jax", "tensorflow" (cudaenv's manifest names)
    Dist dist;                      ///< torch, jaxlib, tensorflow
    std::optional<Version> version; ///< its public version
    /// Its CUDA build: "cu121" (PyTorch), "cuda12" (JAX); empty for a CPU build or unknown.
    std::string variant;
    /// The CUDA it was built for, as exactly as the files say: torch/version.py (12.1), the
    /// nvidia-cuda-nvcc/-runtime wheel JAX installed (12.6), else the plugin's major alone (12).
    std::optional<Version> cuda;
    std::string cuda_from; ///< where that was read
    /// nvidia-* and cuda-toolkit requirements in its METADATA (or its plugin's)
    std::vector<std::string> pins;
    /// nvidia-* wheels installed beside it: distribution -> version
    std::map<std::string, std::string> nvidia;
    bool cpu_only = false; ///< a CPU build (torch's cuda None, tensorflow-cpu, jaxlib alone)
    /// Other records of the same distribution in its site-packages (conda's egg-info beside a
    /// wheel pip or uv installed over it): two installs whose files overwrote each other.
    std::vector<std::string> also_installed;
};

/// TensorFlow, PyTorch and JAX in the environment, in that order.
std::vector<Framework> installed_frameworks(const Files& files, const Environment& env);

} // namespace cudaenv::pyenv
