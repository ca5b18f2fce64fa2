// The availability query of `cudaenv list --available`: what the manifests offer (CUDA by how
// it is installed, cuDNN with the CUDAs it is built for, every framework row), under a version
// prefix, each marked installed or not in this root. The front end lays it out.
#pragma once

#include "core/manifest/model.hpp"
#include "core/ops/session.hpp"
#include "core/version.hpp"

#include <string>
#include <vector>

namespace cudaenv::ops {

struct AvailableQuery {
    std::string what;   ///< "", "cuda", "cudnn" or a framework name
    std::string filter; ///< a version prefix ("12", "2.1"); empty: all
};

struct AvailableCuda {
    /// announced: released (or previewed) by NVIDIA, its index not known: not installable
    enum class Source { redist, runfile, index, announced };
    Version version;
    Source source = Source::redist;
    bool installable = false;
    bool installed = false;
    std::string release_date;                              ///< not for Source::index
    const manifest::PinnedIndex* index = nullptr;          ///< Source::index: the pinned index
    const manifest::AnnouncedRelease* announced = nullptr; ///< Source::announced
};

struct AvailableCudnn {
    Version version;
    unsigned major = 0;
    std::vector<std::string> cuda; ///< the CUDAs its builds are for ("11.x", "12.x")
    bool tarball = false;          ///< the old single-tarball layout
    bool installable = false;
    const manifest::PinnedIndex* index = nullptr; ///< known by its pinned index alone
};

struct AvailableRow {
    const manifest::FrameworkRelease* release = nullptr;
    bool installed = false;    ///< its CUDA (and for TensorFlow its cuDNN) is installed
    bool runfile_only = false; ///< its CUDA comes only as a runfile
};

struct AvailableFramework {
    const manifest::Framework* framework = nullptr;
    std::vector<AvailableRow> rows;
};

/// What was asked for is listed (an empty section stays listed); newest first throughout.
struct Availability {
    bool has_cuda = false;
    bool has_cudnn = false;
    bool has_frameworks = false;
    /// the manifests' releases, then index-known ones, then announced ones
    std::vector<AvailableCuda> cuda;
    std::vector<AvailableCudnn> cudnn; ///< likewise
    std::vector<AvailableFramework> frameworks;
};

/// Usage errors: a filter that is not a version prefix, an unknown kind. The result points
/// into the session's catalog.
Result<Availability> available(Session& session, const AvailableQuery& query);

} // namespace cudaenv::ops
