#include "sha256.hpp"

#include "sys/dynlib.hpp"

#include <array>
#include <cstdint>
#include <stdexcept>

namespace cudaenv {

struct Digest::Impl {
    EVP_MD_CTX* ctx = nullptr;
    const EVP_MD* md = nullptr;
};

Digest::Digest(Algorithm algorithm) : m_impl(std::make_unique<Impl>()) {
    m_impl->md = algorithm == Algorithm::md5 ? sys::crypto().md5() : sys::crypto().sha256();
    m_impl->ctx = sys::crypto().md_ctx_new();
    if (!m_impl->ctx || sys::crypto().digest_init_ex(m_impl->ctx, m_impl->md, nullptr) != 1) {
        throw std::runtime_error("OpenSSL could not initialise a digest");
    }
}

Digest::~Digest() {
    sys::crypto().md_ctx_free(m_impl->ctx);
}

void Digest::update(const void* data, std::size_t size) {
    sys::crypto().digest_update(m_impl->ctx, data, size);
}

std::string Digest::hex_digest() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    sys::crypto().digest_final_ex(m_impl->ctx, md, &len);
    sys::crypto().digest_init_ex(m_impl->ctx, m_impl->md, nullptr);
    static constexpr char k_hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(len * 2);
    for (unsigned int i = 0; i < len; ++i) {
        out += k_hex[md[i] >> 4];
        out += k_hex[md[i] & 0xf];
    }
    return out;
}

std::string sha256_hex(std::string_view data) {
    Sha256 h;
    h.update(data);
    return h.hex_digest();
}

namespace {

/// CRC-32/POSIX (MSB first), eight bytes a step: table k gives a byte's contribution k bytes
/// before the end of the step (slicing-by-8; made once).
using CrcTables = std::array<std::array<std::uint32_t, 256>, 8>;

const CrcTables& cksum_tables() {
    static const CrcTables tables = [] {
        CrcTables t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i << 24;
            for (int k = 0; k < 8; ++k) {
                c = (c & 0x80000000u) ? (c << 1) ^ 0x04C11DB7u : c << 1;
            }
            t[0][i] = c;
        }
        for (std::size_t k = 1; k < 8; ++k) {
            for (std::size_t i = 0; i < 256; ++i) {
                t[k][i] = (t[k - 1][i] << 8) ^ t[0][t[k - 1][i] >> 24];
            }
        }
        return t;
    }();
    return tables;
}

std::uint32_t crc_byte(std::uint32_t crc, std::uint8_t b) {
    return (crc << 8) ^ cksum_tables()[0][((crc >> 24) ^ b) & 0xffu];
}

} // namespace

void Cksum::update(const void* data, std::size_t size) {
    const auto& t = cksum_tables();
    const auto* p = static_cast<const std::uint8_t*>(data);
    std::uint32_t crc = m_crc;
    m_length += size;
    for (; size >= 8; p += 8, size -= 8) {
        crc ^= std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 |
               std::uint32_t{p[3]};
        crc = t[7][crc >> 24] ^ t[6][(crc >> 16) & 0xffu] ^ t[5][(crc >> 8) & 0xffu] ^
              t[4][crc & 0xffu] ^ t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    }
    for (; size > 0; ++p, --size) {
        crc = crc_byte(crc, *p);
    }
    m_crc = crc;
}

std::uint32_t Cksum::value() const {
    std::uint32_t crc = m_crc;
    for (std::uint64_t n = m_length; n != 0; n >>= 8) {
        crc = crc_byte(crc, static_cast<std::uint8_t>(n & 0xffu));
    }
    return ~crc;
}

} // namespace cudaenv
