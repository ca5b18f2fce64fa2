#include "makeself.hpp"

#include "../fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

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
        // The file is whole (its pinned sha256 matched before it got here): its header lies.
        return bad(where,
                   "its header declares " + std::to_string(h.payload_size) +
                       " bytes of payload, but only " + std::to_string(follows) + " follow it");
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

    struct Field {
        const char* name;
        const std::string* value;
        std::vector<std::string>* parts;
        bool (*well_formed)(std::string_view);
    };

    const Field fields[] = {
        {"MD5",
         &h.md5,
         &h.part_md5,
         [](std::string_view w) {
             return w.size() == 32 &&
                    w.find_first_not_of("0123456789abcdef") == std::string_view::npos;
         }},
        {"CRCsum",
         &h.crc,
         &h.part_crc,
         [](std::string_view w) {
             return !w.empty() && w.size() <= 10 &&
                    w.find_first_not_of("0123456789") == std::string_view::npos;
         }},
        {"SHA",
         &h.sha256,
         &h.part_sha256,
         [](std::string_view w) {
             return w.size() == 64 &&
                    w.find_first_not_of("0123456789abcdef") == std::string_view::npos;
         }},
    };
    for (const auto& f : fields) {
        std::vector<std::string> words;
        std::size_t q = 0;
        const std::string& v = *f.value;
        while (q < v.size()) {
            auto end = v.find(' ', q);
            auto w = v.substr(q, end == std::string::npos ? std::string::npos : end - q);
            if (!w.empty()) {
                words.push_back(w);
            }
            if (end == std::string::npos) {
                break;
            }
            q = end + 1;
        }
        bool zero = std::all_of(words.begin(), words.end(), [](const std::string& w) {
            return w.find_first_not_of('0') == std::string::npos;
        });
        if (words.empty() || zero) {
            continue; // not declared: makeself --nomd5, --nocrc, or no --sha256
        }
        if (words.size() != h.filesizes.size()) {
            return bad(where,
                       "its header declares " + std::to_string(words.size()) + " " + f.name +
                           " value(s) for " + std::to_string(h.filesizes.size()) +
                           " payload part(s)");
        }
        for (const auto& w : words) {
            if (!f.well_formed(w)) {
                return bad(where,
                           std::string("its header's ") + f.name + " holds '" + printable(w) +
                               "', no checksum");
            }
        }
        *f.parts = std::move(words);
    }
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

struct PayloadChecksums::Hashing {
    explicit Hashing(const RunfileHeader& h) : header(h) {
        if (!header.part_md5.empty()) {
            try {
                md5_state = std::make_unique<Md5>();
            } catch (const std::exception&) {
                md5_unavailable = true; // OpenSSL in FIPS mode: the pinned sha256 and CRC remain
            }
        }
        if (!header.part_sha256.empty()) {
            sha_state = std::make_unique<Sha256>();
        }
        left = header.filesizes.empty() ? 0 : header.filesizes.front();
    }

    void finish_part() {
        if (md5_state) {
            md5.push_back(md5_state->hex_digest());
        }
        if (sha_state) {
            sha256.push_back(sha_state->hex_digest());
        }
        crc.push_back(std::to_string(cksum.value()));
        cksum = Cksum{};
        ++part;
        left = part < header.filesizes.size() ? header.filesizes[part] : 0;
    }

    /// Hashes the next bytes (on the hashing thread).
    void consume(const char* p, std::size_t size) {
        while (size > 0 && part < header.filesizes.size()) {
            auto n = static_cast<std::size_t>(std::min<std::uint64_t>(size, left));
            if (md5_state) {
                md5_state->update(p, n);
            }
            if (sha_state) {
                sha_state->update(p, n);
            }
            if (!header.part_crc.empty()) {
                cksum.update(p, n);
            }
            p += n;
            size -= n;
            left -= n;
            if (left == 0) {
                finish_part();
            }
        }
    }

    void loop() {
        std::unique_lock lock(mutex);
        for (;;) {
            ready.wait(lock, [this] { return !queue.empty() || closed; });
            if (queue.empty()) {
                return;
            }
            auto chunk = std::move(queue.front());
            queue.pop_front();
            queued -= chunk.size();
            room.notify_one();
            lock.unlock();
            consume(chunk.data(), chunk.size());
            lock.lock();
        }
    }

    void push(const void* data, std::size_t size) {
        if (!worker.joinable()) {
            worker = std::thread([this] { loop(); });
        }
        const auto* p = static_cast<const char*>(data);
        std::unique_lock lock(mutex);
        room.wait(lock, [&] { return queued == 0 || queued + size <= k_max_queued; });
        queue.emplace_back(p, p + size);
        queued += size;
        ready.notify_one();
    }

    /// Waits until every byte pushed is hashed; the thread has ended after.
    void close() {
        {
            std::lock_guard lock(mutex);
            closed = true;
        }
        ready.notify_one();
        if (worker.joinable()) {
            worker.join();
        }
    }

    static constexpr std::size_t k_max_queued = std::size_t{16} << 20;

    const RunfileHeader& header;
    bool md5_unavailable = false;
    std::string failed; ///< why hashing stopped (a thread or a copy that could not be made)
    std::size_t part = 0;
    std::uint64_t left = 0;                    ///< bytes of the current part still to come
    std::vector<std::string> md5, crc, sha256; ///< what the parts seen so far hash to
    std::unique_ptr<Md5> md5_state;
    std::unique_ptr<Sha256> sha_state;
    Cksum cksum;

    std::mutex mutex;
    std::condition_variable ready, room;
    std::deque<std::vector<char>> queue;
    std::size_t queued = 0;
    bool closed = false;
    std::thread worker;
};

PayloadChecksums::PayloadChecksums(const RunfileHeader& header)
    : m_hashing(std::make_unique<Hashing>(header)) {}

PayloadChecksums::~PayloadChecksums() {
    m_hashing->close();
}

bool PayloadChecksums::any() const {
    const auto& h = m_hashing->header;
    return !h.part_md5.empty() || !h.part_crc.empty() || !h.part_sha256.empty();
}

void PayloadChecksums::update(const void* data, std::size_t size) {
    auto& s = *m_hashing;
    if (!any() || size == 0 || s.closed || !s.failed.empty()) {
        return; // after verify(), or after a failure verify() reports
    }
    // called from libarchive's C read callback: nothing may escape
    try {
        s.push(data, size);
    } catch (const std::exception& e) {
        s.failed = e.what();
    }
}

Status PayloadChecksums::verify(const std::string& where) {
    if (!any()) {
        return Ok{};
    }
    auto& s = *m_hashing;
    s.close();
    if (!s.failed.empty()) {
        return Error(ErrorCode::filesystem,
                     where + ": its payload's checksums could not be computed: " + s.failed);
    }
    // an empty last part is complete without a byte
    while (s.part < s.header.filesizes.size() && s.left == 0) {
        s.finish_part();
    }
    if (s.part < s.header.filesizes.size()) {
        return Error(ErrorCode::integrity,
                     where + ": the payload ended before its header's checksums could be checked");
    }
    const std::pair<const char*,
                    std::pair<const std::vector<std::string>*, const std::vector<std::string>*>>
        checks[] = {{"MD5", {s.md5_unavailable ? &s.md5 : &s.header.part_md5, &s.md5}},
                    {"CRCsum", {&s.header.part_crc, &s.crc}},
                    {"SHA", {&s.header.part_sha256, &s.sha256}}};
    for (const auto& [field, lists] : checks) {
        const auto& [declared, got] = lists;
        for (std::size_t i = 0; i < declared->size(); ++i) {
            if ((*declared)[i] != (*got)[i]) {
                std::string part = declared->size() > 1 ? " of part " + std::to_string(i + 1) : "";
                return Error(ErrorCode::integrity,
                             where + ": its payload does not match the " + field +
                                 " its header declares" + part + " (" + (*declared)[i] +
                                 ", the payload's is " + (*got)[i] + ")")
                    .with_hint("nothing was installed; the runfile was altered after makeself "
                               "made it");
            }
        }
    }
    return Ok{};
}

Result<RunfileHeader> read_runfile_header(const std::filesystem::path& path,
                                          const RunfileLimits& limits,
                                          const std::string& where) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid()) {
        return Error(ErrorCode::filesystem,
                     "cannot open '" + path.string() + "': " + errno_text(errno));
    }

    struct stat st {};

    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return Error(ErrorCode::filesystem, "'" + path.string() + "' is not a regular file");
    }
    // the header, and enough of the payload to tell its compression
    std::string head(std::min<std::uint64_t>(static_cast<std::uint64_t>(st.st_size),
                                             limits.max_header_bytes + 512),
                     '\0');
    std::size_t got = 0;
    while (got < head.size()) {
        auto n = ::read(fd.get(), head.data() + got, head.size() - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        got += static_cast<std::size_t>(n);
    }
    fd.reset(-1);
    head.resize(got);
    return parse_runfile_header(head,
                                static_cast<std::uint64_t>(st.st_size),
                                where.empty() ? path.string() : where,
                                limits);
}

} // namespace cudaenv::archive
