#include "signing.hpp"

#include "../sha256.hpp"
#include "../sys/dynlib.hpp"

#include <memory>
#include <vector>

namespace cudaenv::channel {

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/// "<tag> <hex> [comment]" on one line (a trailing newline allowed).
Result<std::pair<std::string, std::string>>
split_key_line(std::string_view text, std::string_view tag, std::string_view origin) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
        text.remove_suffix(1);
    }
    auto bad = [&](const std::string& why) {
        return Error(ErrorCode::usage, "key file '" + printable(origin) + "': " + why)
            .with_hint("a key file is one line: " + std::string(tag) +
                       " <64 hex digits> [comment] (cudaenv __bundle keygen makes them)");
    };
    if (text.find('\n') != std::string_view::npos) {
        return bad("more than one line");
    }
    if (text.substr(0, tag.size()) != tag || text.size() < tag.size() + 1 ||
        text[tag.size()] != ' ') {
        return bad("does not start with '" + std::string(tag) + " '");
    }
    text.remove_prefix(tag.size() + 1);
    auto space = text.find(' ');
    std::string hex(text.substr(0, space));
    std::string comment =
        space == std::string_view::npos ? "" : std::string(text.substr(space + 1));
    if (hex.size() != 64) {
        return bad("the key is " + std::to_string(hex.size()) + " characters, not 64 hex digits");
    }
    return std::pair{hex, comment};
}

Status need_crypto() {
    return sys::load(sys::k_crypto);
}

struct PkeyFree {
    void operator()(EVP_PKEY* p) const { sys::crypto().pkey_free(p); }
};

struct MdCtxFree {
    void operator()(EVP_MD_CTX* p) const { sys::crypto().md_ctx_free(p); }
};

using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

Error crypto_error(const std::string& what) {
    return Error(ErrorCode::failure, "libcrypto could not " + what + " (Ed25519)");
}

} // namespace

std::string to_hex(const std::uint8_t* data, std::size_t size) {
    static constexpr char k_digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(size * 2);
    for (std::size_t i = 0; i < size; ++i) {
        out += k_digits[data[i] >> 4];
        out += k_digits[data[i] & 15];
    }
    return out;
}

bool parse_hex(std::string_view hex, std::uint8_t* out, std::size_t size) {
    if (hex.size() != size * 2) {
        return false;
    }
    for (std::size_t i = 0; i < size; ++i) {
        int hi = hex_value(hex[2 * i]);
        int lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return false;
        }
        out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    return true;
}

std::string PublicKey::id() const {
    // SHA-256 without libcrypto would need a second implementation; ids are only computed
    // where keys are used, after libcrypto is loaded.
    if (!sys::load(sys::k_crypto)) {
        return to_hex(raw.data(), 8);
    }
    Sha256 h;
    h.update(raw.data(), raw.size());
    return h.hex_digest().substr(0, 16);
}

Result<PublicKey> parse_public_key(std::string_view text, std::string_view origin) {
    auto [hex, comment] = CUDAENV_TRY(split_key_line(text, k_public_key_tag, origin));
    PublicKey k;
    if (!parse_hex(hex, k.raw.data(), k.raw.size())) {
        return Error(ErrorCode::usage,
                     "key file '" + printable(origin) + "': the key is not 64 hex digits");
    }
    // The encodings of the points of small order (libsodium's list): with such a "key" a
    // signature can verify without any secret, so none may be trusted.
    static constexpr const char* k_small_order[] = {
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "0000000000000000000000000000000000000000000000000000000000000080",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    };
    std::string lower = to_hex(k.raw.data(), k.raw.size());
    for (const char* weak : k_small_order) {
        if (lower == weak) {
            return Error(ErrorCode::usage,
                         "key file '" + printable(origin) +
                             "': not a usable key (a point of small order, "
                             "which anyone can sign for)");
        }
    }
    k.comment = comment;
    k.origin = std::string(origin);
    return k;
}

Result<SecretKey> parse_secret_key(std::string_view text, std::string_view origin) {
    auto [hex, comment] = CUDAENV_TRY(split_key_line(text, k_secret_key_tag, origin));
    SecretKey k;
    if (!parse_hex(hex, k.seed.data(), k.seed.size())) {
        return Error(ErrorCode::usage,
                     "key file '" + printable(origin) + "': the key is not 64 hex digits");
    }
    k.comment = comment;
    return k;
}

std::string format_public_key(const PublicKey& key) {
    std::string s = std::string(k_public_key_tag) + " " + to_hex(key.raw.data(), key.raw.size());
    if (!key.comment.empty()) {
        s += " " + key.comment;
    }
    return s + "\n";
}

std::string format_secret_key(const SecretKey& key) {
    std::string s = std::string(k_secret_key_tag) + " " + to_hex(key.seed.data(), key.seed.size());
    if (!key.comment.empty()) {
        s += " " + key.comment;
    }
    return s + "\n";
}

Result<SecretKey> generate_secret_key(std::string comment) {
    CUDAENV_TRY(need_crypto());
    SecretKey k;
    if (sys::crypto().rand_bytes(k.seed.data(), static_cast<int>(k.seed.size())) != 1) {
        return crypto_error("draw random bytes");
    }
    k.comment = std::move(comment);
    return k;
}

Result<PublicKey> public_key_of(const SecretKey& key) {
    CUDAENV_TRY(need_crypto());
    Pkey pk(sys::crypto().pkey_new_raw_private_key(
        EVP_PKEY_ED25519, nullptr, key.seed.data(), key.seed.size()));
    if (!pk) {
        return crypto_error("load the secret key");
    }
    PublicKey pub;
    std::size_t len = pub.raw.size();
    if (sys::crypto().pkey_get_raw_public_key(pk.get(), pub.raw.data(), &len) != 1 ||
        len != pub.raw.size()) {
        return crypto_error("derive the public key");
    }
    pub.comment = key.comment;
    return pub;
}

Result<SignatureBytes> sign(const SecretKey& key, std::string_view message) {
    CUDAENV_TRY(need_crypto());
    Pkey pk(sys::crypto().pkey_new_raw_private_key(
        EVP_PKEY_ED25519, nullptr, key.seed.data(), key.seed.size()));
    MdCtx ctx(sys::crypto().md_ctx_new());
    if (!pk || !ctx ||
        sys::crypto().digest_sign_init(ctx.get(), nullptr, nullptr, nullptr, pk.get()) != 1) {
        return crypto_error("start a signature");
    }
    SignatureBytes sig{};
    std::size_t len = sig.size();
    if (sys::crypto().digest_sign(ctx.get(),
                                  sig.data(),
                                  &len,
                                  reinterpret_cast<const unsigned char*>(message.data()),
                                  message.size()) != 1 ||
        len != sig.size()) {
        return crypto_error("sign");
    }
    return sig;
}

Result<bool>
verify(const PublicKey& key, std::string_view message, const SignatureBytes& signature) {
    CUDAENV_TRY(need_crypto());
    Pkey pk(sys::crypto().pkey_new_raw_public_key(
        EVP_PKEY_ED25519, nullptr, key.raw.data(), key.raw.size()));
    if (!pk) {
        return false; // not a point on the curve: no signature can be its
    }
    MdCtx ctx(sys::crypto().md_ctx_new());
    if (!ctx ||
        sys::crypto().digest_verify_init(ctx.get(), nullptr, nullptr, nullptr, pk.get()) != 1) {
        return crypto_error("start a verification");
    }
    int ok = sys::crypto().digest_verify(ctx.get(),
                                         signature.data(),
                                         signature.size(),
                                         reinterpret_cast<const unsigned char*>(message.data()),
                                         message.size());
    return ok == 1;
}

} // namespace cudaenv::channel
