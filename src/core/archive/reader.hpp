// What the extractor's files share (not for other rooms): the bytes an archive is read from
// (a file's range, or a member of an outer archive), the xz decoder cudaenv runs itself, the
// libarchive reader over them, the errors every part reports, and the filter-and-writer entry
// point (filter.cpp). extract.cpp holds the public entry points, nested.cpp the nested runfile.
#pragma once

#include "../error.hpp"
#include "../fs.hpp"
#include "../sys/dynlib.hpp"
#include "extract.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudaenv::archive::detail {

namespace fs = std::filesystem;

/// An entry the filter refuses: the whole archive is refused (exit 5).
Error unsafe(const std::string& archive, const std::string& entry, const std::string& why);
/// An archive that cannot be read (exit 5).
Error broken(const std::string& archive, const std::string& why);
Error fs_error(const std::string& what, const std::string& path, int err);

struct ReadArchive {
    struct archive* a = sys::archive().read_new();

    ReadArchive() = default;
    ReadArchive(const ReadArchive&) = delete;
    ReadArchive& operator=(const ReadArchive&) = delete;

    ~ReadArchive() { sys::archive().read_free(a); }
};

/// The bytes of a file that hold an archive: all of it, or a runfile's payload.
struct FileRange {
    Fd fd;
    std::uint64_t pos = 0;
    std::uint64_t end = 0;
    std::function<void(const void*, std::size_t)> tap;

    FileRange() = default;
    FileRange(const FileRange&) = delete;
    FileRange& operator=(const FileRange&) = delete;

    ~FileRange() = default;

    /// Opens `path`; an empty slice means the whole file. A slice past the end is an error.
    std::optional<std::string> open(const fs::path& path, Slice slice);

    /// Reads what is left of the range, for the tap only.
    std::optional<std::string> read_rest();

    /// Up to `n` bytes of the range: > 0, 0 at its end, -1 with errno set.
    ssize_t read(void* buf, std::size_t n);
};

/// Where compressed bytes come from: a file's range, or a member of an outer archive. Gives
/// > 0 bytes, 0 at the end, -1 with errno set.
using ByteReader = std::function<ssize_t(void*, std::size_t)>;

/// gzip and plain tar: libarchive reads the bytes (and decodes gzip itself).
struct PlainSource {
    ByteReader read;
    std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(1 << 16);
    std::string error;

    static la_ssize_t read_cb(struct archive*, void* self, const void** block);
};

struct XzSource {
    ByteReader read;
    lzma_stream strm = LZMA_STREAM_INIT;
    std::vector<std::uint8_t> in = std::vector<std::uint8_t>(1 << 16);
    std::vector<std::uint8_t> out = std::vector<std::uint8_t>(1 << 16);
    bool input_done = false;
    bool stream_done = false;
    std::string error; ///< why decoding stopped; empty while it goes on

    XzSource() = default;
    XzSource(const XzSource&) = delete;
    XzSource& operator=(const XzSource&) = delete;

    ~XzSource() { sys::lzma().end(&strm); }

    bool start(ByteReader r);

    /// The next decoded bytes for libarchive: > 0 bytes, 0 at the end, -1 with `error` set.
    la_ssize_t next(const void** block);

    std::string describe(lzma_ret r) const;

    static la_ssize_t read_cb(struct archive*, void* self, const void** block) {
        return static_cast<XzSource*>(self)->next(block);
    }
};

/// A fleet mirror's recompressed archive: zstd decoded here (libzstd, with the window limit and
/// the frames' content checksums checked), the tar read by libarchive.
struct ZstdSource {
    ByteReader read;
    ZSTD_DCtx* dctx = nullptr;
    std::vector<std::uint8_t> in = std::vector<std::uint8_t>(1 << 17);
    std::vector<std::uint8_t> out = std::vector<std::uint8_t>(1 << 17);
    ZSTD_inBuffer input{nullptr, 0, 0};
    bool input_done = false;
    bool pending = false; ///< the last call filled the output: the decoder may hold more
    std::size_t hint = 0; ///< libzstd's last answer: 0 once a frame is whole
    std::string error;    ///< why decoding stopped; empty while it goes on

    ZstdSource() = default;
    ZstdSource(const ZstdSource&) = delete;
    ZstdSource& operator=(const ZstdSource&) = delete;

    ~ZstdSource() {
        if (dctx) {
            sys::zstd().free_dctx(dctx);
        }
    }

    bool start(ByteReader r);

    /// The next decoded bytes for libarchive: > 0 bytes, 0 at the end, -1 with `error` set.
    la_ssize_t next(const void** block);

    static std::string describe(std::size_t code);

    static la_ssize_t read_cb(struct archive*, void* self, const void** block) {
        return static_cast<ZstdSource*>(self)->next(block);
    }
};

/// One archive being read: its byte source and decoder, and libarchive over them.
struct Reader {
    XzSource xz; // the sources outlive the archive that reads from them
    ZstdSource zstd;
    PlainSource plain;
    ReadArchive ra;
    Compression compression = Compression::none;

    Reader() = default;
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

    /// Starts reading `bytes` as `c`; an error is the reason it cannot.
    std::optional<std::string> open(ByteReader bytes, Compression c);

    const std::string& source_error() const {
        return compression == Compression::xz     ? xz.error
               : compression == Compression::zstd ? zstd.error
                                                  : plain.error;
    }

    std::string reason() const;

    /// The next entry: an entry, nullptr at the end, or why the archive cannot be read. The
    /// first entry also proves the compression is the one expected.
    Result<struct archive_entry*> next(const std::string& name, bool& checked_format);
};

/// `file` as a ByteReader.
ByteReader range_reader(FileRange& file);

/// The name an archive goes by in messages: the slice's own, else the file's.
std::string archive_name(const fs::path& file, const Slice& slice);

/// A file's range read as an archive: the range, and the reader decoding it.
struct RangeArchive {
    FileRange range; // the reader reads from it: declared first, destroyed last
    Reader reader;

    /// Opens `slice` of `path` (all of it when empty) and starts reading it as `c`; an error is
    /// the reason it cannot.
    std::optional<std::string> open(const fs::path& path, Slice slice, Compression c);
};

/// Where and how the entries of one archive are written.
struct Target {
    std::string name;         ///< the archive, for messages
    std::string expected_top; ///< the top directory it must have ("payload" for a selection)
    int root_fd = -1;         ///< the destination, open
    const Limits& limits;
    const MemberMap* map = nullptr; ///< selected extraction: which members, where
};

/// The destination folder, opened for the writer (Target::root_fd) without following a link.
Result<Fd> open_destination(const fs::path& dest);

/// Extracts every entry of `r` into `dest` through the filter, then checks the tree's links as
/// the kernel follows them (filter.cpp).
Result<Extracted> drain(Reader& r, const Target& t, const fs::path& dest);

} // namespace cudaenv::archive::detail
