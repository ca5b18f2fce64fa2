// What the doctor reads to judge a kernel module under Secure Boot (core/doctor/module_signature):
// the first input byte picks what the rest is: even, a module's end (the signature trailer, the
// PKCS#7 in it, its signer read by libcrypto); odd, efivarfs's MokListRT or db (EFI signature
// lists, each X.509 entry read by libcrypto). Properties: no read outside the input; a signature
// is the bytes before the trailer; a certificate is a slice of the input; errors are printable.
#include "core/doctor/module_signature.hpp"

#include "fuzz.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace cudaenv;

namespace {

void module_end(std::string_view bytes) {
    auto sig = doctor::parse_module_signature(bytes);
    fuzz::check(sig, "module signature");
    if (!sig || !sig->present) {
        return;
    }
    std::size_t trailer = doctor::k_module_sig_info + doctor::k_module_sig_magic.size();
    fuzz::require(!sig->signature.empty() && sig->signature.size() + trailer <= bytes.size(),
                  "a signature longer than the input");
    std::string_view before = bytes.substr(0, bytes.size() - trailer);
    fuzz::require(before.ends_with(sig->signature), "a signature that is not before the trailer");
    auto signer = doctor::pkcs7_signer(sig->signature);
    fuzz::check(signer, "signer");
    if (signer) {
        fuzz::require(!signer->skid.empty() || !signer->serial.empty(), "a signer without a key");
        (void)signer->label();
    }
}

void signature_lists(std::string_view bytes) {
    for (const auto& der : doctor::efi_x509_certificates(bytes)) {
        fuzz::require(bytes.find(der) != std::string_view::npos, "a certificate not in the input");
        auto key = doctor::certificate_key(der);
        fuzz::check(key, "certificate");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    if ((data[0] & 1u) == 0) {
        module_end(rest);
    } else {
        signature_lists(rest);
    }
    return 0;
}
