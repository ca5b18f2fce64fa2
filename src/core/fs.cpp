#include "fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

namespace cudaenv {

void Fd::reset(int fd) {
    if (m_fd >= 0) {
        ::close(m_fd);
    }
    m_fd = fd;
}

int Fd::close() {
    int rc = m_fd >= 0 ? ::close(m_fd) : 0;
    m_fd = -1;
    return rc;
}

void remove_tree(const std::filesystem::path& p) {
    std::error_code ec;
    std::filesystem::remove_all(p, ec); // remove_all never follows a link
}

Result<TempDir> TempDir::make(const std::filesystem::path& parent, std::string_view hint) {
    std::string tmpl = (parent / (std::string(hint) + "-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data())) {
        return Error(ErrorCode::filesystem,
                     "cannot create a temporary folder in '" + parent.string() +
                         "': " + errno_text(errno));
    }
    return TempDir(std::filesystem::path(tmpl));
}

TempDir& TempDir::operator=(TempDir&& o) noexcept {
    if (this != &o) {
        if (!m_path.empty()) {
            remove_tree(m_path);
        }
        m_path = std::move(o.m_path);
        o.m_path.clear();
    }
    return *this;
}

TempDir::~TempDir() {
    if (!m_path.empty()) {
        remove_tree(m_path);
    }
}

std::string errno_text(int err) {
    return std::strerror(err);
}

namespace {

Error fs_error(const std::string& what, const std::filesystem::path& path, int err) {
    return Error(ErrorCode::filesystem, what + " '" + path.string() + "': " + errno_text(err));
}

} // namespace

std::optional<std::string> read_file_prefix(const std::filesystem::path& path,
                                            std::size_t max_bytes) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
        return std::nullopt;
    }
    // what is there, up to the bound: a bound far above the usual size costs nothing (the shim
    // reads .cuda-version this way at every call)
    std::string out;
    char buf[16384];
    while (out.size() < max_bytes) {
        ssize_t n = ::read(fd.get(), buf, std::min(sizeof buf, max_bytes - out.size()));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

Result<std::string> read_text_file(const std::filesystem::path& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        return fs_error("cannot open", path, errno);
    }
    return read_text_fd(fd.get(), path);
}

Result<std::string> read_text_fd(int fd, const std::filesystem::path& shown) {
    std::string out;
    char buf[65536];
    while (true) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return fs_error("cannot read", shown, errno);
        }
        if (n == 0) {
            break;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

std::string random_hex() {
    std::random_device rd; // getrandom(2)
    std::uint64_t v = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string temp_name(std::string_view base) {
    return "." + std::string(base) + ".tmp-" + random_hex();
}

bool is_temp_name(std::string_view name, std::string_view base) {
    std::string prefix = "." + std::string(base) + ".tmp-";
    if (name.size() != prefix.size() + 16 || name.substr(0, prefix.size()) != prefix) {
        return false;
    }
    return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()),
                       name.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

void sweep_temp_files(const std::filesystem::path& dir, std::string_view base) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        struct stat st {};

        if (is_temp_name(it->path().filename().string(), base) &&
            ::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_uid == ::geteuid()) {
            ::unlink(it->path().c_str());
        }
    }
}

int Disk::open(int dir, const char* name, int flags, unsigned mode) const {
    return ::openat(dir, name, flags, static_cast<mode_t>(mode));
}

long Disk::write(int fd, const void* data, std::size_t size) const {
    return ::write(fd, data, size);
}

int Disk::fchmod(int fd, unsigned mode) const {
    return ::fchmod(fd, static_cast<mode_t>(mode));
}

int Disk::fsync(int fd) const {
    return ::fsync(fd);
}

int Disk::close(int fd) const {
    return ::close(fd);
}

int Disk::rename(int dir, const char* from, const char* to) const {
    return ::renameat(dir, from, dir, to);
}

int Disk::unlink(int dir, const char* name) const {
    return ::unlinkat(dir, name, 0);
}

const Disk& real_disk() {
    static const Disk disk;
    return disk;
}

Status write_file_atomic(const std::filesystem::path& path,
                         std::string_view content,
                         unsigned mode,
                         const Disk& disk) {
    auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dfd.valid()) {
        return fs_error("cannot open", dir, errno);
    }
    return write_file_atomic_at(dfd.get(), dir, path.filename().string(), content, mode, disk);
}

Status write_file_atomic_at(int dir,
                            const std::filesystem::path& shown,
                            const std::string& name,
                            std::string_view content,
                            unsigned mode,
                            const Disk& disk) {
    std::string tmp;
    int fd = -1;
    // An unpredictable name, created exclusively; a name that is taken (planted, or a one in
    // 2^64 clash) is never touched: another name is tried.
    for (int tries = 0; fd < 0; ++tries) {
        tmp = temp_name(name);
        fd =
            disk.open(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0 && (errno != EEXIST || tries >= 16)) {
            return fs_error("cannot create", shown / tmp, errno);
        }
    }
    auto fail = [&](const char* what) {
        int err = errno;
        if (fd >= 0) {
            disk.close(fd);
        }
        disk.unlink(dir, tmp.c_str());
        return fs_error(what, shown / tmp, err);
    };
    std::size_t off = 0;
    while (off < content.size()) {
        long n = disk.write(fd, content.data() + off, content.size() - off);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return fail("cannot write");
        }
        if (n == 0) {
            errno = ENOSPC; // write(2) returning 0 for a non-empty buffer: no room
            return fail("cannot write");
        }
        off += static_cast<std::size_t>(n);
    }
    if (disk.fchmod(fd, mode) != 0) {
        return fail("cannot chmod");
    }
    if (disk.fsync(fd) != 0) {
        return fail("cannot fsync");
    }
    int closed = disk.close(fd);
    fd = -1;
    if (closed != 0) {
        return fail("cannot close");
    }
    if (disk.rename(dir, tmp.c_str(), name.c_str()) != 0) {
        return fail("cannot rename into place");
    }
    ::fsync(dir);
    return Ok{};
}

Status make_dirs(const std::filesystem::path& dir, unsigned mode) {
    std::vector<std::filesystem::path> missing;
    for (auto p = dir.lexically_normal(); !p.empty(); p = p.parent_path()) {
        struct stat st {};

        if (::stat(p.c_str(), &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                return fs_error("cannot create", dir, ENOTDIR);
            }
            break;
        }
        if (errno != ENOENT) {
            return fs_error("cannot create", dir, errno);
        }
        missing.push_back(p);
        if (p == p.parent_path() || !p.has_relative_path()) {
            break;
        }
    }
    for (auto p = missing.rbegin(); p != missing.rend(); ++p) {
        if (::mkdir(p->c_str(), static_cast<mode_t>(mode)) == 0) {
            // the umask took bits away; the mode is set on what was opened, never through a link
            // swapped in meanwhile
            if (Fd fd(::open(p->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                fd.valid()) {
                ::fchmod(fd.get(), static_cast<mode_t>(mode));
            }
        } else if (errno != EEXIST) {
            return fs_error("cannot create", *p, errno);
        }
    }
    return Ok{};
}

namespace {

/// "" for a path below a base that may be walked, else why not.
std::string walkable(const std::filesystem::path& rel) {
    if (rel.is_absolute()) {
        return "an absolute path";
    }
    for (const auto& part : rel) {
        auto s = part.string();
        if (s.empty() || s == "." || s == "..") {
            return "a path part is '" + s + "'";
        }
    }
    return {};
}

Error planted_link(const std::filesystem::path& at, int parent, const std::string& name) {
    char target[4096];
    ssize_t n = ::readlinkat(parent, name.c_str(), target, sizeof target - 1);
    std::string to = n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "?";
    return Error(ErrorCode::unsafe_archive,
                 "refusing to write through '" + at.string() + "': a link (to '" + printable(to) +
                     "') that cudaenv did not make")
        .with_hint("remove the link, or give a folder that holds none");
}

} // namespace

Result<Contained> Contained::open(const std::filesystem::path& base, bool create) {
    if (create) {
        CUDAENV_TRY(make_dirs(base));
    }
    Contained c;
    c.m_path = base;
    c.m_fd = Fd(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!c.m_fd.valid()) {
        return fs_error("cannot open", base, errno);
    }
    return c;
}

Result<Fd> Contained::dir(const std::filesystem::path& rel, bool create) const {
    if (auto why = walkable(rel); !why.empty()) {
        return Error(ErrorCode::unsafe_archive,
                     "refusing to write '" + printable(rel.string()) + "' below '" +
                         m_path.string() + "': " + why);
    }
    Fd at(::dup(m_fd.get()));
    std::filesystem::path shown = m_path;
    for (const auto& part : rel) {
        std::string name = part.string();
        shown /= name;
        for (int tries = 0;; ++tries) {
            Fd next(
                ::openat(at.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (next.valid()) {
                at = std::move(next);
                break;
            }
            int err = errno;

            struct stat st {};

            if (::fstatat(at.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISLNK(st.st_mode)) {
                return planted_link(shown, at.get(), name);
            }
            if (err != ENOENT || !create || tries > 0) {
                return fs_error("cannot open", shown, err);
            }
            if (::mkdirat(at.get(), name.c_str(), 0755) != 0 && errno != EEXIST) {
                return fs_error("cannot create", shown, errno);
            }
            Fd made(
                ::openat(at.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (made.valid()) {
                ::fchmod(made.get(), 0755); // whatever the umask: a web server reads a mirror
            }
        }
    }
    return at;
}

Result<Fd> Contained::open_file(const std::filesystem::path& rel) const {
    auto dfd = CUDAENV_TRY(dir(rel.parent_path(), false));
    std::string name = rel.filename().string();
    Fd fd(::openat(dfd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) {
        int err = errno;

        struct stat st {};

        if (::fstatat(dfd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode)) {
            return planted_link(m_path / rel, dfd.get(), name);
        }
        return fs_error("cannot open", m_path / rel, err);
    }

    struct stat st {};

    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return Error(ErrorCode::filesystem,
                     "'" + (m_path / rel).string() + "' is not a regular file");
    }
    return fd;
}

Status Contained::write_file(const std::filesystem::path& rel,
                             std::string_view content,
                             unsigned mode) const {
    auto dfd = CUDAENV_TRY(dir(rel.parent_path(), true));
    return write_file_atomic_at(
        dfd.get(), m_path / rel.parent_path(), rel.filename().string(), content, mode);
}

} // namespace cudaenv
