// NVIDIA's PSIRT bulletins as NVIDIA publishes them in github.com/NVIDIA/product-security
// (`<year>/<id>/<id>.json`, CSAF 2.0), turned into the reference's advisories.json format
// (data/reference/advisories.json): a driver bulletin's CVEs with the bare-metal Linux branches
// they affect and, per branch and product, the first fixed driver ("All driver versions prior to
// X"); a CUDA Toolkit, Container Toolkit or Jetson bulletin's CVEs and its affected/fixed rows.
// What a bulletin is about comes from its title, as the reference sorted them; anything else
// (DGX, vGPU-only, NeMo, ...) is not cudaenv's and is left out. docs/refresh.md.
#pragma once

#include "../error.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace cudaenv::refresh {

struct Bulletin {
    /// The advisories.json list it belongs in: "driver_bulletins", "cuda_toolkit_bulletins",
    /// "container_toolkit_bulletins", "jetson_bulletins"; empty: a product cudaenv does not check.
    std::string list;
    std::string id;               ///< "5614"
    std::string title;            ///< NVIDIA's
    nlohmann::ordered_json entry; ///< the advisories.json entry (empty when `list` is)
};

/// Converts a CSAF bulletin's text. `where` names it in errors ("2025/5614/5614.json"); `source`
/// is written as the entry's source. Errors: integrity, one line naming the file and what is
/// missing or not read.
Result<Bulletin>
bulletin_from_csaf(std::string_view text, std::string_view where, const std::string& source);

} // namespace cudaenv::refresh
