// Verified downloads with libcurl (docs/reliability.md R1, R2, R10).
//
// A file is downloaded to "<dest>.partial", hashed with SHA-256 while the bytes stream in, and
// renamed to <dest> only when its size and hash match. A later call resumes a partial file with
// an HTTP Range request, and appends only to a 206 whose Content-Range starts where the partial
// file ends; any other answer restarts from byte 0. 5xx answers and network errors are retried
// with backoff (the partial file is kept for the next run when retries run out); 4xx are not.
// Only https is allowed unless the caller allows plain http (a mirror the user configured), and
// a redirect may never downgrade to http.
#pragma once

#include "../error.hpp"
#include "../sha256.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace cudaenv::fetch {

struct Policy {
    bool allow_http = false;
    long connect_timeout_s = 30;
    /// Abort when fewer than low_speed_bytes per second arrive for low_speed_time_s seconds.
    long low_speed_bytes = 1024;
    long low_speed_time_s = 30;
    int max_attempts = 4;
    std::chrono::milliseconds backoff{500};
    std::string cacert; ///< extra CA bundle (tests); empty: the system's
    /// When set, fetch_text gives up at this moment whatever the speed (a channel dripping just
    /// above the stall floor): every attempt, and every document fetched with this policy, share
    /// it. `deadline_said` names it in the error ("120 s, CUDAENV_CHANNEL_TIMEOUT").
    std::optional<std::chrono::steady_clock::time_point> deadline;
    std::string deadline_said;

    /// Starts the deadline: `limit` from now, named by `variable` in the error.
    void start_deadline(std::chrono::seconds limit, std::string_view variable) {
        deadline = std::chrono::steady_clock::now() + limit;
        deadline_said = std::to_string(limit.count()) + " s, " + std::string(variable);
    }
};

struct Request {
    std::string url;
    /// Where the verified file goes. With `dir` set, its last part is a name in that open folder
    /// (opened by a caller beneath its own base, refusing links: fs.hpp's Contained) and the rest
    /// only names it in messages; otherwise a path, whose folder is opened once. Either way the
    /// file and its ".partial" are reached only by name in that folder, and neither is ever
    /// followed if it is a link.
    std::filesystem::path dest;
    int dir = -1;
    std::string sha256;
    /// Exact size when known; otherwise `max_size` caps the body.
    std::optional<std::uint64_t> size;
    std::uint64_t max_size = std::uint64_t{16} << 30;
    /// Set by another thread to stop this download early (it keeps its partial file).
    const std::atomic<bool>* cancel = nullptr;
};

/// Called from the downloading thread with bytes done so far and the total when known.
using Progress = std::function<void(std::uint64_t done, std::optional<std::uint64_t> total)>;

struct Outcome {
    bool cached = false; ///< dest was already there and verified; nothing downloaded
    std::uint64_t bytes = 0;
    std::uint64_t resumed_from = 0;
    int attempts = 0;
    /// A resumed download did not match (the server's file changed under the partial one): it
    /// was discarded and downloaded once more from zero.
    bool restarted = false;
};

/// Makes `dest` hold the verified file. Errors: network (exit 3), integrity (checksum or size,
/// exit 4; the partial file is deleted), filesystem (exit 6).
Result<Outcome>
download(const Request& request, const Policy& policy, const Progress& progress = {});

struct FileHash {
    std::string sha256;
    std::uint64_t size = 0;
};

/// The SHA-256 and size of a file on disk (read in 1 MiB blocks). Errors: filesystem.
Result<FileHash> hash_file(const std::filesystem::path& path);

/// The same for the rest of an open file; `shown` names it in errors.
Result<FileHash> hash_fd(int fd, const std::filesystem::path& shown);

/// Hashes the rest of an open file into `h` (a hash already begun); returns the bytes read.
Result<std::uint64_t> hash_fd(int fd, const std::filesystem::path& shown, Sha256& h);

/// Fetches a small document into memory (at most max_bytes), for unpinned indexes.
Result<std::string> fetch_text(const std::string& url, const Policy& policy, std::size_t max_bytes);

/// fetch_text, but a document the server does not have (HTTP 404 or 410) is none, not an error.
Result<std::optional<std::string>>
fetch_text_if_there(const std::string& url, const Policy& policy, std::size_t max_bytes);

/// Loads libcurl and libcrypto and initialises libcurl once per process (costly: OpenSSL loads its
/// configuration, ~25 ms); done lazily so commands that download nothing do not pay for it. Call
/// it on the main thread before starting threads: a library that cannot be loaded is its error.
Status global_init();

/// The oldest libcurl cudaenv runs with: 7.85.0 added CURLOPT_PROTOCOLS_STR and
/// CURLOPT_REDIR_PROTOCOLS_STR, which keep downloads (and their redirects) https-only. libcurl is
/// loaded at run time, so the package's Depends alone cannot promise it.
inline constexpr unsigned k_min_curl_version = 0x075500;

/// Refuses a libcurl older than k_min_curl_version, or one built without TLS (exit 1).
Status check_libcurl(unsigned version_num, const char* version, bool has_tls);

} // namespace cudaenv::fetch
