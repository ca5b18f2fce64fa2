#include "module_signature.hpp"

#include "../sys/dynlib.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

namespace cudaenv::doctor {

namespace {

Error unreadable(const std::string& why) {
    return Error(ErrorCode::failure, printable(why));
}

std::uint32_t be32(const unsigned char* p) {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
}

std::uint32_t le32(std::string_view s, std::size_t at) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data() + at);
    return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
           (std::uint32_t{p[3]} << 24);
}

std::string hex_colons(const std::string& bytes) {
    static constexpr char k_digits[] = "0123456789abcdef";
    std::string out;
    for (char ch : bytes) {
        auto c = static_cast<unsigned char>(ch);
        if (!out.empty()) {
            out += ':';
        }
        out += k_digits[c >> 4];
        out += k_digits[c & 15];
    }
    return out;
}

std::string asn1_bytes(const ASN1_STRING* s) {
    const auto& c = sys::crypto();
    int n = s ? c.asn1_length(s) : 0;
    if (n <= 0) {
        return {};
    }
    return {reinterpret_cast<const char*>(c.asn1_data(s)), static_cast<std::size_t>(n)};
}

std::string name_der(const X509_NAME* name) {
    const auto& c = sys::crypto();
    int n = name ? c.i2d_name(name, nullptr) : 0;
    if (n <= 0) {
        return {};
    }
    std::string out(static_cast<std::size_t>(n), '\0');
    auto* q = reinterpret_cast<unsigned char*>(out.data());
    return c.i2d_name(name, &q) == n ? out : std::string();
}

std::string common_name(const X509_NAME* name) {
    char buf[256] = {};
    int n = name ? sys::crypto().name_text_by_nid(name, NID_commonName, buf, sizeof buf) : -1;
    if (n <= 0) {
        return {};
    }
    return printable(
        std::string_view(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf - 1)));
}

const auto* bytes_of(std::string_view der) {
    return reinterpret_cast<const unsigned char*>(der.data());
}

/// libcrypto's parsers take a long; a DER bigger than that is not a key.
cudaenv::Status fits(std::string_view der) {
    if (der.empty() || der.size() > (1u << 24)) {
        return unreadable("empty or oversized DER (" + std::to_string(der.size()) + " bytes)");
    }
    return sys::load(sys::k_crypto);
}

} // namespace

Result<ModuleSignature> parse_module_signature(std::string_view tail) {
    ModuleSignature out;
    if (!tail.ends_with(k_module_sig_magic)) {
        return out;
    }
    out.present = true;
    std::size_t before = tail.size() - k_module_sig_magic.size();
    if (before < k_module_sig_info) {
        return unreadable("the module signature trailer is cut short");
    }
    before -= k_module_sig_info;
    const auto* info = reinterpret_cast<const unsigned char*>(tail.data() + before);
    out.id_type = info[2];
    std::uint64_t sig_len = be32(info + 8);
    std::uint64_t need = sig_len + info[3] + info[4]; // signer and key id names (pre-PKCS#7)
    if (sig_len == 0 || need > before) {
        return unreadable("the module signature trailer declares a " + std::to_string(sig_len) +
                          "-byte signature, more than the " + std::to_string(before) +
                          " bytes read before it");
    }
    out.signature = std::string(tail.substr(before - sig_len, sig_len));
    return out;
}

std::string KeyId::label() const {
    return serial.empty() ? "subject key id " + hex_colons(skid) : "serial " + hex_colons(serial);
}

Result<KeyId> pkcs7_signer(std::string_view der) {
    CUDAENV_TRY(fits(der));
    const auto& c = sys::crypto();
    const unsigned char* p = bytes_of(der);
    std::unique_ptr<CMS_ContentInfo, decltype(c.cms_free)> cms(
        c.d2i_cms(nullptr, &p, static_cast<long>(der.size())), c.cms_free);
    if (!cms) {
        return unreadable("the module's signature is not a PKCS#7 SignedData");
    }
    auto* infos = reinterpret_cast<OPENSSL_STACK*>(c.cms_signer_infos(cms.get()));
    if (!infos || c.stack_num(infos) < 1) {
        return unreadable("the module's PKCS#7 names no signer");
    }
    auto* si = static_cast<CMS_SignerInfo*>(c.stack_value(infos, 0));
    ASN1_OCTET_STRING* keyid = nullptr;
    X509_NAME* issuer = nullptr;
    ASN1_INTEGER* serial = nullptr;
    if (!si || c.cms_signer_id(si, &keyid, &issuer, &serial) != 1) {
        return unreadable("the module's PKCS#7 signer has no identifier");
    }
    KeyId k{name_der(issuer), asn1_bytes(serial), asn1_bytes(keyid), common_name(issuer)};
    if (k.skid.empty() && (k.serial.empty() || k.issuer.empty())) {
        return unreadable("the module's PKCS#7 signer has no identifier");
    }
    return k;
}

Result<KeyId> certificate_key(std::string_view der) {
    CUDAENV_TRY(fits(der));
    const auto& c = sys::crypto();
    const unsigned char* p = bytes_of(der);
    std::unique_ptr<X509, decltype(c.x509_free)> cert(
        c.d2i_x509(nullptr, &p, static_cast<long>(der.size())), c.x509_free);
    if (!cert) {
        return unreadable("not an X.509 certificate");
    }
    return KeyId{name_der(c.x509_issuer(cert.get())),
                 asn1_bytes(c.x509_serial(cert.get())),
                 asn1_bytes(c.x509_skid(cert.get())),
                 common_name(c.x509_subject(cert.get()))};
}

bool same_key(const KeyId& signer, const KeyId& cert) {
    bool by_serial = !signer.serial.empty() && !signer.issuer.empty() &&
                     signer.serial == cert.serial && signer.issuer == cert.issuer;
    return by_serial || (!signer.skid.empty() && signer.skid == cert.skid);
}

std::vector<std::string> efi_x509_certificates(std::string_view lists) {
    // EFI_SIGNATURE_LIST: SignatureType GUID, then u32 SignatureListSize, SignatureHeaderSize,
    // SignatureSize (little-endian); each EFI_SIGNATURE_DATA is an owner GUID and the data.
    static constexpr unsigned char k_x509_guid[16] = {0xa1,
                                                      0x59,
                                                      0xc0,
                                                      0xa5,
                                                      0xe4,
                                                      0x94,
                                                      0xa7,
                                                      0x4a,
                                                      0x87,
                                                      0xb5,
                                                      0xab,
                                                      0x15,
                                                      0x5c,
                                                      0x2b,
                                                      0xf0,
                                                      0x72};
    constexpr std::size_t k_header = 28;
    constexpr std::size_t k_owner = 16;
    constexpr std::size_t k_most = 1024;
    std::vector<std::string> out;
    std::size_t at = 0;
    while (lists.size() - at >= k_header && out.size() < k_most) {
        std::size_t list_size = le32(lists, at + 16);
        std::size_t header_size = le32(lists, at + 20);
        std::size_t sig_size = le32(lists, at + 24);
        if (list_size < k_header || list_size > lists.size() - at ||
            header_size > list_size - k_header) {
            break;
        }
        bool x509 = std::memcmp(lists.data() + at, k_x509_guid, sizeof k_x509_guid) == 0;
        std::size_t end = at + list_size;
        for (std::size_t pos = at + k_header + header_size;
             x509 && sig_size > k_owner && end - pos >= sig_size && out.size() < k_most;
             pos += sig_size) {
            out.emplace_back(lists.substr(pos + k_owner, sig_size - k_owner));
        }
        at = end;
    }
    return out;
}

} // namespace cudaenv::doctor
