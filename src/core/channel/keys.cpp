#include "keys.hpp"

namespace cudaenv::channel {

namespace {

/// packaging/keys/*.pub, as text (a unit test keeps the two the same).
constexpr const char* k_shipped[] = {
    "cudaenv-ed25519-public ff7bb0950387d5020ad2087c8a260b2ec57e81bdbb0d6a7300c6c685c6a31d88 "
    "cudaenv release key 2026",
};

} // namespace

std::vector<PublicKey> shipped_keys() {
    std::vector<PublicKey> out;
    for (const char* text : k_shipped) {
        auto k = parse_public_key(text, "built in");
        if (k) { // a malformed built-in key is a build defect the unit test catches
            out.push_back(std::move(*k));
        }
    }
    return out;
}

} // namespace cudaenv::channel
