// What a manifests set changes against another (`update --check`, and what `update` reports):
// releases it adds or drops, and verdicts it changes -- a CUDA release's driver minimum or GPU
// range, a cuDNN's CUDA builds, a framework's tested pair, a GPU's first driver, a cuBLAS patch
// release (cublas.json).
#pragma once

#include "../error.hpp"
#include "../manifest/advisories.hpp"
#include "../manifest/model.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::channel {

/// The file of a set that declares its changed pins.
inline constexpr const char* k_repins_file = "repins.json";

struct SetChange {
    enum class Kind { added, removed, changed, repinned };
    Kind kind = Kind::added;
    std::string subject; ///< "CUDA 13.5.0", "tensorflow 2.21", "GPU 2331 (NVIDIA H100 PCIe)"
    std::string detail;  ///< "released 2026-12-01"; "driver 570.26 or newer (was 570.124.06)"

    const char* kind_text() const;
};

/// Every change from `before` to `after`, releases first, in version order. Pin changes are not
/// among them: see pin_changes.
std::vector<SetChange> diff_sets(const manifest::Catalog& before,
                                 const manifest::GpuSupport& before_gpus,
                                 const manifest::Catalog& after,
                                 const manifest::GpuSupport& after_gpus);

/// What advisories.json adds, drops and changes (an advisory's severity, its ranges, a fix).
std::vector<SetChange> diff_advisories(const manifest::Advisories& before,
                                       const manifest::Advisories& after);

/// A sha256 the manifests pin for a file NVIDIA publishes (an archive, a runfile, an index):
/// what `install` trusts before anything else. A pin is known by two keys, so that moving it does
/// not make it another pin: where it is (its path or URL) and what it is ("cuda 11.8.0
/// cuda_cudart linux-x86_64", "cuda-index 11.8.0", "cudnn-index 9.7.0": an index is named by the
/// version its file name carries, whether the manifests describe the release in full or know it
/// by its index alone).
struct Pin {
    std::string where; ///< path, or URL
    std::string what;  ///< the identity
    std::string sha256;
    std::string subject; ///< "CUDA 13.1.0 index", "cuDNN 9.7.0 cudnn linux-x86_64"
};

/// Every pin of a catalog: CUDA and cuDNN index files, archives (every platform, cuDNN's
/// extras), runfiles, and the releases known only by their index.
std::vector<Pin> pins_of(const manifest::Catalog& c);

/// Pins known before an update, by both keys (`where` and `what`): the shipped set's, every pin
/// this machine took before (its pin history, which remembers releases a later set dropped), then
/// the set in use's, each later one overriding.
using KnownPins = std::map<std::string, std::string>;
void add_pins(KnownPins& known, const std::vector<Pin>& pins);

/// A pin whose sha256 changes: same place or same identity, another hash.
struct PinChange {
    Pin now;         ///< the new pin
    std::string was; ///< the sha256 known before
    /// The declarations (repins.json) that lead from the old hash to the new one, in order;
    /// empty when undeclared.
    std::vector<std::string> declared;
};

std::vector<PinChange> pin_changes(const KnownPins& known, const manifest::Catalog& after);

/// One declared change of a pin (a set's repins.json): NVIDIA republished a file, and whoever
/// signs the channel says so, permanently, in every later set.
struct Repin {
    std::string path, was, now, date, reason;
};

/// Parses repins.json's text ({"schema": "cudaenv.manifest/1", "kind": "repins", "repins":
/// [{"path", "was", "now", "date", "reason"}, ...]}). Errors: integrity, naming the field.
Result<std::vector<Repin>> parse_repins(std::string_view text, std::string_view origin);

/// Fills each change's `declared` from `repins`: the chain of declarations from its old hash to
/// its new one (entries whose path is the pin's place in the new set).
/// Returns the changes no chain covers.
std::vector<PinChange> undeclared(std::vector<PinChange>& changes,
                                  const std::vector<Repin>& repins);

} // namespace cudaenv::channel
