// The bytes an archive is read from, the xz decoder, and libarchive over them (reader.hpp).
#include "reader.hpp"

namespace cudaenv::archive::detail {

std::optional<std::string> FileRange::open(const fs::path& path, Slice slice) {
    fd = Fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
        return "cannot open: " + errno_text(errno);
    }

    struct stat st {};

    if (::fstat(fd.get(), &st) != 0) {
        return "cannot stat: " + errno_text(errno);
    }
    auto size = static_cast<std::uint64_t>(st.st_size);
    if (slice.length == 0 && slice.offset == 0) {
        slice.length = size;
    }
    if (slice.offset > size || slice.length > size - slice.offset) {
        return "the payload runs past the end of the file";
    }
    pos = slice.offset;
    end = slice.offset + slice.length;
    tap = std::move(slice.tap);
    return std::nullopt;
}

std::optional<std::string> FileRange::read_rest() {
    std::vector<char> buf(tap && pos < end ? std::size_t{1} << 16 : 0);
    while (!buf.empty()) {
        ssize_t n = read(buf.data(), buf.size());
        if (n < 0) {
            return "cannot read: " + errno_text(errno);
        }
        if (n == 0) {
            break;
        }
    }
    return std::nullopt;
}

ssize_t FileRange::read(void* buf, std::size_t n) {
    std::uint64_t left = end - pos;
    if (left == 0) {
        return 0;
    }
    if (n > left) {
        n = static_cast<std::size_t>(left);
    }
    while (true) {
        ssize_t got = ::pread(fd.get(), buf, n, static_cast<off_t>(pos));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got > 0) {
            pos += static_cast<std::uint64_t>(got);
            if (tap) {
                tap(buf, static_cast<std::size_t>(got));
            }
        }
        return got;
    }
}

la_ssize_t PlainSource::read_cb(struct archive*, void* self, const void** block) {
    auto* s = static_cast<PlainSource*>(self);
    ssize_t n = s->read(s->buf.data(), s->buf.size());
    if (n < 0) {
        s->error = "cannot read: " + errno_text(errno);
        return -1;
    }
    *block = s->buf.data();
    return static_cast<la_ssize_t>(n);
}

bool XzSource::start(ByteReader r) {
    read = std::move(r);
    if (sys::lzma().stream_decoder(&strm, k_xz_memlimit, LZMA_CONCATENATED) != LZMA_OK) {
        error = "cannot start the xz decoder";
        return false;
    }
    return true;
}

la_ssize_t XzSource::next(const void** block) {
    strm.next_out = out.data();
    strm.avail_out = out.size();
    while (!stream_done && strm.avail_out == out.size()) {
        if (strm.avail_in == 0 && !input_done) {
            ssize_t n = read(in.data(), in.size());
            if (n < 0) {
                error = "cannot read: " + errno_text(errno);
                return -1;
            }
            input_done = n == 0;
            strm.next_in = in.data();
            strm.avail_in = static_cast<std::size_t>(n);
        }
        lzma_ret r = sys::lzma().code(&strm, input_done ? LZMA_FINISH : LZMA_RUN);
        if (r == LZMA_STREAM_END) {
            stream_done = true;
        } else if (r != LZMA_OK) {
            error = describe(r);
            return -1;
        }
    }
    *block = out.data();
    return static_cast<la_ssize_t>(out.size() - strm.avail_out);
}

std::string XzSource::describe(lzma_ret r) const {
    switch (r) {
    case LZMA_MEMLIMIT_ERROR:
        return "decompressing it needs " +
               std::to_string((sys::lzma().memusage(&strm) + (1u << 20) - 1) >> 20) +
               " MiB (its xz dictionary), more than the " + std::to_string(k_xz_memlimit >> 20) +
               " MiB cudaenv allows";
    case LZMA_FORMAT_ERROR:
        return "not xz-compressed";
    case LZMA_DATA_ERROR:
        return "corrupt xz data";
    case LZMA_BUF_ERROR:
        return "the xz stream is truncated";
    case LZMA_OPTIONS_ERROR:
        return "xz options cudaenv does not support";
    case LZMA_MEM_ERROR:
        return "out of memory while decompressing";
    default:
        return "xz decoding failed (" + std::to_string(static_cast<int>(r)) + ")";
    }
}

bool ZstdSource::start(ByteReader r) {
    read = std::move(r);
    const auto& z = sys::zstd();
    dctx = z.create_dctx();
    if (!dctx ||
        z.is_error(z.dctx_set_parameter(dctx, ZSTD_d_windowLogMax, k_zstd_window_log_max))) {
        error = "cannot start the zstd decoder";
        return false;
    }
    return true;
}

la_ssize_t ZstdSource::next(const void** block) {
    const auto& z = sys::zstd();
    ZSTD_outBuffer output{out.data(), out.size(), 0};
    while (output.pos == 0) {
        if (input.pos == input.size && !pending) {
            if (input_done) {
                if (hint != 0) {
                    error = "the zstd stream is truncated";
                    return -1;
                }
                break; // every frame whole, all of it handed out
            }
            ssize_t n = read(in.data(), in.size());
            if (n < 0) {
                error = "cannot read: " + errno_text(errno);
                return -1;
            }
            input_done = n == 0;
            input = {in.data(), static_cast<std::size_t>(n), 0};
            continue;
        }
        std::size_t r = z.decompress_stream(dctx, &output, &input);
        if (z.is_error(r)) {
            error = describe(r);
            return -1;
        }
        hint = r;
        pending = output.pos == output.size;
    }
    *block = out.data();
    return static_cast<la_ssize_t>(output.pos);
}

std::string ZstdSource::describe(std::size_t code) {
    const auto& z = sys::zstd();
    switch (z.error_code(code)) {
    case ZSTD_error_frameParameter_windowTooLarge:
        return "decompressing it needs a zstd window larger than the " +
               std::to_string((std::size_t{1} << k_zstd_window_log_max) >> 20) +
               " MiB cudaenv allows";
    case ZSTD_error_prefix_unknown:
        return "not zstd-compressed";
    case ZSTD_error_checksum_wrong:
        return "corrupt zstd data (a frame's checksum does not match)";
    case ZSTD_error_corruption_detected:
        return "corrupt zstd data";
    case ZSTD_error_memory_allocation:
        return "out of memory while decompressing";
    default:
        return std::string("zstd decoding failed (") + z.error_name(code) + ")";
    }
}

std::optional<std::string> Reader::open(ByteReader bytes, Compression c) {
    compression = c;
    sys::archive().read_support_format_tar(ra.a);
    if (c == Compression::gzip) {
        sys::archive().read_support_filter_gzip(ra.a);
    }
    int opened = ARCHIVE_FATAL;
    if (c == Compression::xz) {
        if (!xz.start(std::move(bytes))) {
            return xz.error;
        }
        opened = sys::archive().read_open(ra.a, &xz, nullptr, &XzSource::read_cb, nullptr);
    } else if (c == Compression::zstd) {
        if (!zstd.start(std::move(bytes))) {
            return zstd.error;
        }
        opened = sys::archive().read_open(ra.a, &zstd, nullptr, &ZstdSource::read_cb, nullptr);
    } else {
        plain.read = std::move(bytes);
        opened = sys::archive().read_open(ra.a, &plain, nullptr, &PlainSource::read_cb, nullptr);
    }
    if (opened != ARCHIVE_OK) {
        return reason();
    }
    return std::nullopt;
}

std::string Reader::reason() const {
    if (!source_error().empty()) {
        return source_error();
    }
    const char* why = sys::archive().error_string(ra.a);
    return why ? why : "unreadable";
}

Result<struct archive_entry*> Reader::next(const std::string& name, bool& checked_format) {
    struct archive_entry* e = nullptr;
    int r = sys::archive().read_next_header(ra.a, &e);
    if (r == ARCHIVE_EOF) {
        if (!checked_format) {
            return broken(name, "empty archive");
        }
        return static_cast<struct archive_entry*>(nullptr);
    }
    if (r < ARCHIVE_WARN) {
        return broken(name, reason());
    }
    if (!checked_format) {
        checked_format = true;
        // xz and zstd were decoded by us (what libarchive sees is the plain tar)
        const auto [want, text] =
            compression == Compression::gzip
                ? std::pair{ARCHIVE_FILTER_GZIP, "gzip-compressed"}
                : std::pair{ARCHIVE_FILTER_NONE,
                            compression == Compression::xz     ? "xz-compressed"
                            : compression == Compression::zstd ? "zstd-compressed"
                                                               : "a plain tar"};
        if (sys::archive().filter_code(ra.a, 0) != want) {
            return broken(name, std::string("not ") + text);
        }
    }
    return e;
}

std::string archive_name(const fs::path& file, const Slice& slice) {
    return slice.name.empty() ? file.filename().string() : slice.name;
}

std::optional<std::string> RangeArchive::open(const fs::path& path, Slice slice, Compression c) {
    if (auto why = range.open(path, std::move(slice))) {
        return why;
    }
    return reader.open(range_reader(range), c);
}

} // namespace cudaenv::archive::detail
