// Loading libcurl and libarchive on first use (dlopen), so that the commands that neither download
// nor extract (version, which, global, the shims) do not pay for loading their dependency trees at
// every start: libcurl's alone (gnutls, p11-kit, krb5, ldap, ...) costs about 20 ms here.
#pragma once

#define CURL_DISABLE_TYPECHECK 1
#include "../error.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <openssl/cms.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <lzma.h>
#include <zstd.h>
#include <zstd_errors.h>

namespace cudaenv::sys {

/// k_archive loads liblzma and libzstd too: xz and zstd are decoded by cudaenv (with memory
/// limits), tar by libarchive. (libarchive13 itself links both, so they cost no extra load.)
enum Library : unsigned { k_curl = 1, k_archive = 2, k_crypto = 4 };

/// Loads these libraries (each once per process, thread-safe) and says why one cannot be: not
/// there, not a library, or lacking a function (ErrorCode::failure, with a hint). Called on the
/// main thread before any worker uses them; the accessors below then never fail.
Status load(unsigned libraries);

struct CurlApi {
    decltype(&::curl_global_init) global_init;
    decltype(&::curl_easy_init) easy_init;
    decltype(&::curl_easy_cleanup) easy_cleanup;
    decltype(&::curl_easy_setopt) easy_setopt;
    decltype(&::curl_easy_perform) easy_perform;
    decltype(&::curl_easy_getinfo) easy_getinfo;
    decltype(&::curl_easy_strerror) easy_strerror;
    decltype(&::curl_slist_free_all) slist_free_all;
    decltype(&::curl_version_info) version_info;
};

struct ArchiveApi {
    decltype(&::archive_read_new) read_new;
    decltype(&::archive_read_free) read_free;
    decltype(&::archive_read_support_format_tar) read_support_format_tar;
    decltype(&::archive_read_support_filter_xz) read_support_filter_xz;
    decltype(&::archive_read_support_filter_gzip) read_support_filter_gzip;
    decltype(&::archive_read_support_filter_zstd) read_support_filter_zstd;
    decltype(&::archive_read_support_format_raw) read_support_format_raw;
    decltype(&::archive_read_open_filename) read_open_filename;
    decltype(&::archive_read_open) read_open;
    decltype(&::archive_read_next_header) read_next_header;
    decltype(&::archive_read_data) read_data;
    decltype(&::archive_read_data_block) read_data_block;
    decltype(&::archive_error_string) error_string;
    decltype(&::archive_filter_code) filter_code;
    decltype(&::archive_entry_pathname) entry_pathname;
    decltype(&::archive_entry_hardlink) entry_hardlink;
    decltype(&::archive_entry_filetype) entry_filetype;
    decltype(&::archive_entry_perm) entry_perm;
    decltype(&::archive_entry_symlink) entry_symlink;
    decltype(&::archive_entry_size) entry_size;
    decltype(&::archive_entry_size_is_set) entry_size_is_set;
    decltype(&::archive_entry_sparse_count) entry_sparse_count;
};

struct LzmaApi {
    decltype(&::lzma_stream_decoder) stream_decoder;
    decltype(&::lzma_code) code;
    decltype(&::lzma_end) end;
    decltype(&::lzma_memusage) memusage;
};

/// libzstd: a fleet mirror's recompressed archives (mirror/recompressed.hpp), decoded at
/// install and encoded by `mirror --recompress zstd`.
struct ZstdApi {
    decltype(&::ZSTD_createDCtx) create_dctx;
    decltype(&::ZSTD_freeDCtx) free_dctx;
    decltype(&::ZSTD_DCtx_setParameter) dctx_set_parameter;
    decltype(&::ZSTD_decompressStream) decompress_stream;
    decltype(&::ZSTD_createCCtx) create_cctx;
    decltype(&::ZSTD_freeCCtx) free_cctx;
    decltype(&::ZSTD_CCtx_setParameter) cctx_set_parameter;
    decltype(&::ZSTD_compressStream2) compress_stream2;
    decltype(&::ZSTD_isError) is_error;
    decltype(&::ZSTD_getErrorName) error_name;
    decltype(&::ZSTD_getErrorCode) error_code;
    decltype(&::ZSTD_CStreamOutSize) cstream_out_size;
};

struct CryptoApi {
    decltype(&::EVP_MD_CTX_new) md_ctx_new;
    decltype(&::EVP_MD_CTX_free) md_ctx_free;
    decltype(&::EVP_DigestInit_ex) digest_init_ex;
    decltype(&::EVP_DigestUpdate) digest_update;
    decltype(&::EVP_DigestFinal_ex) digest_final_ex;
    decltype(&::EVP_sha256) sha256;
    decltype(&::EVP_md5) md5; ///< only to check the MD5 a makeself header declares
    // Ed25519 (core/channel/signing): the update channel's signatures
    decltype(&::EVP_PKEY_new_raw_public_key) pkey_new_raw_public_key;
    decltype(&::EVP_PKEY_new_raw_private_key) pkey_new_raw_private_key;
    decltype(&::EVP_PKEY_get_raw_public_key) pkey_get_raw_public_key;
    decltype(&::EVP_PKEY_free) pkey_free;
    decltype(&::EVP_DigestSignInit) digest_sign_init;
    decltype(&::EVP_DigestSign) digest_sign;
    decltype(&::EVP_DigestVerifyInit) digest_verify_init;
    decltype(&::EVP_DigestVerify) digest_verify;
    decltype(&::RAND_bytes) rand_bytes;
    // X.509 and CMS (core/doctor/module_signature): who signed a kernel module, and the keys the
    // firmware enrolled
    decltype(&::d2i_CMS_ContentInfo) d2i_cms;
    decltype(&::CMS_ContentInfo_free) cms_free;
    decltype(&::CMS_get0_SignerInfos) cms_signer_infos;
    decltype(&::CMS_SignerInfo_get0_signer_id) cms_signer_id;
    decltype(&::OPENSSL_sk_num) stack_num;
    decltype(&::OPENSSL_sk_value) stack_value;
    decltype(&::d2i_X509) d2i_x509;
    decltype(&::X509_free) x509_free;
    decltype(&::X509_get_issuer_name) x509_issuer;
    decltype(&::X509_get_subject_name) x509_subject;
    decltype(&::X509_get0_serialNumber) x509_serial;
    decltype(&::X509_get0_subject_key_id) x509_skid;
    decltype(&::i2d_X509_NAME) i2d_name;
    decltype(&::X509_NAME_get_text_by_NID) name_text_by_nid;
    decltype(&::ASN1_STRING_length) asn1_length;
    decltype(&::ASN1_STRING_get0_data) asn1_data;
};

/// OpenSSL's libcrypto (libcrypto.so.3), likewise: hashing, the channel's signatures, and the
/// doctor's reading of a kernel module's signer.
const CryptoApi& crypto();

/// libcurl (libcurl.so.4). Precondition: load(k_curl) succeeded (else std::logic_error: a bug).
const CurlApi& curl();

/// libarchive (libarchive.so.13), likewise.
const ArchiveApi& archive();

/// liblzma (liblzma.so.5), loaded with libarchive (k_archive).
const LzmaApi& lzma();

/// libzstd (libzstd.so.1), loaded with libarchive (k_archive).
const ZstdApi& zstd();

} // namespace cudaenv::sys
