// Who signed a kernel module, and whether the firmware's enrolled keys name that signer: the
// kernel's signature trailer (what scripts/sign-file appends: the PKCS#7, a `struct
// module_signature`, the magic), the SignerInfo inside the PKCS#7 (issuer and serial, or a subject
// key identifier), and the X.509 certificates in EFI signature lists (MokListRT, db) as efivarfs
// shows them. Everything here reads hostile bytes: every length is checked against what was read,
// and the DER is parsed by libcrypto (sys/dynlib), never by hand.
#pragma once

#include "../error.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::doctor {

inline constexpr std::string_view k_module_sig_magic = "~Module signature appended~\n";
/// The kernel's `struct module_signature`: algo, hash, id_type, signer_len, key_id_len, 3 pad
/// bytes, sig_len (big-endian u32).
inline constexpr std::size_t k_module_sig_info = 12;
/// The most of a module's end the doctor reads: the trailer and a PKCS#7 of a few KiB.
inline constexpr std::size_t k_module_tail = 64u << 10;

/// Decoding a compressed module stops past this much output (nvidia.ko is about 100 MiB).
inline constexpr std::uint64_t k_module_decoded_max = 1ull << 30;

/// The last k_module_tail bytes of a kernel module as the kernel loads it (`real`: a file on this
/// machine, its name saying how it is compressed): a `.ko` as it is; `.ko.xz` decoded by liblzma
/// under the installer's memory limit; `.ko.gz` and `.ko.zst` by libarchive's raw reader when it
/// decodes them itself (never through an external program). Only the tail is kept. The error
/// says why it cannot be read: unreadable, a compression this build cannot decode, a corrupt or
/// oversized stream (module_file.cpp).
Result<std::string> module_tail(const std::filesystem::path& real);

struct ModuleSignature {
    bool present = false;  ///< the module ends with the magic
    unsigned id_type = 0;  ///< 2: PKCS#7 (every kernel since 4.3); 0, 1: PGP, X.509 (older)
    std::string signature; ///< the signature bytes (for PKCS#7: DER SignedData)
};

/// The signature at the end of `tail`, a module's last bytes. No magic: `present` is false. A
/// trailer whose lengths do not fit in what was read is an error (printable, one line).
Result<ModuleSignature> parse_module_signature(std::string_view tail);

/// A key as a signature or a certificate names it.
struct KeyId {
    std::string issuer; ///< the issuer Name, DER (what a SignerInfo and a certificate share)
    std::string serial; ///< the serial number's bytes
    std::string skid;   ///< the subject key identifier's bytes; empty when none is named
    std::string name;   ///< a CN for people: the issuer's (a signature), the subject's (a cert)

    /// "serial 1a:2b:…" or "subject key id 9f:…", what mokutil --list-enrolled shows.
    std::string label() const;
};

/// The first signer of a PKCS#7/CMS SignedData (DER). Loads libcrypto.
Result<KeyId> pkcs7_signer(std::string_view der);
/// A DER X.509 certificate's own key: its issuer and serial, its subject key identifier, its
/// subject's CN. Loads libcrypto.
Result<KeyId> certificate_key(std::string_view der);
/// The certificate `cert` is the key `signer` names (issuer and serial, or subject key id).
bool same_key(const KeyId& signer, const KeyId& cert);

/// The DER X.509 certificates (EFI_CERT_X509_GUID entries) in a run of EFI_SIGNATURE_LIST
/// structures; hashes and other entry types are skipped, and a list whose sizes do not fit ends
/// the walk.
std::vector<std::string> efi_x509_certificates(std::string_view lists);

} // namespace cudaenv::doctor
