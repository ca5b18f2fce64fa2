// A kernel module's last bytes as the kernel loads it, decoded where it is compressed: the
// signature trailer sits at the end of what is compressed. Only the tail is kept, decoding stops
// past k_module_decoded_max, and xz runs under the installer's memory limit.
#include "../fs.hpp"
#include "../sys/dynlib.hpp"
#include "module_signature.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <vector>

namespace cudaenv::doctor {

namespace {

/// The memory xz may use: as the installer's (archive/reader.hpp), xz -9's 64 MiB dictionary fits.
constexpr std::uint64_t k_xz_memlimit = 72u << 20;
constexpr std::size_t k_chunk = 1u << 16;

Error cannot(const std::filesystem::path& real, const std::string& why) {
    return Error(ErrorCode::failure, printable(real.filename().string() + ": " + why));
}

/// The decoded bytes' end, bounded.
struct Tail {
    std::string bytes;
    std::uint64_t total = 0;

    bool add(const void* p, std::size_t n) {
        bytes.append(static_cast<const char*>(p), n);
        total += n;
        if (bytes.size() > 2 * k_module_tail) {
            bytes.erase(0, bytes.size() - k_module_tail);
        }
        return total <= k_module_decoded_max;
    }

    std::string take() && {
        if (bytes.size() > k_module_tail) {
            bytes.erase(0, bytes.size() - k_module_tail);
        }
        return std::move(bytes);
    }
};

std::string too_big() {
    return "decodes to more than " + std::to_string(k_module_decoded_max >> 20) +
           " MiB, more than a module";
}

std::string lzma_error(lzma_ret r) {
    switch (r) {
    case LZMA_MEMLIMIT_ERROR:
        return "its xz dictionary needs more than " + std::to_string(k_xz_memlimit >> 20) + " MiB";
    case LZMA_FORMAT_ERROR:
        return "not xz-compressed";
    case LZMA_BUF_ERROR:
        return "the xz stream is truncated";
    default:
        return "corrupt xz data (liblzma " + std::to_string(static_cast<int>(r)) + ")";
    }
}

Result<std::string> plain_tail(int fd, const std::filesystem::path& real) {
    struct stat st {};

    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return cannot(real, "not a regular file");
    }
    auto size = static_cast<std::uint64_t>(st.st_size);
    std::size_t n = size < k_module_tail ? static_cast<std::size_t>(size) : k_module_tail;
    std::string out(n, '\0');
    ssize_t got = ::pread(fd, out.data(), n, static_cast<off_t>(size - n));
    if (got != static_cast<ssize_t>(n)) {
        return cannot(real, "cannot read: " + errno_text(errno));
    }
    return out;
}

Result<std::string> xz_tail(int fd, const std::filesystem::path& real) {
    CUDAENV_TRY(sys::load(sys::k_archive));
    const auto& x = sys::lzma();
    lzma_stream strm = LZMA_STREAM_INIT;
    if (x.stream_decoder(&strm, k_xz_memlimit, LZMA_CONCATENATED) != LZMA_OK) {
        return cannot(real, "cannot start the xz decoder");
    }
    std::unique_ptr<lzma_stream, void (*)(lzma_stream*)> end(&strm, sys::lzma().end);
    std::vector<std::uint8_t> in(k_chunk), out(k_chunk);
    Tail tail;
    bool eof = false;
    for (;;) {
        if (strm.avail_in == 0 && !eof) {
            ssize_t n = ::read(fd, in.data(), in.size());
            if (n < 0) {
                return cannot(real, "cannot read: " + errno_text(errno));
            }
            eof = n == 0;
            strm.next_in = in.data();
            strm.avail_in = static_cast<std::size_t>(n);
        }
        strm.next_out = out.data();
        strm.avail_out = out.size();
        lzma_ret r = x.code(&strm, eof ? LZMA_FINISH : LZMA_RUN);
        if (!tail.add(out.data(), out.size() - strm.avail_out)) {
            return cannot(real, too_big());
        }
        if (r == LZMA_STREAM_END) {
            return std::move(tail).take();
        }
        if (r != LZMA_OK) {
            return cannot(real, lzma_error(r));
        }
    }
}

/// gzip and zstd through libarchive's raw format; a libarchive that would run `gzip -d` or
/// `zstd -d` instead (built without zlib or libzstd) is not used.
Result<std::string> archive_tail(const std::filesystem::path& real, bool zstd) {
    CUDAENV_TRY(sys::load(sys::k_archive));
    const auto& a = sys::archive();
    std::unique_ptr<struct archive, decltype(a.read_free)> ar(a.read_new(), a.read_free);
    int rc = zstd ? a.read_support_filter_zstd(ar.get()) : a.read_support_filter_gzip(ar.get());
    if (rc != ARCHIVE_OK) {
        return cannot(real,
                      std::string("this libarchive decodes ") + (zstd ? "zstd" : "gzip") +
                          " only through an external program, which the doctor does not run");
    }
    struct archive_entry* entry = nullptr;
    if (a.read_support_format_raw(ar.get()) != ARCHIVE_OK ||
        a.read_open_filename(ar.get(), real.c_str(), k_chunk) != ARCHIVE_OK ||
        a.read_next_header(ar.get(), &entry) != ARCHIVE_OK) {
        const char* why = a.error_string(ar.get());
        return cannot(real, why ? why : "cannot read");
    }
    std::vector<char> buf(k_chunk);
    Tail tail;
    for (;;) {
        la_ssize_t n = a.read_data(ar.get(), buf.data(), buf.size());
        if (n < 0) {
            const char* why = a.error_string(ar.get());
            return cannot(real, why ? why : "corrupt data");
        }
        if (n == 0) {
            return std::move(tail).take();
        }
        if (!tail.add(buf.data(), static_cast<std::size_t>(n))) {
            return cannot(real, too_big());
        }
    }
}

} // namespace

Result<std::string> module_tail(const std::filesystem::path& real) {
    Fd fd(::open(real.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
        return cannot(real, "cannot open: " + errno_text(errno));
    }
    std::string name = real.filename().string();
    if (name.ends_with(".ko")) {
        return plain_tail(fd.get(), real);
    }
    if (name.ends_with(".ko.xz")) {
        return xz_tail(fd.get(), real);
    }
    if (name.ends_with(".ko.gz") || name.ends_with(".ko.zst")) {
        return archive_tail(real, name.ends_with(".zst"));
    }
    return cannot(real, "a compression the doctor cannot decode");
}

} // namespace cudaenv::doctor
