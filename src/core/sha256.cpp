#include "sha256.hpp"

#include "sys/dynlib.hpp"

#include <stdexcept>

namespace cudaenv {

struct Sha256::Impl {
    EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : m_impl(std::make_unique<Impl>()) {
    m_impl->ctx = sys::crypto().md_ctx_new();
    if (!m_impl->ctx ||
        sys::crypto().digest_init_ex(m_impl->ctx, sys::crypto().sha256(), nullptr) != 1) {
        throw std::runtime_error("OpenSSL could not initialise SHA-256");
    }
}

Sha256::~Sha256() {
    sys::crypto().md_ctx_free(m_impl->ctx);
}

void Sha256::update(const void* data, std::size_t size) {
    sys::crypto().digest_update(m_impl->ctx, data, size);
}

std::string Sha256::hex_digest() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    sys::crypto().digest_final_ex(m_impl->ctx, md, &len);
    sys::crypto().digest_init_ex(m_impl->ctx, sys::crypto().sha256(), nullptr);
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

} // namespace cudaenv
