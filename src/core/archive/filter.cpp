// The filter and the writer (extract.hpp's rules): every entry's raw name and link target judged,
// then written with openat/O_NOFOLLOW/O_EXCL below the destination, never through a link.
#include "../failpoint.hpp"
#include "../sha256.hpp"
#include "links.hpp"
#include "names.hpp"
#include "reader.hpp"

#include <sys/syscall.h>

#include <cstdio>
#include <cstring>
#include <linux/openat2.h>
#include <map>

namespace cudaenv::archive::detail {

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

namespace {

/// Writeback is started every this many bytes of a file.
constexpr std::uint64_t k_writeback_chunk = 8u << 20;

/// Asks the kernel to start writing a range of a file to disk, without waiting for it; a
/// failure only loses the head start (the sync before publishing still covers the data).
void start_writeback(int fd, std::uint64_t offset, std::uint64_t length) {
    (void)::sync_file_range(
        fd, static_cast<off64_t>(offset), static_cast<off64_t>(length), SYNC_FILE_RANGE_WRITE);
}

/// Feeds `n` zero bytes to `h`: a sparse file's hole reads as zeros.
void hash_zeros(Sha256& h, std::uint64_t n) {
    static const char zeros[65536] = {};
    while (n > 0) {
        auto chunk = static_cast<std::size_t>(std::min<std::uint64_t>(n, sizeof zeros));
        h.update(zeros, chunk);
        n -= chunk;
    }
}

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
    std::map<std::string, std::size_t> files;  ///< regular files: their index in result.entries
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
            result.entries.push_back({Entry::Type::directory, prefix, {}, 0, false, {}});
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
            // the same file under another name: its size, mode and hash are the target's
            Entry linked = result.entries[files.at(trel)];
            linked.path = rel;
            files[rel] = result.entries.size();
            result.entries.push_back(std::move(linked));
            return Ok{};
        }
        switch (type) {
        case AE_IFDIR:
            if (::mkdirat(parent.get(), leaf.c_str(), 0755) != 0) {
                return fs_error("cannot create directory", rel, errno);
            }
            seen[rel] = Entry::Type::directory;
            result.entries.push_back({Entry::Type::directory, rel, {}, 0, false, {}});
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
            result.entries.push_back({Entry::Type::symlink, rel, t, 0, false, {}});
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
        // The store record's per-file hash, from the bytes as they are written: the file is
        // never read back (docs/store.md).
        Sha256 hash;
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
            if (static_cast<std::uint64_t>(offset) > got) {
                if (::lseek(out.get(), static_cast<off_t>(offset), SEEK_SET) < 0) {
                    return fs_error("cannot seek in", rel, errno); // a sparse file's hole
                }
                hash_zeros(hash, static_cast<std::uint64_t>(offset) - got);
            }
            hash.update(block, n);
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
            hash_zeros(hash, static_cast<std::uint64_t>(declared) - got);
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
        files[rel] = result.entries.size();
        result.entries.push_back({Entry::Type::file, rel, {}, got, x, hash.hex_digest()});
        if (result.entries.size() == 3) {
            failpoint::hit("extract-midway");
        }
        return Ok{};
    }
};

} // namespace

Result<Fd> open_destination(const fs::path& dest) {
    Fd root(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
    if (root.get() < 0) {
        return fs_error("cannot open", dest.string(), errno);
    }
    return root;
}

Result<Extracted> drain(Reader& r, const Target& t, const fs::path& dest) {
    Extractor x{
        t.name, t.expected_top, t.root_fd, t.limits, &r.source_error(), t.map, {}, {}, {}, {}};
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

} // namespace cudaenv::archive::detail
