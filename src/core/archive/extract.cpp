#include "extract.hpp"

#include "../failpoint.hpp"
#include "../fs.hpp"
#include "../sys/dynlib.hpp"
#include "links.hpp"
#include "makeself.hpp"
#include "names.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <linux/openat2.h>
#include <map>
#include <vector>

namespace cudaenv::archive {

namespace fs = std::filesystem;

std::optional<Compression> compression_for(const std::string& path) {
    auto ends = [&](std::string_view s) {
        return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
    };
    if (ends(".tar.xz")) {
        return Compression::xz;
    }
    if (ends(".tgz") || ends(".tar.gz")) {
        return Compression::gzip;
    }
    return std::nullopt;
}

namespace {

/// Writeback is started every this many bytes of a file.
constexpr std::uint64_t k_writeback_chunk = 8u << 20;

/// Asks the kernel to start writing a range of a file to disk, without waiting for it; a
/// failure only loses the head start (the sync before publishing still covers the data).
void start_writeback(int fd, std::uint64_t offset, std::uint64_t length) {
    (void)::sync_file_range(
        fd, static_cast<off64_t>(offset), static_cast<off64_t>(length), SYNC_FILE_RANGE_WRITE);
}

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
    std::optional<std::string> open(const fs::path& path, Slice slice) {
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

    /// Reads what is left of the range, for the tap only.
    std::optional<std::string> read_rest() {
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

    /// Up to `n` bytes of the range: > 0, 0 at its end, -1 with errno set.
    ssize_t read(void* buf, std::size_t n) {
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
};

/// Where compressed bytes come from: a file's range, or a member of an outer archive. Gives
/// > 0 bytes, 0 at the end, -1 with errno set.
using ByteReader = std::function<ssize_t(void*, std::size_t)>;

/// gzip and plain tar: libarchive reads the bytes (and decodes gzip itself).
struct PlainSource {
    ByteReader read;
    std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(1 << 16);
    std::string error;

    static la_ssize_t read_cb(struct archive*, void* self, const void** block) {
        auto* s = static_cast<PlainSource*>(self);
        ssize_t n = s->read(s->buf.data(), s->buf.size());
        if (n < 0) {
            s->error = "cannot read: " + errno_text(errno);
            return -1;
        }
        *block = s->buf.data();
        return static_cast<la_ssize_t>(n);
    }
};

/// xz is decoded here, not by libarchive: libarchive's decoder accepts any dictionary up to its
/// fixed 1 GiB memory limit, so an archive could make each extraction (one per core) allocate up
/// to that much. Ours stops a stream that needs more than k_xz_memlimit (xz -9's 64 MiB
/// dictionary fits; NVIDIA's archives need about 9 MiB), and libarchive reads the tar it yields.
constexpr std::uint64_t k_xz_memlimit = 72u << 20;

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

    bool start(ByteReader r) {
        read = std::move(r);
        if (sys::lzma().stream_decoder(&strm, k_xz_memlimit, LZMA_CONCATENATED) != LZMA_OK) {
            error = "cannot start the xz decoder";
            return false;
        }
        return true;
    }

    /// The next decoded bytes for libarchive: > 0 bytes, 0 at the end, -1 with `error` set.
    la_ssize_t next(const void** block) {
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

    std::string describe(lzma_ret r) const {
        switch (r) {
        case LZMA_MEMLIMIT_ERROR:
            return "decompressing it needs " +
                   std::to_string((sys::lzma().memusage(&strm) + (1u << 20) - 1) >> 20) +
                   " MiB (its xz dictionary), more than the " +
                   std::to_string(k_xz_memlimit >> 20) + " MiB cudaenv allows";
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

    static la_ssize_t read_cb(struct archive*, void* self, const void** block) {
        return static_cast<XzSource*>(self)->next(block);
    }
};

/// Opens a directory below `root_fd` refusing any symlink on the way (openat2 RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS where the kernel has it; our own bookkeeping already rules symlinks out).
int open_dir_beneath(int root_fd, const std::string& rel) {
    if (rel.empty()) {
        return ::dup(root_fd);
    }

    struct open_how how {};

    how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = ::syscall(SYS_openat2, root_fd, rel.c_str(), &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EINVAL)) {
        return static_cast<int>(fd);
    }
    return ::openat(root_fd, rel.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

Error unsafe(const std::string& archive, const std::string& entry, const std::string& why) {
    return Error(ErrorCode::unsafe_archive,
                 "unsafe archive '" + archive + "': entry '" + printable(entry) +
                     "': " + printable(why))
        .with_hint("nothing was installed; the archive or the mirror serving it is bad");
}

Error broken(const std::string& archive, const std::string& why) {
    return Error(ErrorCode::unsafe_archive,
                 "unreadable archive '" + archive + "': " + printable(why))
        .with_hint("nothing was installed; the archive or the mirror serving it is bad");
}

Error fs_error(const std::string& what, const std::string& path, int err) {
    return Error(ErrorCode::filesystem, what + " '" + path + "': " + errno_text(err));
}

bool bad_char(char c) {
    return c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
}

/// Splits a raw entry name into segments, refusing anything that is not a plain relative path.
std::optional<std::string> split_name(std::string_view name, std::vector<std::string>& out) {
    if (name.empty()) {
        return "empty name";
    }
    if (name.front() == '/') {
        return "absolute path";
    }
    for (char c : name) {
        if (bad_char(c)) {
            return "backslash or control character in the name";
        }
    }
    if (name.back() == '/') {
        name.remove_suffix(1);
    }
    std::size_t start = 0;
    while (start <= name.size()) {
        std::size_t end = name.find('/', start);
        if (end == std::string_view::npos) {
            end = name.size();
        }
        std::string_view seg = name.substr(start, end - start);
        if (seg.empty() || seg == "." || seg == "..") {
            return seg == ".." ? "'..' in the path" : "empty or '.' path segment";
        }
        out.emplace_back(seg);
        start = end + 1;
    }
    return std::nullopt;
}

std::string join(const std::vector<std::string>& segs, std::size_t from, std::size_t to) {
    std::string s;
    for (std::size_t i = from; i < to; ++i) {
        if (i > from) {
            s += '/';
        }
        s += segs[i];
    }
    return s;
}

/// A symlink target must be relative and stay inside the top directory, resolved lexically
/// from the link's own directory (`dir`, segments below the top).
std::optional<std::string> check_link_target(std::string_view target,
                                             std::vector<std::string> dir) {
    if (target.empty()) {
        return "empty symlink target";
    }
    if (target.front() == '/') {
        return "symlink to an absolute path";
    }
    for (char c : target) {
        if (bad_char(c)) {
            return "backslash or control character in the symlink target";
        }
    }
    std::size_t start = 0;
    while (start <= target.size()) {
        std::size_t end = target.find('/', start);
        if (end == std::string_view::npos) {
            end = target.size();
        }
        std::string_view seg = target.substr(start, end - start);
        if (seg == "..") {
            if (dir.empty()) {
                return "symlink target leaves the archive's directory";
            }
            dir.pop_back();
        } else if (!seg.empty() && seg != ".") {
            dir.emplace_back(seg);
        }
        start = end + 1;
    }
    return std::nullopt;
}

struct Extractor {
    std::string name; ///< archive, for messages
    std::string expected_top;
    int root_fd = -1;
    const Limits& limits;
    const std::string* source_error = nullptr; ///< our reader's reason for stopping, if any
    const MemberMap* map = nullptr;            ///< selected extraction: which members, where
    std::map<std::string, Entry::Type> seen;
    std::map<std::string, bool> exec;          ///< regular files: executable?
    std::map<std::string, std::string> folded; ///< collision_key -> the path that has it
    Extracted result;
    std::size_t name_max = 0; ///< the longest name the destination's filesystem takes

    /// Refuses a name no folder of the destination can hold, before anything of it is written
    /// (the filesystem would refuse it half way: ENAMETOOLONG).
    std::optional<std::string> too_long(const std::vector<std::string>& segs) {
        if (name_max == 0) {
            long n = ::fpathconf(root_fd, _PC_NAME_MAX);
            name_max = n > 0 ? static_cast<std::size_t>(n) : 255;
        }
        for (const auto& seg : segs) {
            if (seg.size() > name_max) {
                return "a name of " + std::to_string(seg.size()) +
                       " bytes, longer than the filesystem takes (" + std::to_string(name_max) +
                       ")";
            }
        }
        return std::nullopt;
    }

    /// Why libarchive stopped: the xz decoder's reason when it was ours.
    std::string reason(struct archive* a) const {
        if (source_error && !source_error->empty()) {
            return *source_error;
        }
        const char* why = sys::archive().error_string(a);
        return why ? why : "unreadable";
    }

    /// Refuses a path that another of this archive's paths becomes on a case-insensitive or
    /// normalising filesystem.
    Status check_twin(const std::string& rel) {
        auto [it, fresh] = folded.emplace(collision_key(rel), rel);
        if (!fresh && it->second != rel) {
            return unsafe(name,
                          result.top + "/" + rel,
                          "differs from '" + result.top + "/" + it->second +
                              "' only by case or accents: the two are one file on a "
                              "case-insensitive or normalising filesystem");
        }
        return Ok{};
    }

    Status ensure_parents(const std::vector<std::string>& segs, std::size_t end) {
        for (std::size_t i = 1; i < end; ++i) {
            std::string prefix = join(segs, 1, i + 1);
            auto it = seen.find(prefix);
            if (it != seen.end()) {
                if (it->second != Entry::Type::directory) {
                    return unsafe(name,
                                  join(segs, 0, segs.size()),
                                  "a path through '" + prefix + "', which is not a directory");
                }
                continue;
            }
            Fd parent(open_dir_beneath(root_fd, join(segs, 1, i)));
            if (parent.get() < 0) {
                return fs_error("cannot open directory", prefix, errno);
            }
            CUDAENV_TRY(check_twin(prefix));
            if (::mkdirat(parent.get(), segs[i].c_str(), 0755) != 0) {
                return fs_error("cannot create directory", prefix, errno);
            }
            seen[prefix] = Entry::Type::directory;
            result.entries.push_back({Entry::Type::directory, prefix, {}, 0, false});
        }
        return Ok{};
    }

    /// Selected extraction: the raw name is judged as it is, then mapped. Gives the path to
    /// write under the synthetic top (`segs`), or an empty string to skip the member.
    Result<std::string> select(const std::string& rawname) const {
        std::string_view n = rawname;
        while (n.size() >= 2 && n.substr(0, 2) == "./") {
            n.remove_prefix(2);
        }
        if (n.empty() || n == "." || n == "./") {
            return std::string(); // the payload's own top folder
        }
        std::vector<std::string> raw_segs;
        if (auto why = split_name(n, raw_segs)) {
            return unsafe(name, rawname, *why);
        }
        auto mapped = (*map)(n);
        if (!mapped || mapped->empty()) {
            return std::string();
        }
        return expected_top + "/" + *mapped;
    }

    Status add(struct archive* a, struct archive_entry* e) {
        const char* raw = sys::archive().entry_pathname(e);
        std::string rawname = raw ? raw : "";
        std::vector<std::string> segs;
        if (map) {
            std::string mapped = CUDAENV_TRY(select(rawname));
            if (mapped.empty()) {
                return Ok{}; // not taken: libarchive reads past its data
            }
            if (auto why = split_name(mapped, segs)) {
                return unsafe(name, rawname, "maps to a bad path: " + *why);
            }
        } else if (auto why = split_name(rawname, segs)) {
            return unsafe(name, rawname, *why);
        }
        if (rawname.size() > limits.max_path) {
            return unsafe(name, rawname.substr(0, 80) + "...", "path longer than the limit");
        }
        if (auto why = too_long(segs)) {
            return unsafe(name, rawname.substr(0, 80) + "...", *why);
        }
        if (result.entries.size() >= limits.max_entries) {
            return unsafe(name,
                          rawname,
                          "more entries than the limit of " + std::to_string(limits.max_entries));
        }
        if (result.top.empty()) {
            result.top = segs[0];
            if (!expected_top.empty() && result.top != expected_top) {
                return unsafe(
                    name, rawname, "the archive's top directory should be '" + expected_top + "'");
            }
        } else if (segs[0] != result.top) {
            return unsafe(
                name, rawname, "outside the archive's top directory '" + result.top + "'");
        }
        const char* hardlink = sys::archive().entry_hardlink(e);
        mode_t type = sys::archive().entry_filetype(e);
        std::string rel = join(segs, 1, segs.size());
        if (rel.empty()) {
            if (type != AE_IFDIR || hardlink) {
                return unsafe(name, rawname, "the top of the archive must be a directory");
            }
            return Ok{};
        }
        if (seen.count(rel)) {
            return unsafe(name, rawname, "appears twice in the archive");
        }
        CUDAENV_TRY(ensure_parents(segs, segs.size() - 1));
        CUDAENV_TRY(check_twin(rel));
        Fd parent(open_dir_beneath(root_fd, join(segs, 1, segs.size() - 1)));
        if (parent.get() < 0) {
            return fs_error("cannot open directory for", rel, errno);
        }
        const std::string& leaf = segs.back();
        bool x = (sys::archive().entry_perm(e) & 0111) != 0;

        if (hardlink) {
            std::string link_name = hardlink;
            if (map) {
                link_name = CUDAENV_TRY(select(link_name));
                if (link_name.empty()) {
                    return Ok{}; // a link to a member not taken is not taken either
                }
            }
            std::vector<std::string> tsegs;
            if (auto why = split_name(link_name, tsegs)) {
                return unsafe(name, rawname, "hard link target: " + *why);
            }
            std::string trel = tsegs[0] == result.top ? join(tsegs, 1, tsegs.size()) : "";
            auto it = seen.find(trel);
            if (trel.empty() || it == seen.end() || it->second != Entry::Type::file) {
                return unsafe(name,
                              rawname,
                              "hard link to '" + std::string(hardlink) +
                                  "', which is not an earlier file of this archive");
            }
            if (sys::archive().entry_size_is_set(e) && sys::archive().entry_size(e) > 0) {
                return unsafe(name, rawname, "hard link that carries data");
            }
            if (::linkat(root_fd, trel.c_str(), parent.get(), leaf.c_str(), 0) != 0) {
                return fs_error("cannot link", rel, errno);
            }
            seen[rel] = Entry::Type::file;
            exec[rel] = exec[trel];
            result.entries.push_back({Entry::Type::file, rel, {}, 0, exec[trel]});
            return Ok{};
        }
        switch (type) {
        case AE_IFDIR:
            if (::mkdirat(parent.get(), leaf.c_str(), 0755) != 0) {
                return fs_error("cannot create directory", rel, errno);
            }
            seen[rel] = Entry::Type::directory;
            result.entries.push_back({Entry::Type::directory, rel, {}, 0, false});
            return Ok{};
        case AE_IFLNK: {
            const char* target = sys::archive().entry_symlink(e);
            std::string t = target ? target : "";
            std::vector<std::string> dir(segs.begin() + 1, segs.end() - 1);
            if (t.size() > limits.max_path) {
                return unsafe(name, rawname, "symlink target longer than the limit");
            }
            if (auto why = check_link_target(t, dir)) {
                return unsafe(name, rawname, *why + " ('" + t + "')");
            }
            std::vector<std::string> target_segs;
            for (std::size_t at = 0; at <= t.size();) {
                auto slash = std::min(t.find('/', at), t.size());
                target_segs.emplace_back(t.substr(at, slash - at));
                at = slash + 1;
            }
            if (auto why = too_long(target_segs)) {
                return unsafe(name, rawname, "symlink target with " + *why);
            }
            if (::symlinkat(t.c_str(), parent.get(), leaf.c_str()) != 0) {
                return fs_error("cannot create symlink", rel, errno);
            }
            seen[rel] = Entry::Type::symlink;
            result.entries.push_back({Entry::Type::symlink, rel, t, 0, false});
            return Ok{};
        }
        case AE_IFREG:
            return add_file(a, e, parent.get(), rel, leaf, x);
        default:
            return unsafe(name, rawname, "not a file, directory or link (device, FIFO or socket)");
        }
    }

    Status add_file(struct archive* a,
                    struct archive_entry* e,
                    int parent_fd,
                    const std::string& rel,
                    const std::string& leaf,
                    bool x) {
        std::int64_t declared = sys::archive().entry_size(e);
        if (declared < 0 || static_cast<std::uint64_t>(declared) > limits.max_entry_bytes) {
            return unsafe(name, rel, "larger than the per-file limit");
        }
        if (result.bytes + static_cast<std::uint64_t>(declared) > limits.max_total_bytes) {
            return unsafe(name,
                          rel,
                          "the archive unpacks to more than the limit of " +
                              std::to_string(limits.max_total_bytes) + " bytes");
        }
        mode_t mode = x ? 0755 : 0644;
        Fd out(::openat(
            parent_fd, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
        if (out.get() < 0) {
            return fs_error("cannot create", rel, errno);
        }
        std::uint64_t got = 0;     // the file's length so far (data and holes)
        std::uint64_t flushed = 0; // writeback started up to here
        while (true) {
            // Straight from libarchive's decompression buffer: no copy into ours (it was 5% of
            // an install's CPU).
            const void* block = nullptr;
            std::size_t n = 0;
            la_int64_t offset = 0;
            int rc = sys::archive().read_data_block(a, &block, &n, &offset);
            if (rc == ARCHIVE_EOF) {
                break;
            }
            if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
                return broken(name, "'" + rel + "': " + reason(a));
            }
            if (offset < 0 || static_cast<std::uint64_t>(offset) < got) {
                return broken(name, "'" + rel + "': data out of order");
            }
            std::uint64_t end = static_cast<std::uint64_t>(offset) + n;
            if (end > static_cast<std::uint64_t>(declared) ||
                result.bytes + end > limits.max_total_bytes) {
                return unsafe(name, rel, "more data than its header declares");
            }
            if (static_cast<std::uint64_t>(offset) > got &&
                ::lseek(out.get(), static_cast<off_t>(offset), SEEK_SET) < 0) {
                return fs_error("cannot seek in", rel, errno); // a sparse file's hole
            }
            const char* data = static_cast<const char*>(block);
            std::size_t off = 0;
            while (off < n) {
                ssize_t w = ::write(out.get(), data + off, n - off);
                if (w < 0) {
                    if (errno == EINTR) {
                        continue;
                    }
                    return fs_error("cannot write", rel, errno);
                }
                off += static_cast<std::size_t>(w);
            }
            got = end;
            // Start writeback while decoding goes on (as dpkg does), so that the sync before
            // publishing finds little left to write instead of the whole archive.
            if (got - flushed >= k_writeback_chunk) {
                start_writeback(out.get(), flushed, got - flushed);
                flushed = got;
            }
        }
        if (got < static_cast<std::uint64_t>(declared) &&
            sys::archive().entry_sparse_count(e) > 0 &&
            ::ftruncate(out.get(), static_cast<off_t>(declared)) == 0) {
            got = static_cast<std::uint64_t>(declared); // a sparse file ending in a hole
        }
        if (got > flushed) {
            start_writeback(out.get(), flushed, got - flushed);
        }
        if (got != static_cast<std::uint64_t>(declared)) {
            return broken(name, "'" + rel + "' is shorter than its header says (truncated)");
        }
        if (::fchmod(out.get(), mode) != 0) {
            return fs_error("cannot chmod", rel, errno);
        }
        result.bytes += got;
        seen[rel] = Entry::Type::file;
        exec[rel] = x;
        result.entries.push_back({Entry::Type::file, rel, {}, got, x});
        if (result.entries.size() == 3) {
            failpoint::hit("extract-midway");
        }
        return Ok{};
    }
};

} // namespace

namespace {

/// One archive being read: its byte source and decoder, and libarchive over them.
struct Reader {
    XzSource xz; // the sources outlive the archive that reads from them
    PlainSource plain;
    ReadArchive ra;
    Compression compression = Compression::none;

    Reader() = default;
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

    /// Starts reading `bytes` as `c`; an error is the reason it cannot.
    std::optional<std::string> open(ByteReader bytes, Compression c) {
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
        } else {
            plain.read = std::move(bytes);
            opened =
                sys::archive().read_open(ra.a, &plain, nullptr, &PlainSource::read_cb, nullptr);
        }
        if (opened != ARCHIVE_OK) {
            return reason();
        }
        return std::nullopt;
    }

    const std::string& source_error() const {
        return compression == Compression::xz ? xz.error : plain.error;
    }

    std::string reason() const {
        if (!source_error().empty()) {
            return source_error();
        }
        const char* why = sys::archive().error_string(ra.a);
        return why ? why : "unreadable";
    }

    /// The next entry: an entry, nullptr at the end, or why the archive cannot be read. The
    /// first entry also proves the compression is the one expected.
    Result<struct archive_entry*> next(const std::string& name, bool& checked_format) {
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
            // xz was decoded by us (what libarchive sees is the plain tar)
            const auto [want, text] =
                compression == Compression::gzip
                    ? std::pair{ARCHIVE_FILTER_GZIP, "gzip-compressed"}
                    : std::pair{ARCHIVE_FILTER_NONE,
                                compression == Compression::xz ? "xz-compressed" : "a plain tar"};
            if (sys::archive().filter_code(ra.a, 0) != want) {
                return broken(name, std::string("not ") + text);
            }
        }
        return e;
    }
};

/// Extracts every entry of `r` through `x`, then checks the tree's links as the kernel
/// follows them.
Result<Extracted> drain(Reader& r, Extractor& x, const fs::path& dest) {
    bool checked_format = false;
    while (true) {
        struct archive_entry* e = CUDAENV_TRY(r.next(x.name, checked_format));
        if (!e) {
            break;
        }
        CUDAENV_TRY(x.add(r.ra.a, e));
    }
    // Text said every link stays inside; the kernel follows links through links.
    if (auto bad = find_bad_link(dest)) {
        return unsafe(x.name, x.result.top + "/" + bad->path, bad->reason());
    }
    return std::move(x.result);
}

ByteReader range_reader(FileRange& file) {
    return [&file](void* buf, std::size_t n) { return file.read(buf, n); };
}

Result<Extracted> run(const fs::path& path,
                      Slice slice,
                      const fs::path& dest,
                      Compression compression,
                      const std::string& expected_top,
                      const MemberMap* map,
                      const Limits& limits) {
    CUDAENV_TRY(sys::load(sys::k_archive));
    std::string name = slice.name.empty() ? path.filename().string() : slice.name;
    FileRange file;
    if (auto why = file.open(path, slice)) {
        return broken(name, *why);
    }
    Reader r;
    if (auto why = r.open(range_reader(file), compression)) {
        return broken(name, *why);
    }
    Fd root(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
    if (root.get() < 0) {
        return fs_error("cannot open", dest.string(), errno);
    }
    Extractor x{name, expected_top, root.get(), limits, &r.source_error(), map, {}, {}, {}, {}};
    auto out = CUDAENV_TRY(drain(r, x, dest));
    if (auto why = file.read_rest()) {
        return broken(name, *why);
    }
    return out;
}

/// The bytes of an outer archive's current member from `skip` on: first what was already read
/// (`head`), then the rest of the member's data.
struct MemberBytes {
    struct archive* outer = nullptr;
    std::string head;
    std::size_t pos = 0;

    ssize_t read(void* buf, std::size_t n) {
        if (pos < head.size()) {
            std::size_t k = std::min(n, head.size() - pos);
            std::memcpy(buf, head.data() + pos, k);
            pos += k;
            return static_cast<ssize_t>(k);
        }
        la_ssize_t got = sys::archive().read_data(outer, buf, n);
        if (got < 0) {
            errno = EIO;
            return -1;
        }
        return static_cast<ssize_t>(got);
    }
};

} // namespace

Result<Extracted> extract_nested(const fs::path& file,
                                 Slice slice,
                                 const fs::path& dest,
                                 Compression compression,
                                 const std::function<bool(std::string_view)>& pick,
                                 const MemberMap& map,
                                 const Limits& limits) {
    CUDAENV_TRY(sys::load(sys::k_archive));
    std::string name = slice.name.empty() ? file.filename().string() : slice.name;
    if (slice.length == 0) {
        return broken(name, "empty payload");
    }
    FileRange range;
    if (auto why = range.open(file, slice)) {
        return broken(name, *why);
    }
    Reader outer;
    if (auto why = outer.open(range_reader(range), compression)) {
        return broken(name, *why);
    }
    bool checked_format = false;
    while (true) {
        struct archive_entry* e = CUDAENV_TRY(outer.next(name, checked_format));
        if (!e) {
            return Error(ErrorCode::unsafe_archive,
                         "the payload of '" + name + "' holds no installer cudaenv looks for")
                .with_hint("nothing was installed; the file or the mirror serving it is bad");
        }
        const char* raw = sys::archive().entry_pathname(e);
        std::string_view member = raw ? raw : "";
        while (member.size() >= 2 && member.substr(0, 2) == "./") {
            member.remove_prefix(2);
        }
        if (!pick(member)) {
            continue;
        }
        std::string inner_name = printable(std::string(member));
        if (sys::archive().entry_filetype(e) != AE_IFREG || sys::archive().entry_hardlink(e)) {
            return unsafe(name, inner_name, "the nested installer is not a regular file");
        }
        std::int64_t size = sys::archive().entry_size(e);
        if (size <= 0) {
            return broken(name, "'" + inner_name + "' is empty");
        }
        // its header as data, as for the outer runfile
        RunfileLimits rl;
        MemberBytes bytes{outer.ra.a, std::string(), 0};
        bytes.head.resize(static_cast<std::size_t>(
            std::min<std::uint64_t>(static_cast<std::uint64_t>(size), rl.max_header_bytes + 512)));
        std::size_t got = 0;
        while (got < bytes.head.size()) {
            la_ssize_t n = sys::archive().read_data(
                outer.ra.a, bytes.head.data() + got, bytes.head.size() - got);
            if (n < 0) {
                return broken(name, "'" + inner_name + "': " + outer.reason());
            }
            if (n == 0) {
                break;
            }
            got += static_cast<std::size_t>(n);
        }
        bytes.head.resize(got);
        auto header = CUDAENV_TRY(parse_runfile_header(
            bytes.head, static_cast<std::uint64_t>(size), name + ": " + inner_name, rl));
        if (header.payload_offset > bytes.head.size()) {
            return unsafe(name, inner_name, "its header is longer than cudaenv reads");
        }
        bytes.pos = static_cast<std::size_t>(header.payload_offset);
        // the nested installer's own checksums, as for the outer one
        PayloadChecksums sums(header);
        auto read_inner = [&bytes, &sums](void* buf, std::size_t n) {
            ssize_t k = bytes.read(buf, n);
            if (k > 0) {
                sums.update(buf, static_cast<std::size_t>(k));
            }
            return k;
        };
        Reader inner;
        if (auto why = inner.open(read_inner, header.compression)) {
            return broken(name, inner_name + ": " + *why);
        }
        Fd root(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
        if (root.get() < 0) {
            return fs_error("cannot open", dest.string(), errno);
        }
        Extractor x{name + ": " + inner_name,
                    "payload",
                    root.get(),
                    limits,
                    &inner.source_error(),
                    &map,
                    {},
                    {},
                    {},
                    {}};
        auto out = CUDAENV_TRY(drain(inner, x, dest));
        out.top.clear();
        for (std::vector<char> buf(sums.any() ? std::size_t{1} << 16 : 0); !buf.empty();) {
            ssize_t n = read_inner(buf.data(), buf.size());
            if (n < 0) {
                return broken(name, "'" + inner_name + "': " + outer.reason());
            }
            if (n == 0) {
                break;
            }
        }
        CUDAENV_TRY(sums.verify(name + ": " + inner_name));
        if (auto why = range.read_rest()) {
            return broken(name, *why);
        }
        return out;
    }
}

Result<Extracted> extract(const fs::path& path,
                          const fs::path& dest,
                          Compression compression,
                          const std::string& expected_top,
                          const Limits& limits) {
    return run(path, Slice{}, dest, compression, expected_top, nullptr, limits);
}

Result<Extracted> extract_selected(const fs::path& file,
                                   Slice slice,
                                   const fs::path& dest,
                                   Compression compression,
                                   const MemberMap& map,
                                   const Limits& limits) {
    if (slice.length == 0) {
        return broken(slice.name.empty() ? file.filename().string() : slice.name, "empty payload");
    }
    auto x = CUDAENV_TRY(run(file, slice, dest, compression, "payload", &map, limits));
    x.top.clear();
    return x;
}

} // namespace cudaenv::archive
