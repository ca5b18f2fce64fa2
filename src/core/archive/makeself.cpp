#include "makeself.hpp"

#include "../fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

namespace cudaenv::archive {

namespace {

/// The value of a `name="value"` assignment at the start of a line, if there is one.
std::optional<std::string> assignment(std::string_view text, std::string_view name) {
    std::string key = std::string(name) + "=\"";
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
        if (line.rfind(key, 0) == 0) {
            auto close = line.find('"', key.size());
            if (close != std::string_view::npos) {
                return std::string(line.substr(key.size(), close - key.size()));
            }
        }
        if (end == std::string_view::npos) {
            break;
        }
        pos = end + 1;
    }
    return std::nullopt;
}

std::optional<std::uint64_t> number(std::string_view s) {
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
        return std::nullopt;
    }
    return v;
}

/// How many lines the header is: `skip="N"` (makeself 2.2+), else the `head -n N "$0"` of an
/// `offset=` line (2.1.x, NVIDIA's).
std::optional<std::uint64_t> header_lines(std::string_view text) {
    if (auto skip = assignment(text, "skip")) {
        return number(*skip);
    }
    std::size_t pos = 0;
    while ((pos = text.find("offset=`head -n ", pos)) != std::string_view::npos) {
        pos += 16;
        auto end = text.find_first_not_of("0123456789", pos);
        if (end != std::string_view::npos && end > pos && text.substr(end, 5) == " \"$0\"") {
            return number(text.substr(pos, end - pos));
        }
    }
    return std::nullopt;
}

Error bad(const std::string& where, const std::string& what) {
    return Error(ErrorCode::unsafe_archive, where + ": " + what)
        .with_hint("the file is not an intact NVIDIA runfile; download it again and check its "
                   "sha256");
}

} // namespace

Result<RunfileHeader> parse_runfile_header(std::string_view head,
                                           std::uint64_t file_size,
                                           const std::string& where,
                                           const RunfileLimits& limits) {
    if (head.rfind("#!", 0) != 0) {
        return bad(where, "not a makeself runfile (it does not start with a #! line)");
    }
    std::string_view text =
        head.substr(0, std::min<std::size_t>(head.size(), limits.max_header_bytes));
    RunfileHeader h;
    auto lines = header_lines(text);
    if (!lines || *lines == 0) {
        return bad(where, "not a makeself runfile (no skip=\"N\" or offset=`head -n N` line)");
    }
    h.header_lines = *lines;
    // the byte after the N-th line break, which must lie within a header's size
    std::uint64_t seen = 0;
    std::size_t pos = 0;
    while (seen < h.header_lines) {
        auto nl = text.find('\n', pos);
        if (nl == std::string_view::npos) {
            return bad(where,
                       "its header claims " + std::to_string(h.header_lines) +
                           " lines, more than the first " + std::to_string(text.size()) +
                           " bytes hold");
        }
        pos = nl + 1;
        ++seen;
    }
    h.payload_offset = pos;
    auto sizes = assignment(text.substr(0, pos), "filesizes");
    if (!sizes) {
        return bad(where, "not a makeself runfile (no filesizes=\"...\" line in its header)");
    }
    std::size_t p = 0;
    while (p < sizes->size()) {
        auto end = sizes->find(' ', p);
        std::string_view part = std::string_view(*sizes).substr(
            p, end == std::string::npos ? std::string::npos : end - p);
        if (!part.empty()) {
            auto n = number(part);
            if (!n) {
                return bad(where, "its filesizes line holds '" + printable(part) + "', no size");
            }
            if (*n > limits.max_payload_bytes || h.payload_size > limits.max_payload_bytes - *n) {
                return bad(where,
                           "its header declares a payload over " +
                               std::to_string(limits.max_payload_bytes) + " bytes");
            }
            h.filesizes.push_back(*n);
            h.payload_size += *n;
        }
        if (end == std::string::npos) {
            break;
        }
        p = end + 1;
    }
    if (h.filesizes.empty()) {
        return bad(where, "its filesizes line is empty");
    }
    std::uint64_t follows = file_size > h.payload_offset ? file_size - h.payload_offset : 0;
    if (follows < h.payload_size) {
        return Error(ErrorCode::integrity,
                     where + ": truncated: its header declares " + std::to_string(h.payload_size) +
                         " bytes of payload, " + std::to_string(follows) + " follow it")
            .with_hint("download it again (cudaenv checks the sha256 the manifests pin)");
    }
    if (follows > h.payload_size) {
        return bad(where,
                   "its header declares " + std::to_string(h.payload_size) +
                       " bytes of payload, but " + std::to_string(follows) +
                       " follow it (something was appended)");
    }
    // the compression, from the payload's own first bytes
    std::string_view payload = head.size() > h.payload_offset ? head.substr(h.payload_offset) : "";
    if (payload.rfind("\x1f\x8b", 0) == 0) {
        h.compression = Compression::gzip;
    } else if (payload.rfind(std::string_view("\xfd"
                                              "7zXZ\x00",
                                              6),
                             0) == 0) {
        h.compression = Compression::xz;
    } else if (payload.size() >= 262 && payload.substr(257, 5) == "ustar") {
        h.compression = Compression::none;
    } else {
        return bad(where, "its payload is neither gzip, xz nor a tar archive");
    }
    h.label = assignment(text.substr(0, pos), "label").value_or("");
    h.md5 = assignment(text.substr(0, pos), "MD5").value_or("");
    h.crc = assignment(text.substr(0, pos), "CRCsum").value_or("");
    h.sha256 = assignment(text.substr(0, pos), "SHA").value_or("");
    for (const char* marker : {"generated using Makeself ", "Makeself version "}) {
        if (auto at = text.substr(0, pos).find(marker); at != std::string_view::npos) {
            auto start = at + std::string_view(marker).size();
            auto end = text.find_first_not_of("0123456789.", start);
            h.makeself_version = std::string(text.substr(start, end - start));
            break;
        }
    }
    return h;
}

Result<RunfileHeader> read_runfile_header(const std::filesystem::path& path,
                                          const RunfileLimits& limits,
                                          const std::string& where) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        return Error(ErrorCode::filesystem,
                     "cannot open '" + path.string() + "': " + errno_text(errno));
    }

    struct stat st {};

    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return Error(ErrorCode::filesystem, "'" + path.string() + "' is not a regular file");
    }
    // the header, and enough of the payload to tell its compression
    std::string head(std::min<std::uint64_t>(static_cast<std::uint64_t>(st.st_size),
                                             limits.max_header_bytes + 512),
                     '\0');
    std::size_t got = 0;
    while (got < head.size()) {
        auto n = ::read(fd, head.data() + got, head.size() - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    head.resize(got);
    return parse_runfile_header(head,
                                static_cast<std::uint64_t>(st.st_size),
                                where.empty() ? path.string() : where,
                                limits);
}

} // namespace cudaenv::archive
