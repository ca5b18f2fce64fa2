// advisories.json: what is known to be wrong with a driver, a toolkit, a cuBLAS, the container
// toolkit or a Jetson's L4T -- NVIDIA's security bulletins with their CVEs and the first fixed
// version on each line, and correctness bugs fixed by a cuBLAS patch release (docs/advisories.md).
// Generated from data/reference (generate_advisories.cpp); carried by the signed channel like
// every manifest, so a new bulletin reaches hosts with `cudaenv update`, no new binary.
//
// A range says which versions of one product are affected, in the words of OSV: `introduced`
// (the first affected, inclusive; none: every earlier one), `fixed` (the first fixed: affected
// below it) and `last_affected` (inclusive, where NVIDIA says "up to and including" and names no
// fix). A driver range is per branch (R535: `branch` 535), a Jetson one per L4T major (35, 36,
// 38), a toolkit one may be limited to a CUDA major; a cuBLAS range may only apply on GPUs of
// some compute capabilities.
#pragma once

#include "../error.hpp"
#include "../version.hpp"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::manifest {

inline constexpr const char* k_advisories_file = "advisories.json";

enum class AdvisoryProduct { driver, toolkit, cublas, container_toolkit, jetson_l4t };

/// "driver", "toolkit", "cublas", "container-toolkit", "jetson-l4t" (the manifest's words).
std::string_view to_string(AdvisoryProduct p);
std::optional<AdvisoryProduct> advisory_product(std::string_view s);
/// "NVIDIA driver", "CUDA Toolkit", "cuBLAS", "NVIDIA Container Toolkit", "Jetson Linux (L4T)".
std::string_view product_title(AdvisoryProduct p);

/// NVIDIA's severity words (CVSS v3: low < 4, medium < 7, high < 9, critical); `none` where
/// NVIDIA rates nothing (a correctness bug fixed by a patch).
enum class Severity { none, low, medium, high, critical };
std::string_view to_string(Severity s);
std::optional<Severity> severity_of(std::string_view s); ///< case-insensitive

struct AffectedRange {
    AdvisoryProduct product = AdvisoryProduct::driver;
    std::optional<unsigned> branch; ///< driver: 535; jetson-l4t: 36; toolkit: a CUDA major
    std::optional<Version> introduced;
    std::optional<Version> fixed;
    std::optional<Version> last_affected;
    /// driver: where NVIDIA fixed the data-center (Tesla) products in another version than
    /// GeForce and RTX/Quadro/NVS (5614, R570: 570.86.15 against 570.86.16).
    std::optional<Version> fixed_datacenter;
    /// cublas: only on GPUs of these compute capabilities (100 for 10.0); empty: every GPU.
    std::vector<unsigned> compute_capabilities;
    std::string note; ///< "CDI mode only below 1.17.5"; "inferred from ..."

    /// Whether `v` is in the range (numerically: 12.8 and 12.8.0 are one version), for a
    /// data-center product or not. The branch is the caller's to match.
    bool contains(const Version& v, bool datacenter = false) const;
    /// The first fixed version for that product, if NVIDIA names one.
    std::optional<Version> fix_for(bool datacenter) const;
};

struct Cve {
    std::string id; ///< "CVE-2024-0131"
    std::optional<double> cvss;
    Severity severity = Severity::none;
    std::string summary; ///< NVIDIA's description
};

struct Advisory {
    std::string id;   ///< "NVIDIA-5614" (NVIDIA's bulletin number), "CUBLAS-13.4.1"
    std::string kind; ///< "security" or "correctness"
    std::string title;
    std::string url;
    std::string published; ///< YYYY-MM-DD
    std::string updated;   ///< YYYY-MM-DD; empty: never
    Severity severity = Severity::none;
    std::optional<double> cvss; ///< the highest of its CVEs'
    std::vector<Cve> cves;
    std::vector<AffectedRange> affects;
    /// Products NVIDIA names that cudaenv does not look for (GPU Operator, vGPU, IGX, nvJPEG
    /// standalone), with their versions, as text.
    std::vector<std::string> other_products;
    std::string source;
    std::string partial; ///< why the data is incomplete; empty: complete

    bool critical() const { return severity == Severity::critical; }
};

struct Advisories {
    std::string as_of; ///< the day the data was gathered
    std::vector<std::string> sources;
    std::vector<Advisory> advisories; ///< by id

    const Advisory* find(std::string_view id) const; ///< case-insensitive
};

/// Whether `id` has an advisory id's shape (letters, digits, '.', '-'; 3 to 64 characters).
/// Inline: the config parser the shim links checks `acknowledge` lines with it.
constexpr bool is_advisory_id(std::string_view id) {
    if (id.size() < 3 || id.size() > 64) {
        return false;
    }
    for (char c : id) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '-';
        if (!ok) {
            return false;
        }
    }
    return true;
}

/// `dir`/advisories.json; empty Advisories when the file is absent (a manifests set made before
/// advisories existed).
Result<Advisories> load_advisories(const std::filesystem::path& dir);
Result<Advisories> parse_advisories(const nlohmann::json& doc, std::string_view origin);
nlohmann::ordered_json advisories_to_json(const Advisories& a);

} // namespace cudaenv::manifest
