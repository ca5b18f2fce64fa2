#include "dynlib.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace cudaenv::sys {

namespace {

void* open_lib(const char* soname) {
    void* h = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* why = ::dlerror();
        throw std::runtime_error(std::string("cannot load ") + soname + ": " +
                                 (why ? why : "unknown error"));
    }
    return h;
}

template <typename F> void bind(void* h, F& out, const char* name) {
    void* p = ::dlsym(h, name);
    if (!p) {
        throw std::runtime_error(std::string("missing symbol ") + name);
    }
    out = reinterpret_cast<F>(p);
}

} // namespace

const CurlApi& curl() {
    static const CurlApi api = [] {
        CurlApi a{};
        void* h = open_lib("libcurl.so.4");
        bind(h, a.global_init, "curl_global_init");
        bind(h, a.easy_init, "curl_easy_init");
        bind(h, a.easy_cleanup, "curl_easy_cleanup");
        bind(h, a.easy_setopt, "curl_easy_setopt");
        bind(h, a.easy_perform, "curl_easy_perform");
        bind(h, a.easy_getinfo, "curl_easy_getinfo");
        bind(h, a.easy_strerror, "curl_easy_strerror");
        bind(h, a.slist_free_all, "curl_slist_free_all");
        return a;
    }();
    return api;
}

const CryptoApi& crypto() {
    static const CryptoApi api = [] {
        CryptoApi a{};
        void* h = open_lib("libcrypto.so.3");
        bind(h, a.md_ctx_new, "EVP_MD_CTX_new");
        bind(h, a.md_ctx_free, "EVP_MD_CTX_free");
        bind(h, a.digest_init_ex, "EVP_DigestInit_ex");
        bind(h, a.digest_update, "EVP_DigestUpdate");
        bind(h, a.digest_final_ex, "EVP_DigestFinal_ex");
        bind(h, a.sha256, "EVP_sha256");
        return a;
    }();
    return api;
}

const ArchiveApi& archive() {
    static const ArchiveApi api = [] {
        ArchiveApi a{};
        void* h = open_lib("libarchive.so.13");
        bind(h, a.read_new, "archive_read_new");
        bind(h, a.read_free, "archive_read_free");
        bind(h, a.read_support_format_tar, "archive_read_support_format_tar");
        bind(h, a.read_support_filter_xz, "archive_read_support_filter_xz");
        bind(h, a.read_support_filter_gzip, "archive_read_support_filter_gzip");
        bind(h, a.read_open_filename, "archive_read_open_filename");
        bind(h, a.read_next_header, "archive_read_next_header");
        bind(h, a.read_data, "archive_read_data");
        bind(h, a.read_data_block, "archive_read_data_block");
        bind(h, a.error_string, "archive_error_string");
        bind(h, a.filter_code, "archive_filter_code");
        bind(h, a.entry_pathname, "archive_entry_pathname");
        bind(h, a.entry_hardlink, "archive_entry_hardlink");
        bind(h, a.entry_filetype, "archive_entry_filetype");
        bind(h, a.entry_perm, "archive_entry_perm");
        bind(h, a.entry_symlink, "archive_entry_symlink");
        bind(h, a.entry_size, "archive_entry_size");
        bind(h, a.entry_size_is_set, "archive_entry_size_is_set");
        bind(h, a.entry_sparse_count, "archive_entry_sparse_count");
        return a;
    }();
    return api;
}

} // namespace cudaenv::sys
