// Small file helpers for cudaenv's own files (not the system under the sysroot).
#pragma once

#include "error.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace cudaenv {

/// A file descriptor closed when it goes out of scope (ccache's Fd): every descriptor cudaenv
/// opens itself is held by one.
class Fd {
  public:
    Fd() = default;

    explicit Fd(int fd) : m_fd(fd) {}

    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;

    Fd(Fd&& o) noexcept : m_fd(o.release()) {}

    Fd& operator=(Fd&& o) noexcept {
        reset(o.release());
        return *this;
    }

    ~Fd() { reset(-1); }

    int get() const { return m_fd; }

    bool valid() const { return m_fd >= 0; }

    int release() {
        int fd = m_fd;
        m_fd = -1;
        return fd;
    }

    void reset(int fd);
    /// Closes now and reports the result (close can report a deferred write error).
    int close();

  private:
    int m_fd = -1;
};

/// Removes a directory tree without following links (a link is removed, not its target); errors
/// are ignored (best effort: a sweep finds what is left).
void remove_tree(const std::filesystem::path& p);

/// A private (0700) folder made for a while under `parent` (ccache's TemporaryFile, for a
/// folder): a unique name "<hint>-XXXXXX", removed with everything in it when the TempDir goes
/// out of scope, on every early return included. Publishing it by rename ends that: release().
class TempDir {
  public:
    /// ErrorCode::filesystem names `parent` when the folder cannot be made.
    static Result<TempDir> make(const std::filesystem::path& parent, std::string_view hint);

    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    TempDir(TempDir&& o) noexcept : m_path(std::move(o.m_path)) { o.m_path.clear(); }

    TempDir& operator=(TempDir&& o) noexcept;
    ~TempDir();

    const std::filesystem::path& path() const { return m_path; }

    /// The folder is no longer this object's to remove (it was renamed into place).
    void release() { m_path.clear(); }

  private:
    explicit TempDir(std::filesystem::path p) : m_path(std::move(p)) {}

    std::filesystem::path m_path;
};

/// Reads a whole file. ErrorCode::filesystem names the path and the errno text.
Result<std::string> read_text_file(const std::filesystem::path& path);

/// At most the first `max_bytes` of a file (a machine's file that may be anything: a
/// version.py, a METADATA, /proc); none when it cannot be opened.
std::optional<std::string> read_file_prefix(const std::filesystem::path& path,
                                            std::size_t max_bytes);

/// Reads the rest of an open file; `shown` names it in errors.
Result<std::string> read_text_fd(int fd, const std::filesystem::path& shown);

/// The system calls an atomic write makes (ninja's DiskInterface): the seam through which unit
/// tests fail any one of them (ENOSPC on write, EIO on fsync, EXDEV on rename, short writes,
/// EINTR) and check that the old file survives and no temporary file is left.
/// Names are relative to an open folder (`dir`), as openat(2), renameat(2) and unlinkat(2) take
/// them: a write never resolves a path twice.
class Disk {
  public:
    virtual ~Disk() = default;
    virtual int open(int dir, const char* name, int flags, unsigned mode) const;
    virtual long write(int fd, const void* data, std::size_t size) const;
    virtual int fchmod(int fd, unsigned mode) const;
    virtual int fsync(int fd) const;
    virtual int close(int fd) const;
    virtual int rename(int dir, const char* from, const char* to) const;
    virtual int unlink(int dir, const char* name) const;
};

/// The real system calls.
const Disk& real_disk();

/// Writes `content` to `path` so that readers see the old file or the new one, never a part:
/// a temporary file in the same directory, fsync, rename over `path`, fsync of the directory.
/// The new file gets `mode` regardless of the umask. On any error the temporary file is gone and
/// `path` is as it was.
Status write_file_atomic(const std::filesystem::path& path,
                         std::string_view content,
                         unsigned mode = 0644,
                         const Disk& disk = real_disk());

/// write_file_atomic for the file `name` in the open folder `dir` (`shown` is the folder's path,
/// for messages): nothing but `name` itself and its temporary file is resolved, never a link.
Status write_file_atomic_at(int dir,
                            const std::filesystem::path& shown,
                            const std::string& name,
                            std::string_view content,
                            unsigned mode = 0644,
                            const Disk& disk = real_disk());

/// Creates `dir` and every missing folder above it, each with exactly `mode` whatever the umask
/// (a strict umask must not lock other users out of what cudaenv makes for all of them). Folders
/// that exist keep their mode. Errors: filesystem.
Status make_dirs(const std::filesystem::path& dir, unsigned mode = 0755);

/// A folder cudaenv writes below (a mirror, a module tree): opened once, and every path below it
/// resolved one folder at a time relative to the folder above with O_NOFOLLOW, as the extractor
/// does. A link anywhere below the base -- cudaenv makes none there -- is refused, never followed
/// (ErrorCode::unsafe_archive, exit 5), so nothing is ever written outside the base. The base
/// itself is the path the user gave and is resolved as given.
class Contained {
  public:
    /// Opens `base`, made (0755 whatever the umask) when missing and `create`.
    static Result<Contained> open(const std::filesystem::path& base, bool create);

    const std::filesystem::path& path() const { return m_path; }

    int fd() const { return m_fd.get(); }

    /// The folder `rel` below the base ("" is the base itself), each missing folder made 0755
    /// when `create`. `rel` must be relative, without "", "." or ".." parts (exit 5 otherwise).
    Result<Fd> dir(const std::filesystem::path& rel, bool create) const;

    /// The regular file `rel` opened for reading; a link or anything else is refused.
    Result<Fd> open_file(const std::filesystem::path& rel) const;

    /// write_file_atomic for `rel`, its folders made as dir() makes them.
    Status write_file(const std::filesystem::path& rel,
                      std::string_view content,
                      unsigned mode = 0644) const;

  private:
    std::filesystem::path m_path;
    Fd m_fd;
};

/// "errno text" for the current errno, as "No such file or directory".
std::string errno_text(int err);

/// 16 hex digits from the kernel's random source: temporary names nobody can predict (and so
/// plant something at beforehand).
std::string random_hex();

/// A temporary name cudaenv made for `base` in its folder: "." + base + ".tmp-" + 16 hex digits.
std::string temp_name(std::string_view base);

/// True for exactly the names temp_name(base) makes: a sweep removes only those.
bool is_temp_name(std::string_view name, std::string_view base);

/// After a kill -9: removes the regular files in `dir` named temp_name(base) and owned by this
/// user (never a link, a folder or another user's file). Best effort.
void sweep_temp_files(const std::filesystem::path& dir, std::string_view base);

} // namespace cudaenv
