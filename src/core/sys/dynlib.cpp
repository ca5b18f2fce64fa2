#include "dynlib.hpp"

#include <dlfcn.h>
#include <link.h>

#include <stdexcept>
#include <string>

namespace cudaenv::sys {

namespace {

/// One library's functions, or why they could not be had. Filled once per process.
template <typename Api> struct Loaded {
    Api api{};
    std::string error; ///< empty: loaded
};

/// dlopen + dlsym that record the first failure instead of throwing: a broken library on
/// LD_LIBRARY_PATH is an error on the main thread, not an exception in a worker (SIGABRT).
struct Binder {
    void* h = nullptr;
    std::string soname;
    std::string& error;

    Binder(const char* name, std::string& err) : soname(name), error(err) {
        h = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char* why = ::dlerror();
            error = "cannot load " + soname + ": " + (why ? why : "unknown error");
        }
    }

    template <typename F> void operator()(F& out, const char* name) {
        if (!error.empty()) {
            return;
        }
        void* p = ::dlsym(h, name);
        if (!p) {
            struct link_map* lm = nullptr;
            std::string where = ::dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name
                                    ? std::string(" (") + lm->l_name + ")"
                                    : std::string();
            error = soname + where + " lacks " + name + ": not the library cudaenv needs";
            return;
        }
        out = reinterpret_cast<F>(p);
    }
};

template <typename Api> const Api& checked(const Loaded<Api>& l) {
    if (!l.error.empty()) {
        // Callers load() first on the main thread; reaching this is a bug, said as one.
        throw std::logic_error(l.error);
    }
    return l.api;
}

const Loaded<CurlApi>& curl_lib() {
    static const Loaded<CurlApi> l = [] {
        Loaded<CurlApi> r;
        CurlApi& a = r.api;
        Binder bind("libcurl.so.4", r.error);
        bind(a.global_init, "curl_global_init");
        bind(a.easy_init, "curl_easy_init");
        bind(a.easy_cleanup, "curl_easy_cleanup");
        bind(a.easy_setopt, "curl_easy_setopt");
        bind(a.easy_perform, "curl_easy_perform");
        bind(a.easy_getinfo, "curl_easy_getinfo");
        bind(a.easy_strerror, "curl_easy_strerror");
        bind(a.slist_free_all, "curl_slist_free_all");
        bind(a.version_info, "curl_version_info");
        return r;
    }();
    return l;
}

const Loaded<CryptoApi>& crypto_lib() {
    static const Loaded<CryptoApi> l = [] {
        Loaded<CryptoApi> r;
        CryptoApi& a = r.api;
        Binder bind("libcrypto.so.3", r.error);
        bind(a.md_ctx_new, "EVP_MD_CTX_new");
        bind(a.md_ctx_free, "EVP_MD_CTX_free");
        bind(a.digest_init_ex, "EVP_DigestInit_ex");
        bind(a.digest_update, "EVP_DigestUpdate");
        bind(a.digest_final_ex, "EVP_DigestFinal_ex");
        bind(a.sha256, "EVP_sha256");
        bind(a.md5, "EVP_md5");
        bind(a.pkey_new_raw_public_key, "EVP_PKEY_new_raw_public_key");
        bind(a.pkey_new_raw_private_key, "EVP_PKEY_new_raw_private_key");
        bind(a.pkey_get_raw_public_key, "EVP_PKEY_get_raw_public_key");
        bind(a.pkey_free, "EVP_PKEY_free");
        bind(a.digest_sign_init, "EVP_DigestSignInit");
        bind(a.digest_sign, "EVP_DigestSign");
        bind(a.digest_verify_init, "EVP_DigestVerifyInit");
        bind(a.digest_verify, "EVP_DigestVerify");
        bind(a.rand_bytes, "RAND_bytes");
        bind(a.d2i_cms, "d2i_CMS_ContentInfo");
        bind(a.cms_free, "CMS_ContentInfo_free");
        bind(a.cms_signer_infos, "CMS_get0_SignerInfos");
        bind(a.cms_signer_id, "CMS_SignerInfo_get0_signer_id");
        bind(a.stack_num, "OPENSSL_sk_num");
        bind(a.stack_value, "OPENSSL_sk_value");
        bind(a.d2i_x509, "d2i_X509");
        bind(a.x509_free, "X509_free");
        bind(a.x509_issuer, "X509_get_issuer_name");
        bind(a.x509_subject, "X509_get_subject_name");
        bind(a.x509_serial, "X509_get0_serialNumber");
        bind(a.x509_skid, "X509_get0_subject_key_id");
        bind(a.i2d_name, "i2d_X509_NAME");
        bind(a.name_text_by_nid, "X509_NAME_get_text_by_NID");
        bind(a.asn1_length, "ASN1_STRING_length");
        bind(a.asn1_data, "ASN1_STRING_get0_data");
        return r;
    }();
    return l;
}

const Loaded<ArchiveApi>& archive_lib() {
    static const Loaded<ArchiveApi> l = [] {
        Loaded<ArchiveApi> r;
        ArchiveApi& a = r.api;
        Binder bind("libarchive.so.13", r.error);
        bind(a.read_new, "archive_read_new");
        bind(a.read_free, "archive_read_free");
        bind(a.read_support_format_tar, "archive_read_support_format_tar");
        bind(a.read_support_filter_xz, "archive_read_support_filter_xz");
        bind(a.read_support_filter_gzip, "archive_read_support_filter_gzip");
        bind(a.read_support_filter_zstd, "archive_read_support_filter_zstd");
        bind(a.read_support_format_raw, "archive_read_support_format_raw");
        bind(a.read_open_filename, "archive_read_open_filename");
        bind(a.read_open, "archive_read_open");
        bind(a.read_next_header, "archive_read_next_header");
        bind(a.read_data, "archive_read_data");
        bind(a.read_data_block, "archive_read_data_block");
        bind(a.error_string, "archive_error_string");
        bind(a.filter_code, "archive_filter_code");
        bind(a.entry_pathname, "archive_entry_pathname");
        bind(a.entry_hardlink, "archive_entry_hardlink");
        bind(a.entry_filetype, "archive_entry_filetype");
        bind(a.entry_perm, "archive_entry_perm");
        bind(a.entry_symlink, "archive_entry_symlink");
        bind(a.entry_size, "archive_entry_size");
        bind(a.entry_size_is_set, "archive_entry_size_is_set");
        bind(a.entry_sparse_count, "archive_entry_sparse_count");
        return r;
    }();
    return l;
}

const Loaded<LzmaApi>& lzma_lib() {
    static const Loaded<LzmaApi> l = [] {
        Loaded<LzmaApi> r;
        LzmaApi& a = r.api;
        Binder bind("liblzma.so.5", r.error);
        bind(a.stream_decoder, "lzma_stream_decoder");
        bind(a.code, "lzma_code");
        bind(a.end, "lzma_end");
        bind(a.memusage, "lzma_memusage");
        return r;
    }();
    return l;
}

const Loaded<ZstdApi>& zstd_lib() {
    static const Loaded<ZstdApi> l = [] {
        Loaded<ZstdApi> r;
        ZstdApi& a = r.api;
        Binder bind("libzstd.so.1", r.error);
        bind(a.create_dctx, "ZSTD_createDCtx");
        bind(a.free_dctx, "ZSTD_freeDCtx");
        bind(a.dctx_set_parameter, "ZSTD_DCtx_setParameter");
        bind(a.decompress_stream, "ZSTD_decompressStream");
        bind(a.create_cctx, "ZSTD_createCCtx");
        bind(a.free_cctx, "ZSTD_freeCCtx");
        bind(a.cctx_set_parameter, "ZSTD_CCtx_setParameter");
        bind(a.compress_stream2, "ZSTD_compressStream2");
        bind(a.is_error, "ZSTD_isError");
        bind(a.error_name, "ZSTD_getErrorName");
        bind(a.error_code, "ZSTD_getErrorCode");
        bind(a.cstream_out_size, "ZSTD_CStreamOutSize");
        return r;
    }();
    return l;
}

} // namespace

Status load(unsigned libs) {
    const std::string* errors[] = {
        libs & k_curl ? &curl_lib().error : nullptr,
        libs & k_archive ? &archive_lib().error : nullptr,
        libs & k_archive ? &lzma_lib().error : nullptr,
        libs & k_archive ? &zstd_lib().error : nullptr,
        libs & k_crypto ? &crypto_lib().error : nullptr,
    };
    for (const auto* e : errors) {
        if (e && !e->empty()) {
            return Error(ErrorCode::failure, *e)
                .with_hint(
                    "cudaenv needs libcurl4, libarchive13, liblzma5, libzstd1 and libssl3 (apt "
                    "install them); a broken copy on LD_LIBRARY_PATH also ends here");
        }
    }
    return Ok{};
}

const CurlApi& curl() {
    return checked(curl_lib());
}

const CryptoApi& crypto() {
    return checked(crypto_lib());
}

const ArchiveApi& archive() {
    return checked(archive_lib());
}

const LzmaApi& lzma() {
    return checked(lzma_lib());
}

const ZstdApi& zstd() {
    return checked(zstd_lib());
}

} // namespace cudaenv::sys
