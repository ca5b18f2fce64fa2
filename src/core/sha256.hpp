// Streaming SHA-256 (OpenSSL EVP): feed bytes as they arrive, read the hex digest at the end.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace cudaenv {

class Sha256 {
  public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    void update(const void* data, std::size_t size);

    void update(std::string_view s) { update(s.data(), s.size()); }

    /// Lowercase hex of the digest; the hasher is reset afterwards.
    std::string hex_digest();

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// SHA-256 of a byte string, as lowercase hex.
std::string sha256_hex(std::string_view data);

} // namespace cudaenv
