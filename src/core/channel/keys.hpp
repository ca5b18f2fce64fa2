// The keys a manifests bundle must be signed with (docs/channel.md): the project's release keys,
// built into cudaenv (packaging/keys/ holds the same, one file each), and a site's own, one file
// each in /etc/cudaenv/keys/*.pub (under CUDAENV_SYSROOT). A bundle verifies when any one of its
// signatures is by any of these keys. Rotation: a new key is shipped beside the old one, bundles
// are signed by both for as long as older cudaenv binaries are in use, then the old one is
// dropped from the next release.
#pragma once

#include "../error.hpp"
#include "signing.hpp"

#include <filesystem>
#include <vector>

namespace cudaenv::channel {

inline constexpr const char* k_site_keys_dir = "etc/cudaenv/keys";

/// The project's release keys, built in.
std::vector<PublicKey> shipped_keys();

/// <sysroot>/etc/cudaenv/keys/*.pub, by name. A file there that is not a key is a usage error
/// (exit 2, the file named): a site's trust is not guessed at. No folder: none.
Result<std::vector<PublicKey>> site_keys(const std::filesystem::path& sysroot);

/// shipped_keys() then site_keys().
Result<std::vector<PublicKey>> trusted_keys(const std::filesystem::path& sysroot);

} // namespace cudaenv::channel
