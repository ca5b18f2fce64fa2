// Small hand-made manifests for unit tests: a version from text, a framework release row, and the
// frameworks several tests' catalogs share.
#pragma once

#include "core/manifest/model.hpp"
#include "core/version.hpp"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

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

/// A framework: its name, the aliases a SPEC may use for it, and its release rows.
inline manifest::Framework framework(const char* name,
                                     std::vector<std::string> aliases,
                                     std::vector<manifest::FrameworkRelease> releases) {
    manifest::Framework f;
    f.name = name;
    f.aliases = std::move(aliases);
    f.releases = std::move(releases);
    return f;
}

/// TensorFlow (alias tf) with one release row: 2.13.0, built with CUDA 11.8 and cuDNN 8.6.
inline manifest::Framework tensorflow_2_13() {
    return framework("tensorflow", {"tf"}, {framework_row("2.13", "2.13.0", "11.8", "8.6")});
}

} // namespace cudaenv::test
