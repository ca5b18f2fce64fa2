// The typed form of cudaenv's manifests (docs/manifests.md): what the loader produces and what
// resolution, install and doctor read. Plain values, no I/O.
#pragma once

#include "../version.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudaenv::manifest {

/// The manifest schema this build reads; anything else is refused.
inline constexpr std::string_view k_schema = "cudaenv.manifest/1";

/// Platforms cudaenv installs for (NVIDIA's platform keys): x86_64, Arm servers (SBSA: Grace,
/// DGX Spark; Jetson Thor and, with cuda_compat_orin, Orin from CUDA 13) and Jetson's own
/// "linux-aarch64" builds (Orin and Xavier up to CUDA 12.9, cuDNN 8.9 and 9.x).
inline constexpr std::string_view k_platforms[] = {"linux-x86_64", "linux-sbsa", "linux-aarch64"};

/// One of k_platforms.
constexpr bool is_platform(std::string_view p) {
    for (auto k : k_platforms) {
        if (k == p) {
            return true;
        }
    }
    return false;
}

/// "linux-x86_64, linux-sbsa, linux-aarch64" -- for messages.
inline std::string platform_list() {
    std::string out;
    for (auto k : k_platforms) {
        out += (out.empty() ? "" : ", ") + std::string(k);
    }
    return out;
}

/// The download base that artifact paths are relative to; a mirror replaces it.
inline constexpr std::string_view k_nvidia_base = "https://developer.download.nvidia.com/compute";

/// One downloadable file. `path` is relative to the download base (k_nvidia_base or a mirror).
/// A few old runfiles live on another NVIDIA host: those have an absolute https `url` instead.
/// Neither is set when only the hash is known.
struct Artifact {
    std::string path;
    std::string url;
    std::string sha256;
    std::optional<std::uint64_t> size;

    bool downloadable() const { return !path.empty() || !url.empty(); }
};

/// One component of a CUDA release (cuda_cudart, libcublas, ...), per platform.
struct Component {
    std::string name;
    std::string description;
    Version version;
    std::map<std::string, Artifact, std::less<>> platforms;
};

struct SmRange {
    unsigned min = 0; ///< 35 for sm_35
    unsigned max = 0;
    std::vector<unsigned> archs;
};

/// Where a CUDA release installs from: NVIDIA's per-component archives, the runfile installer,
/// or -- for a release the manifests know by its index's sha256 alone -- whatever that index
/// lists once fetched (`index`: the release's facts are known, its archives are not yet).
enum class CudaSource { redist, runfile, index };

inline const char* source_name(CudaSource s) {
    return s == CudaSource::redist ? "redist" : s == CudaSource::runfile ? "runfile" : "index";
}

struct CudaRelease {
    Version version;
    std::string release_date;
    CudaSource source = CudaSource::redist;
    /// NVIDIA's redistrib_<version>.json, pinned (NVIDIA does not sign it). Redist era only.
    std::optional<Artifact> redistrib;
    /// Local runfile installers, per platform. Runfile era only.
    std::map<std::string, Artifact, std::less<>> runfiles;
    std::optional<Version> nvcc_version;
    /// Minimum Linux driver for full support, and where the number comes from.
    std::optional<Version> driver_min;
    std::string driver_min_source;
    /// Where a minimum not taken from facts.json's Table 3 rows comes from (a later edition of
    /// the release notes, a driver branch); empty otherwise.
    std::string driver_min_basis;
    /// Minor-version-compatibility floor for this CUDA major (none before CUDA 11).
    std::optional<Version> driver_compat_min;
    std::optional<SmRange> sm;
    std::optional<Version> gcc_max;
    std::optional<Version> clang_max;
    /// Where gcc_max and clang_max come from (the table row, and any patch-release rule).
    std::string host_compilers_source;
    std::vector<Component> components; ///< sorted by name

    const Component* component(std::string_view name) const;
};

/// A cuDNN build for one CUDA version or major.
struct CudnnBuild {
    std::string cuda;        ///< as NVIDIA labels it: "11", "12", "11.2", "10.2"
    unsigned cuda_major = 0; ///< 11 for "11.2"
    /// The CUDA releases NVIDIA supports this build with (major.minor, inclusive): cuDNN 8.1.1's
    /// build for 11.2 is for 11.0-11.2, 8.5's cuda10 build for 10.2 only. Unset: every minor.
    std::optional<Version> cuda_min, cuda_max;

    /// `cuda` (major.minor) is in [cuda_min, cuda_max] and of this build's major.
    bool covers(const Version& want) const;
    std::map<std::string, Artifact, std::less<>> platforms;
    /// Other components NVIDIA ships beside `cudnn` in the same index for this build (from
    /// 9.20: `cudnn_jit`, the graph JIT library), per platform. Installed with cuDNN and
    /// flattened into lib64 like it (docs/manifests.md).
    std::map<std::string, std::map<std::string, Artifact, std::less<>>, std::less<>> extras;
};

/// A component of a cuDNN release (`cudnn`, or an extra such as `cudnn_jit`: every cuDNN index
/// component is named cudnn*, no CUDA component is): laid out flattened, like cuDNN.
inline bool is_cudnn_component(std::string_view name) {
    return name == "cudnn" || name.starts_with("cudnn_");
}

enum class CudnnLayout {
    redist,  ///< <name>-<platform>-<ver>_cudaNN-archive/{lib,include}, 8.5 on
    tarball, ///< cuda/{lib64,include} (.tgz before 8.3, .tar.xz local installers 8.3-8.4)
};

/// A cuDNN release whose NVIDIA index is known only in part (the opening of its index page,
/// data/reference/cudnn-redist-excerpts-2026.json): the index's bytes are not known, nor the
/// builds and components it lists beyond the excerpt. What is listed here is *not known*, which
/// is not the same as NVIDIA not shipping it: resolve says so and never guesses.
struct PartlyKnown {
    std::string index;  ///< NVIDIA's index, relative to the download base (not pinned)
    std::string source; ///< where what is known comes from
    /// Builds not known: (NVIDIA's CUDA label, platform), e.g. ("13", "linux-sbsa").
    std::vector<std::pair<std::string, std::string>> builds;
    std::vector<std::string> components; ///< components not known: cudnn_jit, cudnn_samples
};

struct CudnnRelease {
    Version version; ///< full: 8.6.0.163
    unsigned major = 0;
    std::string release_date;
    CudnnLayout layout = CudnnLayout::redist;
    std::vector<Artifact> redistrib; ///< NVIDIA's index files for this release, pinned
    std::vector<CudnnBuild> builds;  ///< newest CUDA first
    std::optional<PartlyKnown> known_in_part;

    /// Whether this release's build for CUDA label `cuda` on `platform` is one its partial
    /// index leaves unknown (false for a release known in full).
    bool build_unknown(std::string_view cuda, std::string_view platform) const;

    /// The build for a CUDA release: of the same major, the newest build whose supported range
    /// covers it; else, from CUDA 11 on (minor-version compatibility), the newest build of the
    /// major labelled no later than it (outside NVIDIA's tested range: `covers` says so).
    /// Before CUDA 11 the sonames carry the minor (libcudart.so.10.1): only a covering build.
    /// Null if none.
    const CudnnBuild* build_for(const Version& cuda) const;
};

/// Where a value comes from: the upstream text it was read from, and whether that text is the
/// project's own (primary: its repository at a tag, its wheels' METADATA) or a copy, a third
/// party or an inference (secondary). `resolve` says which values are secondary.
struct Sourced {
    std::string text;
    bool primary = false;
};

/// One CUDA build of a framework release: PyTorch's wheel variants (cu118, cu121; each pins exact
/// nvidia-* versions) or JAX's CUDA plugins (cuda12, cuda13; each requires nvidia-* at least).
struct FrameworkVariant {
    std::string tag; ///< "cu121", "cuda12"
    /// The CUDA the wheels were built for (PyTorch: 12.1), or the oldest the wheels accept
    /// (JAX: its nvidia-cuda-runtime floor, 12.1); `cuda_floor` says which.
    Version cuda;
    bool cuda_floor = false;
    /// The CUDA to install for it when that is not `cuda` itself (JAX: the version its own CI
    /// built with, when at least the floor).
    std::optional<Version> cuda_install;
    /// The cuDNN the wheels pin (PyTorch: 9.1.0.70), or the oldest they accept (JAX: 9.8).
    std::optional<Version> cudnn;
    std::optional<Version> cudnn_below; ///< JAX: the first cuDNN they refuse (10.0)
    /// pip distribution -> requirement as the wheel states it ("==9.1.0.70", ">=9.8,<10.0";
    /// "cuda-toolkit[cublas,cudart]" -> "==13.0.2" for PyTorch's newer meta package).
    std::map<std::string, std::string> pins;
    std::map<std::string, Sourced> sources; ///< "cuda", "cudnn", "pins"

    /// `cuda` as PyTorch names its variants: 12.1 -> "cu121".
    static std::string torch_tag(const Version& cuda);
};

struct FrameworkRelease {
    Version series; ///< 2.13: what `tf-2.13` and 2.13.1 fall under
    Version tested; ///< 2.13.0: the release the upstream table lists
    Version cuda;   ///< 11.8 (with variants: the default variant's)
    Version cudnn;  ///< 8.6 (with variants: the default variant's)
    std::string package;
    std::string python;
    std::string compiler;
    std::string build_tools;
    /// PyTorch and JAX: every CUDA build of the release, and the one a plain `pip install`
    /// gets (PyPI's wheel; JAX's `[cuda]` extra). Empty for TensorFlow (one tested pair).
    std::vector<FrameworkVariant> variants;
    std::string default_variant;
    std::map<std::string, Sourced> sources; ///< "variants", "default"

    const FrameworkVariant* variant(std::string_view tag) const;

    const FrameworkVariant* default_one() const { return variant(default_variant); }
};

/// A verdict rule a framework's rows are judged by, with the upstream text it comes from.
/// The logic is cudaenv's (resolve.cpp), keyed by `id`; the manifests say which rules apply to
/// which framework and why.
struct FrameworkRule {
    std::string id; ///< "cuda-major", "cuda-minor", "cuda-floor", "cudnn-min-minor", "cudnn-floor"
    std::string text;   ///< what it says, in a sentence
    std::string source; ///< where upstream says so
};

/// How a framework build tolerates another CUDA or cuDNN than the one it was built with.
enum class CompatRule {
    exact,                ///< only the tested major.minor
    same_major_min_minor, ///< same major, minor >= the tested one
};

struct Framework {
    std::string name;                  ///< "tensorflow"
    std::vector<std::string> aliases;  ///< "tf"
    std::vector<std::string> packages; ///< pip names that install a GPU build
    CompatRule cuda_rule = CompatRule::same_major_min_minor;
    CompatRule cudnn_rule = CompatRule::same_major_min_minor;
    std::vector<FrameworkRelease> releases; ///< newest first
    /// The rules of a framework whose releases have variants; empty for TensorFlow, judged by
    /// `cuda_rule` and `cudnn_rule` against its one tested pair.
    std::vector<FrameworkRule> rules;

    const FrameworkRule* rule(std::string_view id) const;

    /// The row a framework version falls under: 2.13.1 -> the 2.13 row.
    const FrameworkRelease* find(const Version& v) const;
};

struct Gpu {
    std::string name;
    unsigned compute_capability = 0; ///< 86 for 8.6
    std::string architecture;
    /// The oldest Linux driver that drives it: Table 3's minimum for the first CUDA with its SM
    /// (a driver older than its GPU cannot bind the device). None where the facts cannot say:
    /// SMs older than the table, Jetson modules (their driver ships with JetPack).
    std::optional<Version> min_driver;
    std::string min_driver_basis; ///< "CUDA 11.8 GA is the first with sm_90 (Table 3)"
};

/// One GPU as NVIDIA's driver lists it, by PCI id (gpu-support.json): the first driver of each
/// branch whose list of compatible GPUs names it. Turing and newer: the open kernel modules'
/// "Compatible GPUs" list at every tag. Older GPUs are not listed; the family rule (`Gpu`) is
/// their data.
struct GpuListing {
    std::string device;    ///< "2331": four lower-case hex digits, as sysfs writes it after 0x
    std::string subsystem; ///< "10de:1626" where the listing is per subsystem; empty: any
    std::string name;      ///< "NVIDIA H100 PCIe"
    /// Driver branch (520) -> the first mainline driver of that branch that lists the GPU. A
    /// driver of another branch does not list it, unless the branch is newer than every branch
    /// the data knows.
    std::map<unsigned, Version> first_per_branch;
    /// The lowest driver that lists it, when that is not a mainline tag (520.56.06 for the H100
    /// PCIe; such tags were released after higher-numbered ones): that exact driver drives it.
    std::optional<Version> off_mainline;
    Version last_listed;          ///< the newest driver that lists it
    bool listed_in_newest = true; ///< false: the newest driver the data knows drops it
    /// NVIDIA supports CUDA forward compatibility (cuda_compat) on it: a data-center part. False
    /// for GeForce, TITAN and workstation RTX, where the compat libcuda fails with error 804.
    bool forward_compat = false;
};

/// The last driver branch and CUDA toolkit of an architecture (NVIDIA's CUDA Toolkit, Driver
/// and Architecture Matrix): a newer branch's module does not bind the GPU.
struct ArchitectureSupport {
    std::string architecture;                   ///< "Pascal"
    std::vector<unsigned> compute_capabilities; ///< 60, 61
    std::optional<unsigned> last_branch;        ///< 580; none while ongoing
    std::string last_toolkit;                   ///< "CUDA 12.x"
};

/// A driver branch's support life (NVIDIA's Data Center Drivers docs).
struct DriverBranchLife {
    unsigned branch = 0;     ///< 535
    std::string kind;        ///< "Long Term Support Branch"
    std::string end_of_life; ///< "2026-06" (year-month)
};

struct GpuSupport {
    std::string listings_source;
    std::optional<Version> newest_driver; ///< the newest driver the listings were read from
    std::vector<GpuListing> listings;     ///< by device, then subsystem
    std::string forward_compat_source;    ///< where the listings' forward_compat comes from
    std::string architectures_source;
    std::vector<ArchitectureSupport> architectures;
    std::string branches_source;
    std::vector<DriverBranchLife> branches; ///< ascending by branch

    /// The listing for a device and subsystem: the subsystem's own, else the device's. Null
    /// when the id is not listed. `exact` says whether the subsystem's own row answered.
    const GpuListing*
    find(std::string_view device, std::string_view subsystem, bool* exact = nullptr) const;
    /// Every branch some listing names (the branches the data knows).
    std::set<unsigned> known_branches() const;
    const ArchitectureSupport* architecture_of(unsigned compute_capability) const;
};

/// A cuBLAS patch release NVIDIA ships apart from the CUDA Toolkit (from March 2026), from its
/// own index tree compute/cublas/redist/ (cublas.json, docs/manifests.md): a newer libcublas and
/// libcublasLt for one toolkit line, installed in place of the release's own (`install --patch
/// cublas`).
struct CublasPatch {
    std::string label;        ///< "13.4.1": its index's name (redistrib_13.4.1.json)
    Version version;          ///< 13.4.1.2: the libcublas it carries
    std::string release_date; ///< "2026-04-28"
    unsigned cuda_major = 0;  ///< the archives' cuda_variant (13)
    /// The toolkit line (major.minor) whose own libcublas it replaces, and whether NVIDIA (or a
    /// quote of NVIDIA) says so or it is inferred from the version numbering, with the source.
    Version replaces;
    bool replaces_inferred = true;
    std::string replaces_source;
    std::string index;  ///< "cublas/redist/redistrib_13.4.1.json", relative to the download base
    std::string source; ///< where the archives' values were read
    /// What it fixes and where that is said; both empty when not known.
    std::string fixes;
    std::string fixes_source;
    /// linux-x86_64, linux-sbsa: the archive (path relative to the download base).
    std::map<std::string, Artifact, std::less<>> platforms;
};

/// A CUDA release NVIDIA has published -- or previewed -- whose index the manifests do not know
/// (announced.json, from the reference's cuda-2026-12-supplement.json): `list --available` and
/// `resolve` show what is known of it, `install` refuses it as not known (exit 9). A manifests
/// set that carries the release itself (cuda/<version>.json) makes it installable: a release
/// the catalog has always wins over its announcement.
struct AnnouncedRelease {
    /// 13.5 (major.minor: the full version is not known until its index is), or 13.4.0
    Version version;
    bool preview = false;                 ///< a developer preview (13.4.0), not a release
    std::optional<Version> superseded_by; ///< a preview's GA release (13.4.1)
    std::string status_source;            ///< the reference's words for its status, sourced
    std::string index;                    ///< why its index is not known (the reference's words)
    std::string release_date;             ///< empty: not known
    std::string release_date_text;        ///< what is known of the date, and from where
    /// The driver branch it needs, and whether NVIDIA's text names it or it is inferred.
    std::optional<unsigned> driver_branch;
    bool driver_branch_inferred = true;
    std::string driver_source;
    std::optional<Version> driver_compat_min; ///< its major's minor-version-compatibility floor
    std::string platforms;                    ///< as its release notes list them
    /// NVIDIA's release notes' component table: name, version as printed.
    std::vector<std::pair<std::string, std::string>> components;
    std::string components_source;
    /// What the reference could not find: what, and its words ("NOT FOUND ...").
    std::vector<std::pair<std::string, std::string>> not_known;
};

/// One of NVIDIA's per-driver indexes (compute/nvidia-driver/redist/redistrib_<driver>.json),
/// as far as the manifests know it (driver-indexes.json): from CUDA 13.4 NVIDIA ships
/// cuda_compat there, one CUDA minor per driver, instead of in the CUDA index.
struct DriverIndex {
    Version driver;           ///< 620.70.10
    std::string release_date; ///< the index's
    std::string index;        ///< nvidia-driver/redist/redistrib_620.70.10.json (not pinned)
    Version compat_cuda;      ///< the CUDA minor its cuda_compat is for (cuda_variant 13.5)
    /// cuda_compat per platform: each archive with NVIDIA's sha256 and size.
    std::map<std::string, Artifact, std::less<>> compat;
    std::string source; ///< where these values were read
};

/// A named set of CUDA components. `all` takes every component of the release except
/// `exclude`; otherwise `includes` (other profiles) plus `components`.
struct Profile {
    std::string name;
    std::string description;
    std::vector<std::string> includes;
    std::vector<std::string> components;
    bool all = false;
    std::vector<std::string> exclude;
};

struct Rules {
    /// cuDNN major -> the libraries (without "lib"/".so") every install must have.
    std::map<unsigned, std::vector<std::string>> cudnn_sublibraries;
    /// cuDNN major -> header holding CUDNN_MAJOR/MINOR/PATCHLEVEL.
    std::map<unsigned, std::string> cudnn_version_header;
};

/// Everything the manifests say, loaded and validated.
/// A release the manifests know only by the sha256 of NVIDIA's index file for it
/// (redistrib_<v>.json): the index is fetched at install time, checked against this pin, and
/// then its per-archive hashes are trusted (manifests/indexes.json).
struct PinnedIndex {
    std::string product; ///< "cuda" or "cudnn"
    Version version;     ///< as the index file names it: 13.1.2, 9.19.0
    Artifact index;      ///< cuda/redist/redistrib_13.1.2.json + its sha256
    /// CUDA: what the manifests know of the release before its index is fetched (source
    /// `index`: the minimum driver, SM range and host compilers from the facts; no components).
    std::optional<CudaRelease> release;
};

struct Catalog {
    std::vector<PinnedIndex> pinned_indexes;
    std::vector<CudaRelease> cuda;   ///< ascending by version
    std::vector<CudnnRelease> cudnn; ///< ascending by version
    std::vector<Framework> frameworks;
    std::vector<Gpu> gpus;
    std::vector<Profile> profiles;
    Rules rules;
    /// cublas.json: NVIDIA's cuBLAS patch releases, ascending by version; empty without the file.
    std::vector<CublasPatch> cublas_patches;
    /// announced.json: releases NVIDIA published whose index is not known, ascending; empty
    /// without the file.
    std::vector<AnnouncedRelease> announced;
    /// driver-indexes.json: NVIDIA's per-driver indexes with their cuda_compat, ascending by
    /// driver; empty without the file.
    std::vector<DriverIndex> driver_indexes;

    const CudaRelease* find_cuda(const Version& exact) const;
    /// Newest CUDA release that `prefix` is a prefix of (11.8 -> 11.8.0).
    const CudaRelease* newest_cuda(const Version& prefix) const;
    /// Newest cuDNN release matching `prefix`; with `cuda`, only those with a build for it.
    const CudnnRelease* newest_cudnn(const Version& prefix,
                                     const std::optional<Version>& cuda = std::nullopt) const;
    const Framework* framework(std::string_view name_or_alias) const;
    /// The newest index-pinned release of `product` matching `prefix` that is newer than every
    /// release the manifests describe in full for that prefix (or the only one); null if none.
    const PinnedIndex* pinned_index(std::string_view product, const Version& prefix) const;
    const Profile* profile(std::string_view name) const;

    /// The component names of `profile` that `release` has, sorted.
    /// The components a (non-`all`) profile names, its includes' too: what a runfile, which
    /// lists no components, is asked for.
    std::set<std::string> profile_wanted(const Profile& profile) const;
    std::vector<std::string> profile_components(const Profile& profile,
                                                const CudaRelease& release) const;
};

} // namespace cudaenv::manifest
