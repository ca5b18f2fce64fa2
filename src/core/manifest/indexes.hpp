// NVIDIA's redistrib index files as a source of releases the manifests do not describe in full:
// index-pinned releases (the manifests pin the index's sha256: manifests/indexes.json) and
// unpinned ones (--allow-unpinned). An index trusted without a pin is recorded in the root
// (indexes/trusted.json plus the file itself), so later runs know the release, and a later
// index with a different hash for the same release is refused (docs/reliability.md D15).
#pragma once

#include "../error.hpp"
#include "../store/records.hpp"
#include "model.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace cudaenv::manifest {

/// Adds the release an index describes (the index's text and where it came from) to `cat`.
Status add_index(Catalog& cat,
                 const std::string& product,
                 const std::string& version,
                 const std::string& text,
                 const Artifact& index);

/// `cat` plus the release an index describes.
Result<Catalog> with_index(const Catalog& cat,
                           const std::string& product,
                           const std::string& version,
                           const std::string& text,
                           const Artifact& index);

using store::TrustedIndex; // indexes/trusted.json's entries (store/records.hpp)

/// The indexes this root trusted without a pin, each re-read and checked against its record.
Result<std::vector<TrustedIndex>> load_trusted(const std::filesystem::path& root);

/// `cat` plus every release the root's trusted indexes describe.
Result<Catalog> with_trusted(const Catalog& cat, const std::filesystem::path& root);

/// Records an index trusted without a pin. The same release with another hash is refused
/// (integrity): NVIDIA's index for a release must not change under an installed root.
Status record_trusted(const std::filesystem::path& root,
                      const std::string& product,
                      const std::string& version,
                      const std::string& text);

} // namespace cudaenv::manifest
