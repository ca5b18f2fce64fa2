// The machine facts several probes share, computed once, on first use: the NVIDIA GPUs on the PCI
// bus, the driver (its kernel module and NVML), the toolkit the doctor checks, WSL, containers.
// Libraries (libcudart, libcudnn, libcuda, NVML) are never loaded into this process: a child
// (`cudaenv __doctor-query KIND PATH`, run through the config's ProcessRunner) dlopens one by its
// path, calls its version functions and prints key=value lines, so a crashing or hanging driver
// library costs a finding, not the doctor.
#pragma once

#include "../sys/gpus.hpp"
#include "../version.hpp"
#include "files.hpp"
#include "loader.hpp"
#include "manifests.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::doctor {

/// An NVIDIA display or 3D controller on the PCI bus (class 0x03xxxx, vendor 0x10de).
struct PciGpu {
    std::string address;   ///< 0000:65:00.0
    std::string device_id; ///< 0x2330
    std::string subsystem; ///< "10de:16c0" (subsystem_vendor:subsystem_device); empty if unknown
    std::string name;      ///< from pci.ids, else NVML, else "NVIDIA device 0x2330"
    std::string sysfs;     ///< /sys/bus/pci/devices/0000:65:00.0
};

/// What a library said about itself in the query child.
struct LibraryAnswer {
    bool loaded = false;
    std::string error; ///< why it could not be loaded or asked
    std::map<std::string, std::string> values;

    std::optional<std::string> get(const std::string& key) const;
    std::optional<long long> number(const std::string& key) const;
};

struct NvmlGpu {
    std::string name;
    std::string bus_id;
    std::optional<unsigned> compute_capability; ///< 86 for 8.6
    std::optional<bool> mig_enabled;            ///< none: MIG not supported
    std::optional<bool> mig_pending;
    std::vector<std::string> mig_instances; ///< names of the MIG devices
    std::optional<unsigned> temperature;    ///< °C
    std::optional<unsigned> slowdown_temperature;
    std::optional<std::uint64_t> throttle_reasons;
    std::optional<bool> persistence;                  ///< persistence mode on
    std::optional<std::uint64_t> ecc_uncorrected;     ///< since the driver loaded (volatile)
    std::optional<std::uint64_t> ecc_uncorrected_all; ///< over the GPU's life (aggregate)
    std::optional<bool> remap_pending;   ///< a row remapping waits for a reset (Ampere on)
    std::optional<bool> remap_failed;    ///< a row could not be remapped
    std::optional<bool> retired_pending; ///< a page retirement waits for a reset (Volta, older)
    /// NVLink fabric registration (nvmlDeviceGetGpuFabricInfo, Hopper on): 1 not started, 2 in
    /// progress, 3 completed; none where NVML does not report it (not supported, older drivers)
    std::optional<unsigned> fabric_state;
    std::optional<int> fabric_status; ///< an NVML return code, once completed (0: success)
};

struct DriverFacts {
    bool module_loaded = false;
    std::optional<std::string> module_version; ///< from /proc/driver/nvidia/version
    std::string nvml_path;                     ///< where libnvidia-ml.so.1 resolves; empty: nowhere
    bool nvml_ok = false;
    std::string nvml_error;
    std::optional<std::string> nvml_version; ///< nvmlSystemGetDriverVersion
    std::optional<int> nvml_init_code; ///< what nvmlInit returned when it failed (18: mismatch)
    /// The user-space libraries' own version, from the file the loader maps for
    /// libnvidia-ml.so.1 or libcuda.so.1 (libnvidia-ml.so.550.54.15): what NVML would say when it
    /// cannot start
    std::optional<std::string> library_version;
    std::string library_file; ///< the file that says so
    std::vector<NvmlGpu> gpus;

    /// The kernel module's version, else NVML's.
    std::optional<Version> version() const;
};

/// The toolkit the doctor checks: cudaenv's selection, else /usr/local/cuda, else CUDA_HOME.
struct Toolkit {
    std::string prefix; ///< as the machine sees it; empty: none found
    std::string origin; ///< "cudaenv global (…/state.json)", "/usr/local/cuda", "CUDA_HOME"
    std::optional<std::string> cudaenv_version;
    std::string selection_error;  ///< a pinned version that is not installed
    std::optional<Version> cuda;  ///< best known: cudaenv's record, version.json, nvcc, libcudart
    std::optional<Version> cudnn; ///< cudaenv's record
    /// cudaenv's record: its libcublas component's version, and the cuBLAS patch release it
    /// comes from (install --patch cublas: "13.4.1"; empty for the release's own).
    std::optional<Version> cublas;
    std::string cublas_patch;
};

class Facts {
  public:
    /// Reads the machine through `files` (and the config it holds), asks `loader` where NVML is
    /// and `manifests` which frameworks pin a toolkit, for as long as it lives.
    Facts(const Files& files, Loader& loader, Manifests& manifests);

    /// Asks a library about itself in a child process. kind: cudart, cudnn, cuda, nvml. A child
    /// that cannot start, fails, crashes or does not answer in time is an answer with an error.
    const LibraryAnswer& query(std::string_view kind, std::string_view machine_path);
    /// Starts a remembered query (cudart, cudnn) early for query() to take (Answers::prefetch).
    void prefetch_query(std::string_view kind, std::string_view machine_path);

    const std::vector<PciGpu>& pci_gpus();
    const DriverFacts& driver();
    const Toolkit& toolkit();
    /// The newest release of the toolkit's CUDA major.minor; null when unknown.
    const manifest::CudaRelease* toolkit_release();
    bool in_wsl();
    /// "docker", "podman", "kubernetes", "container" or empty.
    std::string container();

    /// The version of the toolkit at `prefix` (a machine path): version.json, version.txt, the
    /// nvcc banner's release, the full-version libcudart file, in that order.
    std::optional<Version> toolkit_version(const std::string& prefix) const;

  private:
    std::vector<std::string> query_argv(std::string_view kind, std::string_view machine_path) const;

    const Files& m_files;
    Loader& m_loader;
    Manifests& m_manifests;
    std::optional<std::vector<PciGpu>> m_pci;
    std::optional<DriverFacts> m_driver;
    std::optional<Toolkit> m_toolkit;
    std::optional<bool> m_wsl;
    std::optional<std::string> m_container;
    std::map<std::string, LibraryAnswer, std::less<>> m_answers;
};

using sys::parse_driver_version; // /proc/driver/nvidia/version -> "535.104.05" (sys/gpus.hpp)

/// "Cuda compilation tools, release 11.8, V11.8.89" -> 11.8.89.
std::optional<Version> parse_nvcc_banner(std::string_view text);

/// The runtime's SONAME for a CUDA: 10.2 -> libcudart.so.10.2, 11.x -> .11.0, 12.x -> .12.
std::string cudart_soname(const Version& cuda);

} // namespace cudaenv::doctor
