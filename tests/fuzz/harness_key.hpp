// The signing key the channel's fuzz targets (bundle, root) trust and sign payloads with: a fixed
// seed, so their committed seeds stay signed by it.
#pragma once

#include "core/channel/signing.hpp"

#include <cstddef>
#include <cstdint>

namespace cudaenv::fuzz {

inline const cudaenv::channel::SecretKey& harness_key() {
    static const cudaenv::channel::SecretKey k = [] {
        cudaenv::channel::SecretKey s;
        for (std::size_t i = 0; i < s.seed.size(); ++i) {
            s.seed[i] = static_cast<std::uint8_t>(i * 7 + 1);
        }
        return s;
    }();
    return k;
}

} // namespace cudaenv::fuzz
