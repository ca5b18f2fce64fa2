#include "download.hpp"

#include "../failpoint.hpp"
#include "../fs.hpp"
#include "../sha256.hpp"
#include "../sys/dynlib.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <thread>

namespace cudaenv::fetch {

namespace fs = std::filesystem;

Status check_libcurl(unsigned version_num, const char* version, bool has_tls) {
    auto hint = "install Debian 12's libcurl4 (7.88) or newer: apt install libcurl4";
    if (version_num < k_min_curl_version) {
        return Error(ErrorCode::failure,
                     "the libcurl loaded is " + printable(version ? version : "?") +
                         ", too old: cudaenv needs 7.85.0 or newer to keep downloads https-only")
            .with_hint(hint);
    }
    if (!has_tls) {
        return Error(ErrorCode::failure,
                     "the libcurl loaded (" + printable(version ? version : "?") +
                         ") was built without TLS: it cannot download over https")
            .with_hint(hint);
    }
    return Ok{};
}

Status global_init() {
    CUDAENV_TRY(sys::load(sys::k_curl | sys::k_crypto));
    static std::once_flag once;
    static Status checked = Ok{};
    std::call_once(once, [] {
        const curl_version_info_data* info = sys::curl().version_info(CURLVERSION_NOW);
        checked = info ? check_libcurl(info->version_num,
                                       info->version,
                                       (info->features & CURL_VERSION_SSL) != 0)
                       : Status(Error(ErrorCode::failure, "libcurl does not say its version"));
        if (checked) {
            CURLcode rc = sys::curl().global_init(CURL_GLOBAL_DEFAULT);
            if (rc != CURLE_OK) {
                checked =
                    Error(ErrorCode::failure,
                          std::string("libcurl cannot start: ") + sys::curl().easy_strerror(rc));
            }
        }
    });
    return checked;
}

namespace {

constexpr const char* k_user_agent = "cudaenv/0.1";

struct CurlHandle {
    CURL* h = sys::curl().easy_init();

    CurlHandle() = default;
    CurlHandle(const CurlHandle&) = delete;
    CurlHandle& operator=(const CurlHandle&) = delete;

    ~CurlHandle() { sys::curl().easy_cleanup(h); }
};

struct CurlList {
    curl_slist* l = nullptr;

    CurlList() = default;
    CurlList(const CurlList&) = delete;
    CurlList& operator=(const CurlList&) = delete;

    ~CurlList() { sys::curl().slist_free_all(l); }
};

/// Why a transfer was aborted from inside a callback.
enum class Abort { none, too_large, bad_range, write_failed, cancelled };

struct Transfer {
    CURL* curl = nullptr;
    int fd = -1;
    Sha256* hash = nullptr;
    std::uint64_t base = 0;    ///< bytes already in the partial file
    std::uint64_t written = 0; ///< bytes written by this attempt
    std::uint64_t limit = 0;   ///< the most the whole file may hold
    std::optional<std::uint64_t> total;
    const Progress* progress = nullptr;
    const std::atomic<bool>* cancel = nullptr;
    bool started = false;
    bool discard = false; ///< an error answer: its body is not ours
    bool half_hit = false;
    long status = 0;
    std::string content_range;
    Abort abort = Abort::none;
    int write_errno = 0;
};

bool starts_with_ci(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) {
        return false;
    }
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(s[i])) !=
            std::tolower(static_cast<unsigned char>(prefix[i]))) {
            return false;
        }
    }
    return true;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    std::string_view line(data, size * n);
    if (starts_with_ci(line, "HTTP/")) {
        t->content_range.clear(); // a new response (after a redirect)
    } else if (starts_with_ci(line, "content-range:")) {
        std::string_view v = line.substr(14);
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) {
            v.remove_prefix(1);
        }
        while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) {
            v.remove_suffix(1);
        }
        t->content_range = std::string(v);
    }
    return size * n;
}

/// On the first body bytes, decides what this response means for the partial file.
bool start_body(Transfer* t) {
    t->started = true;
    sys::curl().easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->status);
    if (t->status < 200 || t->status >= 300) {
        t->discard = true;
        return true;
    }
    if (t->base > 0) {
        if (t->status == 206) {
            std::string want = "bytes " + std::to_string(t->base) + "-";
            if (t->content_range.rfind(want, 0) != 0) {
                t->abort = Abort::bad_range;
                return false;
            }
        } else {
            // Range ignored: a full body follows. Never append it; start over.
            if (::ftruncate(t->fd, 0) != 0 || ::lseek(t->fd, 0, SEEK_SET) != 0) {
                t->write_errno = errno;
                t->abort = Abort::write_failed;
                return false;
            }
            t->hash->hex_digest(); // resets
            t->base = 0;
        }
    }
    return true;
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    std::size_t len = size * n;
    if (!t->started && !start_body(t)) {
        return 0;
    }
    if (t->discard) {
        return len;
    }
    if (t->cancel && t->cancel->load()) {
        t->abort = Abort::cancelled;
        return 0;
    }
    if (t->base + t->written + len > t->limit) {
        t->abort = Abort::too_large;
        return 0;
    }
    std::size_t off = 0;
    while (off < len) {
        ssize_t w = ::write(t->fd, data + off, len - off);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            t->write_errno = errno;
            t->abort = Abort::write_failed;
            return 0;
        }
        off += static_cast<std::size_t>(w);
    }
    t->hash->update(data, len);
    t->written += len;
    std::uint64_t done = t->base + t->written;
    if (t->progress && *t->progress) {
        (*t->progress)(done, t->total);
    }
    if (!t->half_hit && t->total && done * 2 >= *t->total) {
        // No fsync here: a SIGKILL does not lose what is in the page cache, and a sync in the
        // middle of every download stalled it for the whole half already written.
        t->half_hit = true;
        failpoint::hit("download-half");
    }
    return len;
}

/// Hashes a whole file into `h`; returns its size.
Result<std::uint64_t> hash_file(const fs::path& p, Sha256& h) {
    Fd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
        return Error(ErrorCode::filesystem,
                     "cannot open '" + p.string() + "': " + errno_text(errno));
    }
    return hash_fd(fd.get(), p, h);
}

/// A file reached by name in an open folder: the download and its partial file. Nothing here
/// resolves a path or follows a link.
struct Place {
    int dir = -1;
    std::string name;
    fs::path shown; ///< for messages

    Place with_suffix(const char* suffix) const {
        Place p{dir, name + suffix, shown};
        p.shown += suffix;
        return p;
    }

    /// The size of the regular file there; nullopt when there is none (a link counts as none).
    std::optional<std::uint64_t> size() const {
        struct stat st {};

        if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
            return std::nullopt;
        }
        return static_cast<std::uint64_t>(st.st_size);
    }

    bool present() const {
        struct stat st {};

        return ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    }

    void remove() const { ::unlinkat(dir, name.c_str(), 0); }

    Result<std::uint64_t> hash(Sha256& h) const {
        Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (!fd.valid()) {
            return Error(ErrorCode::filesystem,
                         "cannot open '" + shown.string() + "': " + errno_text(errno));
        }
        return hash_fd(fd.get(), shown, h);
    }
};

Error checksum_error(const Request& r, const std::string& got) {
    return Error(ErrorCode::integrity,
                 "checksum mismatch for '" + r.url + "': expected " + r.sha256 + ", got " + got)
        .with_hint("the download was deleted; if this repeats, the mirror or the manifest is bad");
}

Status publish(const Place& partial, const Place& dest) {
    if (::renameat(partial.dir, partial.name.c_str(), dest.dir, dest.name.c_str()) != 0) {
        return Error(ErrorCode::filesystem,
                     "cannot rename '" + partial.shown.string() + "': " + errno_text(errno));
    }
    ::fsync(dest.dir);
    return Ok{};
}

/// An empty partial file holds nothing worth resuming.
void remove_if_empty(const Place& partial) {
    if (partial.size() == std::uint64_t{0}) {
        partial.remove();
    }
}

bool retryable(CURLcode rc) {
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_BAD_CONTENT_ENCODING:
        return true;
    default:
        return false;
    }
}

/// One option, its result checked: a libcurl that ignores or refuses any of them (an older or
/// differently built one) stops the download instead of silently dropping a rule.
template <class T> Status set_option(CURL* h, CURLoption opt, const char* name, T value) {
    CURLcode rc = failpoint::failing(std::string("curl-setopt-") + name)
                      ? CURLE_UNKNOWN_OPTION
                      : sys::curl().easy_setopt(h, opt, value);
    if (rc != CURLE_OK) {
        return Error(ErrorCode::failure,
                     std::string("libcurl refused ") + name + ": " + sys::curl().easy_strerror(rc))
            .with_hint("install Debian 12's libcurl4 (7.88) or newer: apt install libcurl4");
    }
    return Ok{};
}

#define CUDAENV_SETOPT(h, opt, value) CUDAENV_TRY(set_option(h, opt, #opt, value))

Status apply_policy(CURL* h, const std::string& url, const Policy& p) {
    CUDAENV_SETOPT(h, CURLOPT_URL, url.c_str());
    // 256 KiB reads: a sixteenth of the write+hash calls of curl's 16 KiB default
    CUDAENV_SETOPT(h, CURLOPT_BUFFERSIZE, 256L * 1024);
    CUDAENV_SETOPT(h, CURLOPT_NOSIGNAL, 1L);
    CUDAENV_SETOPT(h, CURLOPT_USERAGENT, k_user_agent);
    CUDAENV_SETOPT(h, CURLOPT_FOLLOWLOCATION, 1L);
    CUDAENV_SETOPT(h, CURLOPT_MAXREDIRS, 5L);
    CUDAENV_SETOPT(h, CURLOPT_PROTOCOLS_STR, p.allow_http ? "https,http" : "https");
    // A redirect may stay on http only when the URL itself is plain http (a configured mirror);
    // an https download is never redirected to http.
    bool is_https = url.rfind("https://", 0) == 0;
    CUDAENV_SETOPT(
        h, CURLOPT_REDIR_PROTOCOLS_STR, !is_https && p.allow_http ? "https,http" : "https");
    CUDAENV_SETOPT(h, CURLOPT_CONNECTTIMEOUT, p.connect_timeout_s);
    CUDAENV_SETOPT(h, CURLOPT_LOW_SPEED_LIMIT, p.low_speed_bytes);
    CUDAENV_SETOPT(h, CURLOPT_LOW_SPEED_TIME, p.low_speed_time_s);
    CUDAENV_SETOPT(h, CURLOPT_SSL_VERIFYPEER, 1L);
    CUDAENV_SETOPT(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!p.cacert.empty()) {
        CUDAENV_SETOPT(h, CURLOPT_CAINFO, p.cacert.c_str());
    }
    return Ok{};
}

std::string curl_message(CURLcode rc, const char* errbuf) {
    return errbuf[0] ? std::string(errbuf) : std::string(sys::curl().easy_strerror(rc));
}

void backoff(const Policy& p, int attempt) {
    auto wait = p.backoff * (1 << std::min(attempt - 1, 6));
    std::this_thread::sleep_for(wait);
}

} // namespace

Result<FileHash> hash_file(const fs::path& path) {
    Sha256 h;
    auto n = CUDAENV_TRY(hash_file(path, h));
    return FileHash{h.hex_digest(), n};
}

Result<std::uint64_t> hash_fd(int fd, const fs::path& shown, Sha256& h) {
    std::uint64_t total = 0;
    std::string buf(1 << 20, '\0');
    while (true) {
        ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return Error(ErrorCode::filesystem,
                         "cannot read '" + shown.string() + "': " + errno_text(errno));
        }
        if (n == 0) {
            break;
        }
        h.update(buf.data(), static_cast<std::size_t>(n));
        total += static_cast<std::uint64_t>(n);
    }
    return total;
}

Result<FileHash> hash_fd(int fd, const fs::path& shown) {
    Sha256 h;
    auto n = CUDAENV_TRY(hash_fd(fd, shown, h));
    return FileHash{h.hex_digest(), n};
}

Result<Outcome> download(const Request& r, const Policy& policy, const Progress& progress) {
    CUDAENV_TRY(global_init());
    Outcome outcome;
    std::uint64_t limit = r.size ? *r.size : r.max_size;

    Fd own_dir;
    Place dest{r.dir, r.dest.filename().string(), r.dest};
    if (r.dir < 0) {
        auto folder = r.dest.parent_path().empty() ? fs::path(".") : r.dest.parent_path();
        own_dir = Fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!own_dir.valid()) {
            return Error(ErrorCode::filesystem,
                         "cannot open '" + folder.string() + "': " + errno_text(errno));
        }
        dest = Place{own_dir.get(), r.dest.filename().string(), r.dest};
    }

    // A file already at dest is trusted only after it hashes right (a poisoned cache, D17).
    if (dest.present()) {
        Sha256 h;
        auto n = dest.size() ? dest.hash(h) : Result<std::uint64_t>(std::uint64_t{0});
        if (dest.size() && n && (!r.size || *n == *r.size) && h.hex_digest() == r.sha256) {
            outcome.cached = true;
            outcome.bytes = *n;
            return outcome;
        }
        dest.remove();
    }

    Place partial = dest.with_suffix(".partial");
    bool whole_file_checked = false;
    for (int attempt = 1; attempt <= policy.max_attempts; ++attempt) {
        outcome.attempts = attempt;
        Sha256 hash;
        std::uint64_t base = 0;
        if (partial.present() && !partial.size()) {
            partial.remove(); // not a regular file: nothing of ours
        }
        bool have_partial = partial.size().has_value();
        if (have_partial) {
            auto n = partial.hash(hash);
            if (!n) {
                return std::move(n).error();
            }
            base = *n;
            if (base > limit) {
                partial.remove();
                hash.hex_digest();
                base = 0;
            }
        }
        if (have_partial && r.size && base == *r.size && !whole_file_checked) {
            // The partial file is complete (a run killed before the rename): check it (D5).
            whole_file_checked = true;
            std::string got = hash.hex_digest();
            if (got == r.sha256) {
                CUDAENV_TRY(publish(partial, dest));
                outcome.bytes = base;
                outcome.resumed_from = base;
                return outcome;
            }
            partial.remove();
            base = 0;
        }
        outcome.resumed_from = base;

        // O_NONBLOCK: a FIFO planted here must not hang the open; only a plain file of its own
        // (not a hard link to another) is appended to
        Fd fd(::openat(partial.dir,
                       partial.name.c_str(),
                       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                       0644));
        if (!fd.valid()) {
            return Error(ErrorCode::filesystem,
                         "cannot write '" + partial.shown.string() + "': " + errno_text(errno));
        }
        if (struct stat pst{};
            ::fstat(fd.get(), &pst) != 0 || !S_ISREG(pst.st_mode) || pst.st_nlink != 1) {
            return Error(ErrorCode::unsafe_archive,
                         "refusing to write '" + partial.shown.string() +
                             "': not a plain file cudaenv made (a FIFO, a device or a hard link)")
                .with_hint("remove it: cudaenv makes this file itself");
        }
        ::fcntl(fd.get(), F_SETFL, O_APPEND); // back to blocking writes (the access mode stays)
        CurlHandle curl;
        CurlList headers;
        char errbuf[CURL_ERROR_SIZE] = {0};
        Transfer t;
        t.curl = curl.h;
        t.fd = fd.get();
        t.hash = &hash;
        t.base = base;
        t.limit = limit;
        t.total = r.size;
        t.progress = &progress;
        t.cancel = r.cancel;
        CUDAENV_TRY(apply_policy(curl.h, r.url, policy));
        CUDAENV_SETOPT(curl.h, CURLOPT_ERRORBUFFER, errbuf);
        CUDAENV_SETOPT(curl.h, CURLOPT_WRITEFUNCTION, on_body);
        CUDAENV_SETOPT(curl.h, CURLOPT_WRITEDATA, &t);
        CUDAENV_SETOPT(curl.h, CURLOPT_HEADERFUNCTION, on_header);
        CUDAENV_SETOPT(curl.h, CURLOPT_HEADERDATA, &t);
        CUDAENV_SETOPT(curl.h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(limit));
        if (base > 0) {
            std::string range = std::to_string(base) + "-";
            CUDAENV_SETOPT(curl.h, CURLOPT_RANGE, range.c_str());
        }
        CURLcode rc = sys::curl().easy_perform(curl.h);
        if (!t.started) {
            sys::curl().easy_getinfo(curl.h, CURLINFO_RESPONSE_CODE, &t.status);
        }
        // No fsync: a download is transient (deleted once extracted) and is re-hashed before any
        // use, so a power loss can only cost a re-download. The extracted tree is synced before
        // it is published. close() still reports a deferred write error.
        int close_rc = fd.close();
        int close_errno = errno;

        if (t.abort == Abort::write_failed) {
            partial.remove();
            return Error(ErrorCode::filesystem,
                         "cannot write '" + partial.shown.string() +
                             "': " + errno_text(t.write_errno));
        }
        if (t.abort == Abort::too_large || rc == CURLE_FILESIZE_EXCEEDED) {
            partial.remove();
            return Error(ErrorCode::integrity,
                         "'" + r.url + "' sent more than the " + std::to_string(limit) +
                             " bytes the manifest allows; download deleted");
        }
        if (t.abort == Abort::cancelled) {
            remove_if_empty(partial);
            return Error(ErrorCode::failure, "download of '" + r.url + "' cancelled");
        }
        if (t.abort == Abort::bad_range) {
            partial.remove(); // the server's range does not fit ours: start over
            continue;
        }
        if (t.status == 416 && base > 0) {
            partial.remove(); // our partial file is not a prefix the server knows
            continue;
        }
        if (t.status >= 400 && t.status < 500) {
            remove_if_empty(partial);
            return Error(ErrorCode::network,
                         "HTTP " + std::to_string(t.status) + " for '" + r.url + "'")
                .with_hint(t.status == 404 ? "the mirror lacks this file, or the manifest is "
                                             "newer than the mirror"
                                           : "check the URL and any proxy settings");
        }
        if (rc != CURLE_OK || t.status >= 500) {
            bool again = rc == CURLE_OK ? true : retryable(rc);
            std::string why =
                rc == CURLE_OK ? "HTTP " + std::to_string(t.status) : curl_message(rc, errbuf);
            if (again && attempt < policy.max_attempts) {
                backoff(policy, attempt);
                continue;
            }
            remove_if_empty(partial);
            return Error(ErrorCode::network,
                         "downloading '" + r.url + "' failed: " + why +
                             (again ? " (after " + std::to_string(attempt) + " attempts)" : ""))
                .with_hint(again ? "run the same command again to resume" : "check the URL");
        }
        if (close_rc != 0) {
            partial.remove();
            return Error(ErrorCode::filesystem,
                         "cannot write '" + partial.shown.string() +
                             "': " + errno_text(close_errno));
        }
        std::uint64_t got_size = t.base + t.written;
        std::string got = hash.hex_digest();
        bool bad = (r.size && got_size != *r.size) || got != r.sha256;
        if (bad && t.base > 0 && !outcome.restarted) {
            // The partial file was the start of another file (the server's changed since):
            // resuming onto it can never match. Discard it and start once more from zero; this
            // attempt does not count against the retries.
            partial.remove();
            outcome.restarted = true;
            --attempt;
            continue;
        }
        if (r.size && got_size != *r.size) {
            partial.remove();
            return Error(ErrorCode::integrity,
                         "size mismatch for '" + r.url + "': expected " + std::to_string(*r.size) +
                             " bytes, got " + std::to_string(got_size));
        }
        if (got != r.sha256) {
            partial.remove();
            return checksum_error(r, got);
        }
        CUDAENV_TRY(publish(partial, dest));
        outcome.bytes = got_size;
        return outcome;
    }
    return Error(ErrorCode::network,
                 "downloading '" + r.url +
                     "' failed: the server's answers to "
                     "range requests did not fit (after " +
                     std::to_string(policy.max_attempts) + " attempts)");
}

namespace {

/// fetch_text, or none for a 404/410 when `absent_ok`.
Result<std::optional<std::string>> fetch_text_or_none(const std::string& url,
                                                      const Policy& policy,
                                                      std::size_t max_bytes,
                                                      bool absent_ok) {
    CUDAENV_TRY(global_init());

    struct Sink {
        std::string data;
        std::size_t max;
        bool too_large = false;
    } sink{{}, max_bytes};

    auto past_deadline = [&] {
        return Error(ErrorCode::network,
                     "fetching '" + url + "' did not finish in time (" + policy.deadline_said +
                         "): the server answers too slowly")
            .with_hint("nothing was changed; try again, or raise the deadline");
    };
    for (int attempt = 1; attempt <= policy.max_attempts; ++attempt) {
        sink.data.clear();
        CurlHandle curl;
        char errbuf[CURL_ERROR_SIZE] = {0};
        CUDAENV_TRY(apply_policy(curl.h, url, policy));
        // curl's own timeout ends the attempt at the deadline; what ended it is told apart
        // from a stall (the same curl error) by the clock
        auto started = std::chrono::steady_clock::now();
        std::chrono::milliseconds left{0};
        if (policy.deadline) {
            left =
                std::chrono::duration_cast<std::chrono::milliseconds>(*policy.deadline - started);
            if (left.count() <= 0) {
                return past_deadline();
            }
            CUDAENV_SETOPT(curl.h, CURLOPT_TIMEOUT_MS, static_cast<long>(left.count()));
        }
        CUDAENV_SETOPT(curl.h, CURLOPT_ERRORBUFFER, errbuf);
        CUDAENV_SETOPT(
            curl.h,
            CURLOPT_WRITEFUNCTION,
            +[](char* d, std::size_t s, std::size_t n, void* u) -> std::size_t {
                auto* k = static_cast<Sink*>(u);
                if (k->data.size() + s * n > k->max) {
                    k->too_large = true;
                    return 0;
                }
                k->data.append(d, s * n);
                return s * n;
            });
        CUDAENV_SETOPT(curl.h, CURLOPT_WRITEDATA, &sink);
        CURLcode rc = sys::curl().easy_perform(curl.h);
        long status = 0;
        sys::curl().easy_getinfo(curl.h, CURLINFO_RESPONSE_CODE, &status);
        if (sink.too_large) {
            return Error(ErrorCode::integrity,
                         "'" + url + "' is larger than " + std::to_string(max_bytes) + " bytes");
        }
        if (rc == CURLE_OK && status >= 200 && status < 300) {
            return std::optional<std::string>(std::move(sink.data));
        }
        if (rc == CURLE_OK && absent_ok && (status == 404 || status == 410)) {
            return std::optional<std::string>();
        }
        if (rc == CURLE_OK && status >= 400 && status < 500) {
            return Error(ErrorCode::network,
                         "HTTP " + std::to_string(status) + " for '" + url + "'");
        }
        if (policy.deadline &&
            (std::chrono::steady_clock::now() >= *policy.deadline ||
             (rc == CURLE_OPERATION_TIMEDOUT && std::chrono::steady_clock::now() - started >=
                                                    left - std::chrono::milliseconds(100)))) {
            return past_deadline();
        }
        bool again = rc == CURLE_OK || retryable(rc);
        if (!again || attempt == policy.max_attempts) {
            return Error(
                ErrorCode::network,
                "fetching '" + url + "' failed: " +
                    (rc == CURLE_OK ? "HTTP " + std::to_string(status) : curl_message(rc, errbuf)));
        }
        backoff(policy, attempt);
    }
    return Error(ErrorCode::network, "fetching '" + url + "' failed");
}

} // namespace

Result<std::string>
fetch_text(const std::string& url, const Policy& policy, std::size_t max_bytes) {
    auto text = CUDAENV_TRY(fetch_text_or_none(url, policy, max_bytes, false));
    return std::move(*text);
}

Result<std::optional<std::string>>
fetch_text_if_there(const std::string& url, const Policy& policy, std::size_t max_bytes) {
    return fetch_text_or_none(url, policy, max_bytes, true);
}

} // namespace cudaenv::fetch
