// Resolution: a SPEC plus the manifests -> the exact CUDA release, cuDNN release and build,
// every archive to download for a profile and platform, and the compatibility verdict.
// Pure: reads only the Catalog.
#pragma once

#include "../error.hpp"
#include "../manifest/model.hpp"
#include "../spec.hpp"
#include "../sys/platform.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cudaenv {

struct ResolveOptions {
    std::optional<Version> cuda;  ///< --cuda: overrides or completes the SPEC
    std::optional<Version> cudnn; ///< --cudnn
    std::string profile = "runtime";
    std::string platform = "linux-x86_64";
    /// The platform each CUDA release is taken for (ops::Session::platform_for: a forced one,
    /// else the host's choice for that release, sys::platform_for). When set, resolve picks the
    /// release first -- the newest the SPEC allows that has archives for its platform --, then
    /// asks this, then takes the archives; `platform` is not used. A release the platform has
    /// nothing for is refused (incompatible, exit 8), naming the platform and what exists.
    std::function<sys::PlatformChoice(const Version& cuda)> platform_for;
    /// sha256s of files the user has (install --archive FILE): an artifact known only by its
    /// hash is installable when its file is here.
    std::set<std::string> local_archives;
    /// install --compat: NVIDIA's forward-compatibility libraries (cuda_compat) too.
    bool compat = false;
    /// install --patch: "cublas" (the newest cuBLAS patch NVIDIA published for the release:
    /// its libcublas archive instead of the release's own), "cublas=LABEL" (that patch: 13.4.1
    /// or 13.4.1.2), "none" or empty (the release's own).
    std::string patch;
};

/// Whether `text` is a value --patch takes ("", "none", "cublas", "cublas=LABEL").
bool is_patch_request(std::string_view text);

/// What to take from a runfile installer (it lists no components: its payload has one folder
/// per component, or one toolkit tree before CUDA 11).
struct RunfileSelection {
    bool all = false;                    ///< every component but `exclude` (the full profile)
    std::vector<std::string> components; ///< otherwise these
    std::vector<std::string> exclude;
    std::string profile; ///< names the store entry: one per runfile and profile
};

struct ResolvedArchive {
    std::string component; ///< "cuda_cudart", "cudnn", or "cuda" for a runfile
    Version version;
    manifest::Artifact artifact;
    std::optional<RunfileSelection> runfile; ///< set for a runfile installer
};

/// A framework's pin this resolution does not meet (docs/spec.md, "Framework pins"): what the
/// wheels pin, what is used instead, and why.
struct PinNotMet {
    std::string what;   ///< "cudnn"
    std::string pinned; ///< "9.24.0.43"
    std::string pin;    ///< as the wheels state it: "nvidia-cudnn-cu13==9.24.0.43" (or empty)
    std::string used;   ///< "9.27.0.42"
    std::string why;    ///< "not known for linux-sbsa: ..."
};

/// "the cu130 wheels pin cuDNN 9.24.0.43 (nvidia-cudnn-cu13==9.24.0.43), which is not known for
/// linux-sbsa (...): cuDNN 9.27.0.42 is used instead" -- one line, for install's notes.
std::string pin_not_met_text(const PinNotMet& pin);

struct Resolution {
    std::string spec;
    const manifest::Framework* framework = nullptr;
    const manifest::FrameworkRelease* framework_release = nullptr;
    /// PyTorch's and JAX's CUDA build: named in the SPEC (+cu121), else the release's default.
    const manifest::FrameworkVariant* framework_variant = nullptr;
    std::optional<Version> framework_version; ///< as asked: 2.13.1
    const manifest::CudaRelease* cuda = nullptr;
    const manifest::CudnnRelease* cudnn = nullptr;
    const manifest::CudnnBuild* cudnn_build = nullptr;
    std::string profile;
    std::string platform; ///< NVIDIA's platform the archives are for ("linux-aarch64")
    /// A component the host needs beside the toolkit on this platform (sys::PlatformChoice:
    /// "cuda_compat_orin" on a Jetson Orin from CUDA 13.2); its archive is among `archives`.
    std::string platform_compat;
    std::vector<ResolvedArchive> archives;
    /// The libraries the chosen cuDNN major must have (rules.json), without ".so.N".
    std::vector<std::string> cudnn_sublibraries;
    std::uint64_t total_size = 0;  ///< of the archives whose size is known
    std::size_t unknown_sizes = 0; ///< archives the manifests give no size for
    /// Why (part of) this cannot be installed yet; empty when everything can.
    std::vector<std::string> not_installable;
    /// Things worth saying that do not block (an untested but compatible pair).
    std::vector<std::string> notes;
    /// The framework's pins not met (each also said in `notes`).
    std::vector<PinNotMet> pins_not_met;
    /// --compat: the archives hold cuda_compat. The PCI ids NVIDIA supports forward
    /// compatibility on are not in the catalog: the caller that has the GPU tables fills
    /// `forward_compat_gpus` (activate::CompatFile's list) before install writes it.
    bool compat = false;
    std::vector<std::string> forward_compat_gpus;

    /// The cuBLAS patches NVIDIA published for this release's line that are newer than its own
    /// libcublas (manifests' cublas.json), newest first: what `resolve` offers.
    std::vector<const manifest::CublasPatch*> cublas_patches;
    /// The patch whose libcublas archive is among `archives` in place of the release's own
    /// (--patch cublas); null: the release's own.
    const manifest::CublasPatch* cublas_patch = nullptr;

    /// Halves known by their release's pinned index alone (manifests/indexes.json), as
    /// describe() resolves them: the CUDA half is then a release of source `index` (facts, no
    /// archives until the index is fetched), the cuDNN half has no release, only this.
    const manifest::PinnedIndex* cuda_index = nullptr;
    const manifest::PinnedIndex* cudnn_index = nullptr;

    bool installable() const { return not_installable.empty(); }

    /// Everything is known now ("full"), or part waits for a pinned index ("index").
    std::string known() const { return cuda_index || cudnn_index ? "index" : "full"; }

    /// The selectable version's name: "11.8.0" or "11.8.0+cudnn8.6.0.163" (docs/design.md 3.1).
    std::string version_name() const;
};

/// Resolves a parsed SPEC. Errors: not_found (no such framework or release, with "did you
/// mean"), incompatible (a pair the manifests refuse, with the compatible choice), usage (a
/// cuDNN without a CUDA, an unknown profile).
Result<Resolution>
resolve(const manifest::Catalog& catalog, const Spec& spec, const ResolveOptions& options);

/// What `resolve` shows: resolve(), where a half the manifests know only by the pinned index of
/// its release resolves too, to what is known before that index is fetched (its sha256; for
/// CUDA the facts: minimum driver, SM range, host compilers). `install` fetches the index
/// instead and then knows everything. The Resolution points into `catalog` (a copy of the
/// catalog with the index-known CUDA release in it, when there is one): keep it alive.
/// A plain CUDA SPEC the catalog has no release for but announced.json announces (CUDA 13.5,
/// the 13.4.0 preview) describes to the announcement: `announced` set, `res` without a release
/// (`res.cuda` null), not installable, saying why.
struct Described {
    std::shared_ptr<const manifest::Catalog> catalog;
    Resolution res;
    const manifest::AnnouncedRelease* announced = nullptr;
};

Result<Described>
describe(const manifest::Catalog& catalog, const Spec& spec, const ResolveOptions& options);

/// Puts `patch`'s libcublas archive for the resolution's platform in place of the release's
/// own. Refused (incompatible, exit 8, one line) when the patch is for another toolkit line or
/// CUDA major, not newer than the release's own libcublas, or has no archive for the platform
/// (NVIDIA publishes linux-x86_64 and linux-sbsa only); usage (exit 2) when the profile installs
/// no libcublas.
Status apply_cublas_patch(Resolution& res, const manifest::CublasPatch& patch);

/// Checks a CUDA (and optionally cuDNN) version against what a framework release was built
/// with, by the framework's compat rules. incompatible names the reason and the tested pair.
/// On success, `notes` receives a line when the pair is compatible but not the tested one.
Status check_framework_compat(const manifest::Framework& framework,
                              const manifest::FrameworkRelease& release,
                              const Version& cuda,
                              const std::optional<Version>& cudnn,
                              std::vector<std::string>* notes = nullptr);

/// The same for a release with CUDA variants (PyTorch, JAX), by the framework's rules
/// (manifests' `rules`, each with its source): a CUDA major no variant has is refused; another
/// minor of a built-for CUDA is a note (minor-version compatibility); a CUDA below a JAX floor,
/// a cuDNN of another major, below PyTorch's minor or outside JAX's range is refused. `variant`
/// null: judged against the variant that fits `cuda` best.
Status check_variant_compat(const manifest::Framework& framework,
                            const manifest::FrameworkRelease& release,
                            const manifest::FrameworkVariant* variant,
                            const Version& cuda,
                            const std::optional<Version>& cudnn,
                            std::vector<std::string>* notes = nullptr);

/// The variant of `release` that fits `cuda` best: the same major.minor (PyTorch) or the major
/// (JAX), else the newest build for an older minor of the major, else the oldest for a newer one;
/// null when no variant has its major.
const manifest::FrameworkVariant* best_variant(const manifest::FrameworkRelease& release,
                                               const Version& cuda);

/// Whether NVIDIA publishes anything of `release` for `platform` (a redistrib component's
/// archive, or the runfile); true for a release known by its index alone (known once fetched).
bool has_platform(const manifest::CudaRelease& release, std::string_view platform);

/// The CUDA releases (major.minor, runs of the catalog's consecutive releases joined: "11.8,
/// 12.0-12.2, 12.4-12.9") that have archives for `platform`: what a refusal names instead.
std::string releases_with_platform(const manifest::Catalog& catalog, std::string_view platform);

} // namespace cudaenv
