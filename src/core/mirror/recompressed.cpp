#include "recompressed.hpp"

#include "../archive/extract.hpp"
#include "../channel/envelope.hpp"
#include "../channel/sets.hpp"
#include "../channel/strict_json.hpp"
#include "../manifest/codec.hpp"
#include "../sha256.hpp"
#include "../store/lock.hpp"
#include "../sys/dynlib.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <set>
#include <thread>

namespace cudaenv::mirror {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::string_view k_schema = "cudaenv.recompressed/1";
constexpr std::string_view k_schema_prefix = "cudaenv.recompressed/";
constexpr std::string_view k_codec = "zstd";
constexpr channel::EnvelopeKind k_kind{
    "cudaenv-recompressed/1",
    "cudaenv-recompressed/",
    "recompressed index",
    "index",
    k_max_index_bytes,
    "upgrade cudaenv to use this mirror's recompressed archives, or install NVIDIA's with "
    "CUDAENV_RECOMPRESSED=off"};

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// Where the zstd copy of NVIDIA's `original` goes: "cudaenv-recompressed/<it>.tar.zst".
std::string copy_path(const std::string& original) {
    return std::string(k_recompressed_dir) + "/" + original.substr(0, original.size() - 7) +
           ".tar.zst";
}

Result<std::uint64_t> size_field(const json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) {
        return Error(ErrorCode::integrity, std::string("'") + key + "' is not a size");
    }
    return it->get<std::uint64_t>();
}

Result<std::string> text_field(const json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) {
        return Error(ErrorCode::integrity, std::string("'") + key + "' is missing or not text");
    }
    return it->get<std::string>();
}

/// One entry of the index, checked; none for a codec this cudaenv does not know.
Result<std::optional<RecompressedArchive>> read_entry(const json& e) {
    if (!e.is_object()) {
        return Error(ErrorCode::integrity, "an entry is not an object");
    }
    if (CUDAENV_TRY(text_field(e, "codec")) != k_codec) {
        return std::optional<RecompressedArchive>(); // a later codec's entry: its own fields
    }
    CUDAENV_TRY(channel::check_fields(
        e, {"original", "path", "sha256", "size", "codec"}, "an entry", "it"));
    auto original = e.find("original");
    if (original == e.end() || !original->is_object()) {
        return Error(ErrorCode::integrity, "an entry has no 'original'");
    }
    CUDAENV_TRY(
        channel::check_fields(*original, {"path", "sha256", "size"}, "an entry", "its 'original'"));
    RecompressedArchive a;
    a.original_path = CUDAENV_TRY(text_field(*original, "path"));
    a.original_sha256 = CUDAENV_TRY(text_field(*original, "sha256"));
    a.original_size = CUDAENV_TRY(size_field(*original, "size"));
    a.path = CUDAENV_TRY(text_field(e, "path"));
    a.sha256 = CUDAENV_TRY(text_field(e, "sha256"));
    a.size = CUDAENV_TRY(size_field(e, "size"));
    if (!is_sha256_hex(a.original_sha256) || !is_sha256_hex(a.sha256)) {
        return Error(ErrorCode::integrity,
                     "the entry for '" + printable(a.original_path) +
                         "' has a sha256 that is not 64 lowercase hex digits");
    }
    std::string_view prefix(k_recompressed_dir);
    if (path_problem(a.path) ||
        a.path.compare(0, prefix.size() + 1, std::string(prefix) + "/") != 0 ||
        !ends_with(a.path, ".tar.zst")) {
        return Error(ErrorCode::integrity,
                     "the entry for '" + printable(a.original_path) + "' points at '" +
                         printable(a.path) + "', not a .tar.zst below " + std::string(prefix) +
                         "/");
    }
    return std::optional<RecompressedArchive>(std::move(a));
}

Status write_all(int fd, const std::uint8_t* data, std::size_t n, const fs::path& shown) {
    while (n > 0) {
        ssize_t w = ::write(fd, data, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return Error(ErrorCode::filesystem,
                         "cannot write '" + shown.string() + "': " + errno_text(errno));
        }
        data += w;
        n -= static_cast<std::size_t>(w);
    }
    return Ok{};
}

struct Streamed {
    std::string original_sha256;
    std::uint64_t original_size = 0;
    std::string sha256;
    std::uint64_t size = 0;
};

/// Decodes the xz file `in` (with the install's memory limit) and writes it to `out` as zstd,
/// hashing both sides.
Result<Streamed> xz_to_zstd(int in,
                            int out,
                            const fs::path& in_shown,
                            const fs::path& out_shown,
                            int level,
                            unsigned threads) {
    const auto& xz = sys::lzma();
    const auto& z = sys::zstd();

    struct Coders {
        lzma_stream strm = LZMA_STREAM_INIT;
        ZSTD_CCtx* cctx = nullptr;

        ~Coders() {
            sys::lzma().end(&strm);
            if (cctx) {
                sys::zstd().free_cctx(cctx);
            }
        }
    } c;

    auto refused = [&](const std::string& why) {
        return Error(ErrorCode::integrity, "cannot recompress '" + in_shown.string() + "': " + why);
    };
    if (xz.stream_decoder(&c.strm, archive::k_xz_memlimit, LZMA_CONCATENATED) != LZMA_OK) {
        return refused("cannot start the xz decoder");
    }
    c.cctx = z.create_cctx();
    if (!c.cctx || z.is_error(z.cctx_set_parameter(c.cctx, ZSTD_c_compressionLevel, level)) ||
        z.is_error(z.cctx_set_parameter(c.cctx, ZSTD_c_checksumFlag, 1))) {
        return refused("cannot start the zstd encoder");
    }
    // workers when libzstd has them (Debian's does); one thread otherwise
    (void)z.cctx_set_parameter(c.cctx, ZSTD_c_nbWorkers, static_cast<int>(threads));

    std::vector<std::uint8_t> in_buf(1 << 20), mid(1 << 20), out_buf(z.cstream_out_size());
    Sha256 in_hash, out_hash;
    Streamed s;
    bool input_done = false, xz_done = false;
    auto emit = [&](ZSTD_inBuffer& ib, ZSTD_EndDirective mode) -> Status {
        while (true) {
            ZSTD_outBuffer ob{out_buf.data(), out_buf.size(), 0};
            std::size_t left = z.compress_stream2(c.cctx, &ob, &ib, mode);
            if (z.is_error(left)) {
                return refused(std::string("zstd: ") + z.error_name(left));
            }
            CUDAENV_TRY(write_all(out, out_buf.data(), ob.pos, out_shown));
            out_hash.update(out_buf.data(), ob.pos);
            s.size += ob.pos;
            bool done = mode == ZSTD_e_end ? left == 0 : ib.pos == ib.size;
            if (done) {
                return Ok{};
            }
        }
    };
    while (!xz_done) {
        if (c.strm.avail_in == 0 && !input_done) {
            ssize_t n = ::read(in, in_buf.data(), in_buf.size());
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                return Error(ErrorCode::filesystem,
                             "cannot read '" + in_shown.string() + "': " + errno_text(errno));
            }
            input_done = n == 0;
            in_hash.update(in_buf.data(), static_cast<std::size_t>(n));
            s.original_size += static_cast<std::uint64_t>(n);
            c.strm.next_in = in_buf.data();
            c.strm.avail_in = static_cast<std::size_t>(n);
        }
        c.strm.next_out = mid.data();
        c.strm.avail_out = mid.size();
        lzma_ret r = xz.code(&c.strm, input_done ? LZMA_FINISH : LZMA_RUN);
        if (r == LZMA_STREAM_END) {
            xz_done = true;
        } else if (r != LZMA_OK) {
            return refused(r == LZMA_MEMLIMIT_ERROR
                               ? "its xz dictionary is larger than cudaenv allows"
                               : "not a whole xz stream (" + std::to_string(static_cast<int>(r)) +
                                     ")");
        }
        ZSTD_inBuffer ib{mid.data(), mid.size() - c.strm.avail_out, 0};
        if (ib.size > 0) {
            CUDAENV_TRY(emit(ib, ZSTD_e_continue));
        }
    }
    ZSTD_inBuffer none{nullptr, 0, 0};
    CUDAENV_TRY(emit(none, ZSTD_e_end));
    // the rest of the file, for its hash (the decoder stops at the stream's end)
    s.original_size += CUDAENV_TRY(fetch::hash_fd(in, in_shown, in_hash));
    s.original_sha256 = in_hash.hex_digest();
    s.sha256 = out_hash.hex_digest();
    return s;
}

std::string now_utc() {
    return channel::format_utc(std::time(nullptr));
}

} // namespace

Result<std::string> make_index(const std::vector<RecompressedArchive>& archives,
                               const std::string& created,
                               const std::vector<channel::SecretKey>& keys) {
    nlohmann::ordered_json doc;
    doc["schema"] = k_schema;
    doc["created"] = created;
    doc["archives"] = nlohmann::ordered_json::array();
    for (const auto& a : archives) {
        doc["archives"].push_back({{"original",
                                    {{"path", a.original_path},
                                     {"sha256", a.original_sha256},
                                     {"size", a.original_size}}},
                                   {"path", a.path},
                                   {"sha256", a.sha256},
                                   {"size", a.size},
                                   {"codec", k_codec}});
    }
    return channel::seal(k_kind, doc.dump(1) + "\n", keys);
}

Result<RecompressedIndex>
open_index(std::string_view bytes, const channel::KeyRing& keys, std::string_view origin) {
    auto bad = [&](const std::string& why) { return channel::envelope_error(k_kind, origin, why); };
    auto env = CUDAENV_TRY(channel::split_envelope(bytes, k_kind, origin));
    RecompressedIndex out;
    auto key = channel::check_signatures(env, k_kind, keys, origin);
    if (!key) {
        return std::move(key).error().with_hint(
            "or install NVIDIA's own archives from this mirror with CUDAENV_RECOMPRESSED=off");
    }
    out.key_id = key->front().id();
    // Signed by trusted keys: from here on the payload is what their holders wrote -- read
    // exactly, and within bounds all the same (channel/strict_json.hpp).
    std::string what = "recompressed index '" + printable(origin) + "'";
    json doc = CUDAENV_TRY(channel::parse_strict(env.payload, {k_max_index_depth}, what));
    if (!doc.is_object()) {
        return bad("its payload is not a JSON object");
    }
    auto schema = doc.find("schema");
    if (schema == doc.end() || !schema->is_string()) {
        return bad("'schema' is missing");
    }
    if (schema->get<std::string>() != k_schema) {
        if (channel::format_number(schema->get<std::string>(), k_schema_prefix) > 1) {
            return Error(ErrorCode::incompatible,
                         "recompressed index '" + printable(origin) + "' has schema " +
                             schema->get<std::string>() + "; this cudaenv reads " +
                             std::string(k_schema))
                .with_hint(std::string(k_kind.newer_hint));
        }
        return bad("unknown schema '" + printable(schema->get<std::string>()) + "'");
    }
    CUDAENV_TRY(channel::check_fields(doc, {"schema", "created", "archives"}, what, "its payload"));
    auto created = text_field(doc, "created");
    if (!created || !channel::parse_utc(*created)) {
        return bad("'created' is not a UTC time (2026-12-06T00:00:00Z)");
    }
    out.created = *created;
    auto archives = doc.find("archives");
    if (archives == doc.end() || !archives->is_array()) {
        return bad("'archives' is missing or not a list");
    }
    if (archives->size() > k_max_index_archives) {
        return bad("more than " + std::to_string(k_max_index_archives) + " archives");
    }
    std::set<std::string> paths;
    for (const auto& e : *archives) {
        auto entry = read_entry(e);
        if (!entry) {
            return bad(entry.error().message);
        }
        if (!*entry) {
            continue;
        }
        auto& a = **entry;
        if (!paths.insert(a.path).second) {
            return bad("two entries for '" + printable(a.path) + "'");
        }
        std::string sha = a.original_sha256;
        if (!out.by_original.emplace(sha, std::move(a)).second) {
            return bad("two entries for the archive with sha256 " + sha);
        }
    }
    return out;
}

Result<std::optional<RecompressedIndex>> fetch_index(const std::string& base_url,
                                                     const fetch::Policy& policy,
                                                     const channel::KeyRing& keys) {
    auto url = CUDAENV_TRY(
        manifest::join_url(base_url, k_recompressed_index, "the mirror's recompressed index"));
    auto text = CUDAENV_TRY(fetch::fetch_text_if_there(url, policy, k_max_index_bytes));
    if (!text) {
        return std::optional<RecompressedIndex>();
    }
    return std::optional<RecompressedIndex>(CUDAENV_TRY(open_index(*text, keys, url)));
}

Result<RecompressOutcome>
recompress(const fs::path& dir, const RecompressOptions& o, const RecompressObserver& observer) {
    if (o.keys.empty()) {
        return Error(ErrorCode::usage, "a recompressed mirror's index needs a signing key")
            .with_hint("cudaenv mirror SPEC --to DIR --recompress zstd --sign-key site.secret");
    }
    if (o.level < 1 || o.level > 19) {
        return Error(ErrorCode::usage,
                     "zstd level " + std::to_string(o.level) + " is not one of 1 to 19");
    }
    CUDAENV_TRY(sys::load(sys::k_archive | sys::k_crypto));
    std::vector<channel::PublicKey> own;
    for (const auto& k : o.keys) {
        own.push_back(CUDAENV_TRY(channel::public_key_of(k)));
    }
    auto base = CUDAENV_TRY(Contained::open(dir, false));
    auto lock = CUDAENV_TRY(store::Lock::acquire(dir, o.lock_timeout));
    auto files = CUDAENV_TRY(recorded_files(base));

    // copies a previous index (by one of these keys) lists are kept when their files still verify
    std::map<std::string, RecompressedArchive> previous;
    if (auto fd = base.open_file(k_recompressed_index); fd) {
        auto text = read_text_fd(fd->get(), dir / k_recompressed_index);
        auto idx = text ? open_index(*text,
                                     channel::KeyRing::of(own),
                                     (dir / k_recompressed_index).string())
                        : Result<RecompressedIndex>(text.error());
        if (idx) {
            previous = std::move(idx->by_original);
        }
    }
    auto partial_dir = CUDAENV_TRY(base.dir(k_partial_dir, true));
    unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());

    RecompressOutcome out;
    std::vector<File> recorded;
    for (const auto& [path, f] : files) {
        if (!ends_with(path, ".tar.xz") ||
            path.rfind(std::string(k_recompressed_dir) + "/", 0) == 0) {
            continue;
        }
        RecompressedArchive a{path, f.sha256, f.size.value_or(0), copy_path(path), "", 0};
        auto it = previous.find(f.sha256);
        if (it != previous.end() && it->second.path == a.path && it->second.original_path == path &&
            holds(base, File{it->second.path, it->second.sha256, it->second.size, ""})) {
            a = it->second;
        } else {
            if (observer) {
                observer(a);
            }
            auto in = CUDAENV_TRY(base.open_file(path));
            std::string tmp = f.sha256 + ".zst";
            fs::path tmp_shown = dir / k_partial_dir / tmp;
            Fd zst(::openat(partial_dir.get(),
                            tmp.c_str(),
                            O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                            0644));
            if (!zst.valid()) {
                return Error(ErrorCode::filesystem,
                             "cannot create '" + tmp_shown.string() + "': " + errno_text(errno));
            }
            auto s = xz_to_zstd(in.get(), zst.get(), dir / path, tmp_shown, o.level, threads);
            if (!s || s->original_sha256 != f.sha256 || (f.size && s->original_size != *f.size)) {
                ::unlinkat(partial_dir.get(), tmp.c_str(), 0);
                if (!s) {
                    return std::move(s).error();
                }
                return Error(ErrorCode::integrity,
                             "'" + (dir / path).string() +
                                 "' is not the file the mirror recorded "
                                 "(sha256 " +
                                 s->original_sha256 + ", expected " + f.sha256 + ")")
                    .with_hint("cudaenv mirror --verify " + dir.string() +
                               " names every bad file; mirror again to replace them");
            }
            ::fchmod(zst.get(), 0644); // served to everyone
            if (::fsync(zst.get()) != 0) {
                return Error(ErrorCode::filesystem,
                             "cannot sync '" + tmp_shown.string() + "': " + errno_text(errno));
            }
            a.sha256 = s->sha256;
            a.size = s->size;
            fs::path rel(a.path);
            auto folder = CUDAENV_TRY(base.dir(rel.parent_path(), true));
            auto leaf = rel.filename().string();
            if (::renameat(partial_dir.get(), tmp.c_str(), folder.get(), leaf.c_str()) != 0) {
                return Error(ErrorCode::filesystem,
                             "cannot publish '" + (dir / a.path).string() +
                                 "': " + errno_text(errno));
            }
            ::fsync(folder.get());
            ++out.made;
        }
        out.original_bytes += a.original_size;
        out.recompressed_bytes += a.size;
        recorded.push_back({a.path, a.sha256, a.size, "the zstd copy of " + path});
        out.archives.push_back(std::move(a));
    }
    auto text =
        CUDAENV_TRY(make_index(out.archives, o.created.empty() ? now_utc() : o.created, o.keys));
    CUDAENV_TRY(base.write_file(k_recompressed_index, text, 0644));
    Sha256 h;
    h.update(text);
    recorded.push_back(
        {k_recompressed_index, h.hex_digest(), text.size(), "the recompressed index"});
    CUDAENV_TRY(record_files(base, recorded));
    if (::fsync(base.fd()) != 0) {
        return Error(ErrorCode::filesystem,
                     "cannot sync '" + dir.string() + "': " + errno_text(errno));
    }
    ::unlinkat(base.fd(), k_partial_dir, AT_REMOVEDIR);
    out.index_path = k_recompressed_index;
    return out;
}

} // namespace cudaenv::mirror
