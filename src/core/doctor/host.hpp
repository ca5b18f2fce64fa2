// The small system interface every doctor probe reads through. Files are named as the machine
// sees them ("/proc/driver/nvidia/version") and read under the sysroot (CUDAENV_SYSROOT), so a
// test points the whole doctor at a fixture tree. Libraries (libcudart, libcudnn, libcuda, NVML)
// are never loaded into this process: a child (`cudaenv __doctor-query KIND PATH`) dlopens one by
// its path, calls its version functions and prints key=value lines, so a crashing or hanging
// driver library costs a finding, not the doctor. Facts several probes share (PCI devices, the
// driver, the selected toolkit, the loader's view) are computed once, on first use.
#pragma once

#include "../activate/machine.hpp"
#include "../channel/sets.hpp"
#include "../error.hpp"
#include "../manifest/model.hpp"
#include "../store/root.hpp"
#include "../sys/gpus.hpp"
#include "../sys/ld_cache.hpp"
#include "../sys/process.hpp"
#include "../version.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::doctor {

struct HostConfig {
    std::filesystem::path sysroot = "/";
    std::map<std::string, std::string> env;
    std::filesystem::path cwd;
    /// This cudaenv binary: runs the library queries (`__doctor-query`).
    std::filesystem::path self_exe;
    store::Root root;
    /// The root whose journal owns /usr/local/cuda: `root`, or for a user without a global of
    /// their own, the machine-wide root below it. Empty: `root`.
    store::Root machine_root;

    const store::Root& link_root() const { return machine_root.dir.empty() ? root : machine_root; }

    std::filesystem::path manifests;
    /// Which manifests those are: serial, origin, age (the self probe says when they are old).
    channel::ManifestsInUse manifests_in_use;
    std::filesystem::path ldconfig; ///< empty: /sbin/ldconfig
    std::chrono::milliseconds child_timeout{std::chrono::seconds(10)};
};

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
};

struct DriverFacts {
    bool module_loaded = false;
    std::optional<std::string> module_version; ///< from /proc/driver/nvidia/version
    std::string nvml_path;                     ///< where libnvidia-ml.so.1 resolves; empty: nowhere
    bool nvml_ok = false;
    std::string nvml_error;
    std::optional<std::string> nvml_version; ///< nvmlSystemGetDriverVersion
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
};

/// Where the dynamic loader would find a library, and what else it could have found.
struct LoaderPick {
    std::string soname;
    std::string path;                  ///< as the machine sees it; empty: not found
    std::string via;                   ///< "LD_LIBRARY_PATH", "ld.so.cache", "default directories"
    std::vector<std::string> shadowed; ///< other copies (other real files) it hides
    /// Copies in folders ld.so.conf lists that the cache does not know: ldconfig is out of date.
    std::vector<std::string> not_in_cache;
};

struct ConfEntry {
    std::string dir;  ///< a folder the loader configuration lists
    std::string file; ///< the conf file that lists it
};

using CacheEntry = sys::LdCacheEntry;

class Host {
  public:
    explicit Host(HostConfig config);
    ~Host();
    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;

    const HostConfig& config() const { return m_config; }

    // -- files under the sysroot ----------------------------------------------------------
    /// The real path of a machine path, every link followed inside the sysroot.
    std::filesystem::path at(std::string_view machine_path) const;
    /// Likewise, but the last component itself (a link is not followed): for lstat, readlink.
    std::filesystem::path at_entry(std::string_view machine_path) const;
    /// The machine path of a real path under the sysroot.
    std::string machine_path(const std::filesystem::path& real) const;
    std::optional<std::string> read(std::string_view machine_path,
                                    std::size_t max_bytes = 4u << 20) const;
    bool exists(std::string_view machine_path) const; ///< anything there, even a dangling link
    /// The file holds these bytes (a binary's strings: which environment variables it reads).
    bool file_contains(std::string_view machine_path, std::string_view needle) const;
    bool is_dir(std::string_view machine_path) const;
    /// Names in a folder, sorted; empty when it is not there.
    std::vector<std::string> list(std::string_view machine_path) const;
    std::optional<std::string> read_link(std::string_view machine_path) const;
    /// Follows every link as the machine would (absolute targets stay in the sysroot).
    std::string canonical(std::string_view machine_path) const;
    std::optional<std::string> env(std::string_view name) const;
    /// The first executable `tool` on PATH, as a machine path.
    std::optional<std::string> which(std::string_view tool) const;
    std::vector<std::string> path_list(std::string_view var) const;

    /// Runs a program of the machine (argv[0] a machine path).
    Result<sys::ProcessResult> run(std::vector<std::string> argv) const;

    /// Asks a library about itself in a child process. kind: cudart, cudnn, cuda, nvml.
    const LibraryAnswer& query(std::string_view kind, std::string_view machine_path);

    // -- shared facts, computed once --------------------------------------------------------
    const std::vector<PciGpu>& pci_gpus();
    const DriverFacts& driver();
    const Toolkit& toolkit();
    bool in_wsl();
    /// "docker", "podman", "kubernetes", "container" or empty.
    std::string container();

    // -- the loader -------------------------------------------------------------------------
    const std::vector<ConfEntry>& conf_dirs();
    const std::vector<CacheEntry>& ld_cache();
    const std::string& ld_cache_error(); ///< why the cache could not be read; empty if it was
    LoaderPick pick(std::string_view soname);
    /// The machine's default library folders (after LD_LIBRARY_PATH and the cache).
    std::vector<std::string> default_lib_dirs() const;
    /// The Debian package that installed this file (its real file, so merged /usr names match),
    /// from dpkg's file lists; empty when none did.
    std::string package_owner(std::string_view machine_path);

    // -- what the manifests say -------------------------------------------------------------
    /// The newest release of the toolkit's CUDA major.minor; null when unknown.
    const manifest::CudaRelease* cuda_release();
    const manifest::CudaRelease* cuda_release_for(const Version& major_minor);
    const manifest::Rules* rules();
    const std::vector<manifest::Gpu>& gpu_table();
    /// gpu-support.json: GPUs by PCI id, architectures' last branches, branches' end of life.
    const manifest::GpuSupport& gpu_support();
    /// Today as YYYY-MM-DD (CUDAENV_TODAY overrides the clock, for fixtures).
    std::string today();
    const std::vector<manifest::Framework>& frameworks();

    /// The version of the toolkit at `prefix` (a machine path): version.json, version.txt, the
    /// nvcc banner's release, the full-version libcudart file, in that order.
    std::optional<Version> toolkit_version(const std::string& prefix);

  private:
    struct Cache;
    HostConfig m_config;
    std::unique_ptr<Cache> m_cache;
};

using sys::parse_driver_version; // /proc/driver/nvidia/version -> "535.104.05" (sys/gpus.hpp)

/// "Cuda compilation tools, release 11.8, V11.8.89" -> 11.8.89.
std::optional<Version> parse_nvcc_banner(std::string_view text);

/// The CUDA major of a libcudart SONAME suffix: libcudart.so.11.0 -> 11.
std::string cudart_soname(unsigned cuda_major);

} // namespace cudaenv::doctor
