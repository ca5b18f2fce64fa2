// The platform whose versions a test's root sees by default: the host's own (store::HostPlatforms
// with nothing forced): linux-x86_64 on x86_64, linux-sbsa when the unit tests run as the arm64
// build (.ci/arm64, under qemu-user). Tests that lay versions out by hand put them there.
#pragma once

#include "core/store/root.hpp"
#include "core/sys/platform.hpp"

#include <string>

namespace cudaenv::test {

inline std::string native_platform() {
    return sys::default_platform(store::HostPlatforms::native_host());
}

} // namespace cudaenv::test
