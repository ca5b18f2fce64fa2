#include "mirror.hpp"

#include "../fs.hpp"
#include "../manifest/codec.hpp"
#include "../sha256.hpp"
#include "../store/lock.hpp"
#include "../store/records.hpp"
#include "../store/root.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace cudaenv::mirror {

namespace fs = std::filesystem;

namespace {

/// A path NVIDIA's host could have: relative, no empty, "." or ".." parts, not one of ours.
Status check_path(const File& f) {
    auto bad = [&](const std::string& why) {
        return Error(ErrorCode::integrity,
                     "refusing to mirror '" + printable(f.path) + "' (" + f.what + "): " + why);
    };
    if (auto why = path_problem(f.path)) {
        return bad(*why);
    }
    if (f.sha256.size() != 64) {
        return bad("no sha256 to verify it with");
    }
    return Ok{};
}

/// The record's files, by path; empty when there is none yet.
Result<std::map<std::string, File>> read_record(const Contained& base, bool required) {
    const fs::path& dir = base.path();
    std::map<std::string, File> out;
    auto fd = base.open_file(k_record);
    auto text = fd ? read_text_fd(fd->get(), dir / k_record) : Result<std::string>(fd.error());
    if (!text) {
        if (text.error().code == ErrorCode::unsafe_archive) {
            return std::move(text).error();
        }
        if (!required) {
            return out;
        }
        return Error(ErrorCode::integrity,
                     "'" + dir.string() + "' is not a cudaenv mirror: " + text.error().message)
            .with_hint("cudaenv mirror SPEC --to " + dir.string());
    }
    auto record = store::decode_mirror_record(*text, "'" + (dir / k_record).string() + "'");
    if (!record) {
        return std::move(record).error().with_hint(
            "run `cudaenv mirror SPEC... --to " + dir.string() +
            "` again: it re-hashes every file and writes the record");
    }
    for (auto& m : record->files) {
        File f{std::move(m.path), std::move(m.sha256), m.size, std::move(m.what)};
        CUDAENV_TRY(check_path(f));
        out[f.path] = f;
    }
    return out;
}

Status write_record(const Contained& base, const std::map<std::string, File>& files) {
    store::MirrorRecord record;
    for (const auto& [path, f] : files) {
        record.files.push_back({path, f.sha256, f.size.value_or(0), f.what});
    }
    return base.write_file(k_record, store::encode(record), 0644);
}

/// Runs `work(i)` for i in [0, n) on `jobs` threads; stops handing out work after the first
/// error and returns the error of the lowest index that failed.
Status parallel(std::size_t n, unsigned jobs, const std::function<Status(std::size_t)>& work) {
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stop{false};
    std::mutex m;
    std::map<std::size_t, Error> errors;
    auto worker = [&] {
        while (!stop) {
            std::size_t i = next++;
            if (i >= n) {
                return;
            }
            auto st = work(i);
            if (!st) {
                std::lock_guard<std::mutex> g(m);
                errors.emplace(i, std::move(st).error());
                stop = true;
            }
        }
    };
    std::vector<std::thread> threads;
    unsigned count = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(n)));
    for (unsigned t = 1; t < count; ++t) {
        threads.emplace_back(worker);
    }
    worker();
    for (auto& t : threads) {
        t.join();
    }
    if (!errors.empty()) {
        return errors.begin()->second;
    }
    return Ok{};
}

} // namespace

std::optional<std::string> path_problem(std::string_view path) {
    if (path.empty() || path.front() == '/') {
        return "not a relative path";
    }
    std::size_t pos = 0;
    while (pos <= path.size()) {
        auto end = path.find('/', pos);
        auto part =
            path.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
        if (part.empty() || part == "." || part == ".." || part.rfind(".cudaenv-mirror", 0) == 0) {
            return "a path part is '" + printable(part) + "'";
        }
        if (std::any_of(part.begin(), part.end(), [](char c) {
                return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\';
            })) {
            return std::string("a control character or backslash");
        }
        if (end == std::string_view::npos) {
            break;
        }
        pos = end + 1;
    }
    return std::nullopt;
}

/// The file at `f.path` below the base is the one wanted (a regular file of the right size and
/// sha256; a link is never one).
bool holds(const Contained& base, const File& f) {
    auto fd = base.open_file(f.path);
    if (!fd) {
        return false;
    }

    struct stat st {};

    if (f.size &&
        (::fstat(fd->get(), &st) != 0 || static_cast<std::uint64_t>(st.st_size) != *f.size)) {
        return false;
    }
    auto h = fetch::hash_fd(fd->get(), base.path() / f.path);
    return h && h->sha256 == f.sha256 && (!f.size || h->size == *f.size);
}

/// Bytes in hand (File::content) into the partial folder under their sha256, checked as a
/// download is.
Status write_content(const File& f, int partial_dir, const fs::path& partial) {
    Sha256 h;
    h.update(*f.content);
    if (h.hex_digest() != f.sha256 || (f.size && *f.size != f.content->size())) {
        return Error(ErrorCode::internal, "the bytes given for '" + f.path + "' do not match");
    }
    return write_file_atomic_at(partial_dir, partial, f.sha256, *f.content, 0644);
}

Result<Outcome> mirror(const fs::path& dir,
                       const std::vector<File>& files,
                       const Options& o,
                       const Observer& observer) {
    // one entry per path; two different files for one path is a contradiction in the manifests
    std::vector<File> wanted;
    std::map<std::string, std::size_t> index;
    for (const auto& f : files) {
        CUDAENV_TRY(check_path(f));
        auto [it, fresh] = index.emplace(f.path, wanted.size());
        if (fresh) {
            wanted.push_back(f);
        } else if (wanted[it->second].sha256 != f.sha256) {
            return Error(ErrorCode::integrity,
                         "two different files for '" + f.path + "': sha256 " +
                             wanted[it->second].sha256 + " (" + wanted[it->second].what + ") and " +
                             f.sha256 + " (" + f.what + ")");
        }
    }
    Outcome out;
    out.files.resize(wanted.size());
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        out.files[i].file = wanted[i];
    }
    auto emit = [&](const Event& e) {
        if (observer) {
            observer(e);
        }
    };
    if (o.dry_run) {
        auto base = Contained::open(dir, false);
        for (auto& fo : out.files) {
            fo.present = base && holds(*base, fo.file);
            out.changed = out.changed || !fo.present;
        }
        return out;
    }
    CUDAENV_TRY(fetch::global_init()); // on this thread, before the workers
    // Everything below `dir` is reached one folder at a time, never through a link (fs.hpp's
    // Contained): a link planted in the mirror is refused before anything is written through it.
    auto base = CUDAENV_TRY(Contained::open(dir, true));
    auto lock = CUDAENV_TRY(store::Lock::acquire(dir, o.lock_timeout));
    auto previous = read_record(base, false);
    if (!previous && previous.error().code == ErrorCode::unsafe_archive) {
        return std::move(previous).error();
    }
    fs::path partial = dir / k_partial_dir;
    auto partial_dir = CUDAENV_TRY(base.dir(k_partial_dir, true));
    std::map<std::string, File> record = previous ? *previous : std::map<std::string, File>{};

    std::atomic<bool> cancel{false};
    auto st = parallel(out.files.size(), o.jobs, [&](std::size_t i) -> Status {
        FileOutcome& fo = out.files[i];
        const File& f = fo.file;
        if (holds(base, f)) {
            fo.present = true;
            emit({Event::Kind::present, &f, 0, f.size});
            return Ok{};
        }
        // the folder it goes in first: a planted link there is refused before any download
        fs::path rel(f.path);
        auto folder = CUDAENV_TRY(base.dir(rel.parent_path(), true));
        emit({Event::Kind::downloading, &f, 0, f.size});
        if (f.content) {
            CUDAENV_TRY(write_content(f, partial_dir.get(), partial));
            fo.bytes = f.size.value_or(0);
        } else {
            fetch::Request req;
            req.url = CUDAENV_TRY(manifest::join_url(o.base_url, f.path, f.what));
            req.dir = partial_dir.get();
            req.dest = partial / f.sha256;
            req.sha256 = f.sha256;
            req.size = f.size;
            req.cancel = &cancel;
            auto got = fetch::download(req, o.policy, [&](std::uint64_t done, auto total) {
                emit({Event::Kind::progress, &f, done, total});
            });
            if (!got) {
                cancel = true;
                return std::move(got).error().with_context(f.what);
            }
            fo.bytes = got->bytes;
        }
        Fd file(::openat(partial_dir.get(), f.sha256.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        if (file.valid()) {
            ::fchmod(file.get(), 0644); // served to everyone
        }
        // the verified file takes the path in one step (replacing a wrong one, or a link, if any)
        auto leaf = rel.filename().string();
        if (::renameat(partial_dir.get(), f.sha256.c_str(), folder.get(), leaf.c_str()) != 0) {
            return Error(ErrorCode::filesystem,
                         "cannot publish '" + (dir / f.path).string() + "': " + errno_text(errno));
        }
        ::fsync(folder.get());
        fo.downloaded = true;
        emit({Event::Kind::done, &f, fo.bytes, f.size});
        return Ok{};
    });
    // what did land is recorded even when another file failed, so --verify knows it
    for (const auto& fo : out.files) {
        if (fo.present || fo.downloaded) {
            File r = fo.file;
            if (!r.size) {
                r.size = fo.bytes;
                if (auto fd = base.open_file(r.path); fd) {
                    struct stat sb {};

                    if (::fstat(fd->get(), &sb) == 0) {
                        r.size = static_cast<std::uint64_t>(sb.st_size);
                    }
                }
            }
            record[r.path] = r;
        }
        out.changed = out.changed || !fo.present;
        out.downloaded_bytes += fo.bytes;
    }
    if (!st) {
        if (!record.empty()) {
            (void)write_record(base, record);
        }
        return std::move(st).error();
    }
    CUDAENV_TRY(write_record(base, record));
    if (::fsync(base.fd()) != 0) {
        return Error(ErrorCode::filesystem,
                     "cannot sync '" + dir.string() + "': " + errno_text(errno));
    }
    // only when empty: a kept partial download resumes next time
    ::unlinkat(base.fd(), k_partial_dir, AT_REMOVEDIR);
    return out;
}

Result<std::map<std::string, File>> recorded_files(const Contained& base) {
    return read_record(base, false);
}

Status record_files(const Contained& base, const std::vector<File>& files) {
    auto record = CUDAENV_TRY(read_record(base, false));
    for (const auto& f : files) {
        CUDAENV_TRY(check_path(f));
        record[f.path] = f;
    }
    return write_record(base, record);
}

Result<std::vector<Problem>> verify(const fs::path& dir, unsigned jobs) {
    auto base = CUDAENV_TRY(Contained::open(dir, false));
    auto record = CUDAENV_TRY(read_record(base, true));
    CUDAENV_TRY(fetch::global_init());
    std::vector<File> files;
    for (auto& [path, f] : record) {
        files.push_back(f);
    }
    std::vector<std::optional<Problem>> found(files.size());
    CUDAENV_TRY(parallel(files.size(), jobs, [&](std::size_t i) -> Status {
        const File& f = files[i];
        auto fd = base.open_file(f.path);
        if (!fd) {
            found[i] = Problem{f.path,
                               fd.error().code == ErrorCode::unsafe_archive
                                   ? "a link that cudaenv did not make"
                                   : "missing"};
            return Ok{};
        }
        auto h = fetch::hash_fd(fd->get(), dir / f.path);
        if (!h) {
            found[i] = Problem{f.path, h.error().message};
        } else if (f.size && h->size != *f.size) {
            found[i] = Problem{f.path,
                               "size " + std::to_string(h->size) + ", expected " +
                                   std::to_string(*f.size)};
        } else if (h->sha256 != f.sha256) {
            found[i] = Problem{f.path, "sha256 " + h->sha256 + ", expected " + f.sha256};
        }
        return Ok{};
    }));
    std::vector<Problem> out;
    for (auto& p : found) {
        if (p) {
            out.push_back(std::move(*p));
        }
    }
    return out;
}

} // namespace cudaenv::mirror
