// The project's release keys, built into cudaenv (packaging/keys/ holds the same, one file each):
// the keys of the first root metadata every later one descends from (channel/trust.hpp, which
// also reads a site's own keys and revocations in /etc/cudaenv/keys). docs/channel.md, "Keys".
#pragma once

#include "../error.hpp"
#include "signing.hpp"

#include <vector>

namespace cudaenv::channel {

inline constexpr const char* k_site_keys_dir = "etc/cudaenv/keys";

/// The project's release keys, built in: the first root metadata's (channel/trust.hpp).
std::vector<PublicKey> shipped_keys();

} // namespace cudaenv::channel
