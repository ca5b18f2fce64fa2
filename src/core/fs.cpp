#include "fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace cudaenv {

std::string errno_text(int err) {
    return std::strerror(err);
}

namespace {

Error fs_error(const std::string& what, const std::filesystem::path& path, int err) {
    return Error(ErrorCode::filesystem, what + " '" + path.string() + "': " + errno_text(err));
}

/// Closes the descriptor on scope exit.
class Fd {
  public:
    explicit Fd(int fd) : m_fd(fd) {}

    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;

    ~Fd() {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }

    int get() const { return m_fd; }

    /// Closes now and reports the result (close can report a deferred write error).
    int close() {
        int rc = ::close(m_fd);
        m_fd = -1;
        return rc;
    }

  private:
    int m_fd;
};

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

Status
write_file_atomic(const std::filesystem::path& path, std::string_view content, unsigned mode) {
    auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    std::random_device rd;
    auto tmp = dir / ("." + path.filename().string() + ".tmp-" + std::to_string(rd()));
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (fd.get() < 0) {
        return fs_error("cannot create", tmp, errno);
    }
    auto fail = [&](const char* what) {
        int err = errno;
        ::unlink(tmp.c_str());
        return fs_error(what, tmp, err);
    };
    std::size_t off = 0;
    while (off < content.size()) {
        ssize_t n = ::write(fd.get(), content.data() + off, content.size() - off);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return fail("cannot write");
        }
        off += static_cast<std::size_t>(n);
    }
    if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) {
        return fail("cannot chmod");
    }
    if (::fsync(fd.get()) != 0) {
        return fail("cannot fsync");
    }
    if (fd.close() != 0) {
        return fail("cannot close");
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        return fail("cannot rename into place");
    }
    Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dfd.get() >= 0) {
        ::fsync(dfd.get());
    }
    return Ok{};
}

} // namespace cudaenv
