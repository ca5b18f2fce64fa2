// Ed25519 keys and signatures for the update channel (docs/channel.md), through OpenSSL's
// libcrypto (loaded on first use, sys/dynlib).
//
// Key files are one line of text, so an administrator can read, diff and copy them:
//   cudaenv-ed25519-public <64 hex digits: the raw public key> [comment]
//   cudaenv-ed25519-secret <64 hex digits: the raw 32-byte seed> [comment]     (mode 0600)
// A key's id is the first 16 hex digits of SHA-256 over its raw public key; signatures name the
// key they were made with by that id.
#pragma once

#include "../error.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace cudaenv::channel {

using PublicKeyBytes = std::array<std::uint8_t, 32>;
using SignatureBytes = std::array<std::uint8_t, 64>;

struct PublicKey {
    PublicKeyBytes raw{};
    std::string comment; ///< free text after the key (who holds it, since when)
    std::string origin;  ///< where it came from ("built in", a file), for messages
    /// 16 lowercase hex digits.
    std::string id() const;
};

struct SecretKey {
    std::array<std::uint8_t, 32> seed{};
    std::string comment;
};

inline constexpr std::string_view k_public_key_tag = "cudaenv-ed25519-public";
inline constexpr std::string_view k_secret_key_tag = "cudaenv-ed25519-secret";

/// Parses a public key file's text; `origin` names it in errors (usage, exit 2: a site's key
/// file is configuration).
Result<PublicKey> parse_public_key(std::string_view text, std::string_view origin);
Result<SecretKey> parse_secret_key(std::string_view text, std::string_view origin);
std::string format_public_key(const PublicKey& key);
std::string format_secret_key(const SecretKey& key);

/// A new key from the system's random source (RAND_bytes). Needs libcrypto (exit 1 without it).
Result<SecretKey> generate_secret_key(std::string comment);
/// The public half of a secret key.
Result<PublicKey> public_key_of(const SecretKey& key);

/// An Ed25519 signature of `message`.
Result<SignatureBytes> sign(const SecretKey& key, std::string_view message);
/// True when `signature` is `key`'s over `message`. Errors only when libcrypto cannot be used.
Result<bool>
verify(const PublicKey& key, std::string_view message, const SignatureBytes& signature);

/// Lowercase hex; `parse_hex` takes exactly out.size() bytes' worth of hex digits (either case).
std::string to_hex(const std::uint8_t* data, std::size_t size);
bool parse_hex(std::string_view hex, std::uint8_t* out, std::size_t size);

} // namespace cudaenv::channel
