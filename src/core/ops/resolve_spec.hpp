// SPEC -> Resolution for the commands that download (install, mirror): the manifests, plus the
// index a release is pinned by (fetched and checked against its pin), plus, when allowed,
// NVIDIA's index for a release newer than the manifests (--allow-unpinned).
#pragma once

#include "context.hpp"
#include "core/manifest/model.hpp"
#include "core/resolve/resolve.hpp"

#include <memory>
#include <string>
#include <vector>

namespace cudaenv::cli {

struct ResolvedSpec {
    /// The catalog `res` points into when an index extended the manifests; else null (then
    /// `res` points into the catalog given to resolve_with_indexes).
    std::unique_ptr<manifest::Catalog> extended;
    Resolution res;
};

Result<ResolvedSpec> resolve_with_indexes(Context& ctx,
                                          const manifest::Catalog& catalog,
                                          const std::vector<std::string>& framework_names,
                                          const std::string& spec_text,
                                          const ResolveOptions& options,
                                          bool allow_unpinned,
                                          const std::string& command);

} // namespace cudaenv::cli
