// Streaming digests (OpenSSL EVP): feed bytes as they arrive, read the hex digest at the end.
// SHA-256 is what cudaenv trusts; MD5 only checks what a makeself header declares of its payload.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cudaenv {

class Digest {
  public:
    enum class Algorithm { sha256, md5 };

    explicit Digest(Algorithm algorithm);
    ~Digest();
    Digest(const Digest&) = delete;
    Digest& operator=(const Digest&) = delete;

    void update(const void* data, std::size_t size);

    void update(std::string_view s) { update(s.data(), s.size()); }

    /// Lowercase hex of the digest; the hasher is reset afterwards.
    std::string hex_digest();

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

class Sha256 : public Digest {
  public:
    Sha256() : Digest(Algorithm::sha256) {}
};

class Md5 : public Digest {
  public:
    Md5() : Digest(Algorithm::md5) {}
};

/// SHA-256 of a byte string, as lowercase hex.
std::string sha256_hex(std::string_view data);

/// True for 64 lowercase hex digits: a SHA-256 as cudaenv writes and accepts one.
inline bool is_sha256_hex(std::string_view s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

/// The POSIX `cksum` CRC of a stream (CRC-32, polynomial 0x04C11DB7, MSB first, the length
/// appended): what makeself writes as CRCsum. Feed bytes with update(), read it with value().
class Cksum {
  public:
    void update(const void* data, std::size_t size);

    std::uint32_t value() const;

  private:
    std::uint32_t m_crc = 0;
    std::uint64_t m_length = 0;
};

} // namespace cudaenv
