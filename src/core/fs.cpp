#include "fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
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

std::string errno_text(int err) {
    return std::strerror(err);
}

namespace {

Error fs_error(const std::string& what, const std::filesystem::path& path, int err) {
    return Error(ErrorCode::filesystem, what + " '" + path.string() + "': " + errno_text(err));
}

} // namespace

Result<std::string> read_text_file(const std::filesystem::path& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        return fs_error("cannot open", path, errno);
    }
    std::string out;
    char buf[65536];
    while (true) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return fs_error("cannot read", path, errno);
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

int Disk::open(const char* path, int flags, unsigned mode) const {
    return ::open(path, flags, static_cast<mode_t>(mode));
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

int Disk::rename(const char* from, const char* to) const {
    return ::rename(from, to);
}

int Disk::unlink(const char* path) const {
    return ::unlink(path);
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
    std::filesystem::path tmp;
    int fd = -1;
    // An unpredictable name, created exclusively; a name that is taken (planted, or a one in
    // 2^64 clash) is never touched: another name is tried.
    for (int tries = 0; fd < 0; ++tries) {
        tmp = dir / temp_name(path.filename().string());
        fd = disk.open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0 && (errno != EEXIST || tries >= 16)) {
            return fs_error("cannot create", tmp, errno);
        }
    }
    auto fail = [&](const char* what) {
        int err = errno;
        if (fd >= 0) {
            disk.close(fd);
        }
        disk.unlink(tmp.c_str());
        return fs_error(what, tmp, err);
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
    if (disk.rename(tmp.c_str(), path.c_str()) != 0) {
        return fail("cannot rename into place");
    }
    Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dfd.get() >= 0) {
        ::fsync(dfd.get());
    }
    return Ok{};
}

} // namespace cudaenv
