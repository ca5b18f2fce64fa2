// Small hand-made manifests for unit tests: a version from text, and a framework release row.
#pragma once

#include "core/manifest/model.hpp"
#include "core/version.hpp"

#include <cstdlib>

namespace cudaenv::test {

/// A version the test writes itself: one that does not parse is the test's bug.
inline Version ver(const char* text) {
    auto v = Version::try_parse(text);
    if (!v) {
        std::abort();
    }
    return *v;
}

/// A framework release row: its series, the tested release, and the CUDA and cuDNN it was
/// built with ("" for none).
inline manifest::FrameworkRelease
framework_row(const char* series, const char* tested, const char* cuda, const char* cudnn) {
    manifest::FrameworkRelease r;
    r.series = ver(series);
    r.tested = ver(tested);
    r.cuda = ver(cuda);
    if (*cudnn) {
        r.cudnn = ver(cudnn);
    }
    return r;
}

} // namespace cudaenv::test
