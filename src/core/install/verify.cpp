#include "verify.hpp"

#include "../fetch/download.hpp"
#include "../fs.hpp"
#include "../manifest/model.hpp"
#include "../resolve/resolve.hpp"
#include "../store/records.hpp"
#include "../sys/dynlib.hpp"
#include "../sys/platform.hpp"
#include "compose.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <optional>
#include <thread>

namespace cudaenv::install {

namespace fs = std::filesystem;
using Kind = Damage::Kind;

const char* to_string(Damage::Kind k) {
    switch (k) {
    case Kind::modified:
        return "modified";
    case Kind::size:
        return "size";
    case Kind::missing:
        return "missing";
    case Kind::mode:
        return "mode";
    case Kind::replaced:
        return "replaced";
    case Kind::added:
        return "added";
    case Kind::link:
        return "link";
    case Kind::store:
        return "store";
    }
    return "?";
}

std::set<std::string> VersionCheck::damaged_entries() const {
    std::set<std::string> out;
    for (const auto& d : damage) {
        if (d.in_store && !d.entry.empty()) {
            out.insert(d.entry);
        }
    }
    return out;
}

Result<std::pair<std::string, std::uint64_t>>
HashCache::hash(const fs::path& path, dev_t dev, ino_t ino, std::uint64_t& read_now) {
    {
        std::lock_guard<std::mutex> g(m_mu);
        if (auto it = m_done.find({dev, ino}); it != m_done.end()) {
            return it->second;
        }
    }
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid()) {
        return Error(ErrorCode::filesystem,
                     "cannot open '" + path.string() + "': " + errno_text(errno));
    }
    auto h = CUDAENV_TRY(fetch::hash_fd(fd.get(), path));
    read_now += h.size;
    std::lock_guard<std::mutex> g(m_mu);
    return m_done.emplace(std::pair{dev, ino}, std::pair{h.sha256, h.size}).first->second;
}

namespace {

/// The platform `host` takes for a version's CUDA release (sys::platform_for).
std::string platform_for_version(const sys::HostMachine& host, const std::string& version) {
    auto cuda = Version::try_parse(version.substr(0, version.find('+')));
    if (!cuda) {
        return sys::default_platform(host);
    }
    return sys::platform_for(host, static_cast<int>(cuda->major()), static_cast<int>(cuda->minor()))
        .platform;
}

} // namespace

std::string repair_command(const VersionCheck& check, const sys::HostMachine* host) {
    std::string cmd =
        std::string(check.upstream ? "sudo " : "") + "cudaenv install --repair " + check.version;
    if (!check.profile.empty() && check.profile != "runtime") {
        cmd += " --profile " + check.profile;
    }
    auto here = host ? platform_for_version(*host, check.version)
                     : platform_for_version(sys::read_host_machine("/"), check.version);
    if (!check.platform.empty() && check.platform != here) {
        cmd += " --platform " + check.platform;
    }
    return cmd;
}

namespace {

/// What compose_version writes into a version itself (not from the store).
constexpr const char* k_own_files[] = {store::k_version_record, "version.json", ".cudaenv-compat"};

std::string mode_text(mode_t m) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
    return buf;
}

std::string time_text(const timespec& t) {
    struct tm tm {};

    char buf[32];
    if (!::gmtime_r(&t.tv_sec, &tm) || !std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm)) {
        return std::to_string(t.tv_sec);
    }
    return std::string(buf) + " UTC";
}

bool later(const timespec& a, const timespec& b) {
    return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

std::string short_sha(const std::string& s) {
    return s.size() > 16 ? s.substr(0, 16) + "..." : s;
}

std::string kind_of(mode_t m) {
    if (S_ISLNK(m)) {
        return "a link";
    }
    if (S_ISDIR(m)) {
        return "a folder";
    }
    if (S_ISREG(m)) {
        return "a file";
    }
    return "a special file";
}

/// A file whose content is to be compared with its record.
struct ToHash {
    fs::path path; ///< what is read (the store's object, or the file that replaced it)
    dev_t dev = 0;
    ino_t ino = 0;
    std::string want;
    std::string rel;
    std::string entry;
    bool replaced = false; ///< the version's file is not the store's object
};

class Checker {
  public:
    Checker(VersionCheck& out, Depth depth, const fs::path& store_dir)
        : m_out(out), m_depth(depth), m_store(store_dir) {}

    void damage(Kind k, std::string rel, std::string entry, std::string what, bool in_store) {
        m_out.damage.push_back({k, std::move(rel), std::move(entry), std::move(what), in_store});
    }

    std::map<std::string, timespec> sealed; ///< entry -> its record's modification time
    std::set<std::string> hashed_entries;
    std::vector<ToHash> to_hash;

    void file(const std::string& rel, const VersionFile& f, const struct stat& vst) {
        ++m_out.files;
        fs::path obj = m_store / f.entry / f.source;
        bool hashed = !f.sha256.empty();

        struct stat sst {};

        bool have_obj = ::lstat(obj.c_str(), &sst) == 0 && S_ISREG(sst.st_mode);
        if (!S_ISREG(vst.st_mode)) {
            damage(Kind::replaced, rel, f.entry, kind_of(vst.st_mode) + " where a file was", false);
        } else if (have_obj && (vst.st_dev != sst.st_dev || vst.st_ino != sst.st_ino)) {
            if (m_depth == Depth::content && hashed) {
                // said once its content is known
                to_hash.push_back({fs::path(m_out.prefix) / rel,
                                   vst.st_dev,
                                   vst.st_ino,
                                   f.sha256,
                                   rel,
                                   f.entry,
                                   true});
            } else {
                damage(Kind::replaced,
                       rel,
                       f.entry,
                       "not the store's object: another file was put in its place",
                       false);
            }
        }
        if (!have_obj) {
            damage(Kind::missing,
                   rel,
                   f.entry,
                   "its object is gone from the store entry (" + f.source + ")",
                   true);
            return;
        }
        // The store's object itself (what every version sharing it sees).
        auto size = static_cast<std::uint64_t>(sst.st_size);
        // a record before per-file hashes gave a hard link size 0: not a size to compare
        bool size_known = hashed || f.size != 0;
        bool size_ok = !size_known || size == f.size;
        if (!size_ok) {
            damage(Kind::size,
                   rel,
                   f.entry,
                   "size " + std::to_string(size) + " bytes, recorded " + std::to_string(f.size),
                   true);
        }
        mode_t mode = sst.st_mode & 07777;
        mode_t want = f.executable ? 0555 : 0444;
        // an older cudaenv published objects owner-writable (0644, 0755): that is no change
        bool mode_ok = mode == want || (!hashed && mode == (want | 0200));
        if (!mode_ok) {
            damage(Kind::mode,
                   rel,
                   f.entry,
                   ((mode & 0222) && !(want & 0222)
                        ? "writable (mode " + mode_text(mode) + "), installed read-only (" +
                              mode_text(want) + ")"
                        : "mode " + mode_text(mode) + ", installed " + mode_text(want)),
                   true);
        }
        if (!size_ok) {
            return; // its content differs: said once
        }
        if (m_depth == Depth::content && hashed) {
            to_hash.push_back({obj, sst.st_dev, sst.st_ino, f.sha256, rel, f.entry, false});
            return;
        }
        // Without re-hashing (or without a recorded hash): a write since install moved the
        // modification time past the store record's, written after every file of the entry.
        if (auto it = sealed.find(f.entry); it != sealed.end() && later(sst.st_mtim, it->second)) {
            damage(Kind::modified,
                   rel,
                   f.entry,
                   "written after it was installed (modified " + time_text(sst.st_mtim) +
                       ", the store record " + time_text(it->second) + ")",
                   true);
        }
    }

  private:
    VersionCheck& m_out;
    Depth m_depth;
    fs::path m_store;
};

/// Hashes `work` on up to `jobs` threads; a file that cannot be read is a damage of its own.
void hash_all(
    Checker& c, VersionCheck& out, unsigned jobs, HashCache& cache, std::vector<Damage>& found) {
    auto& work = c.to_hash;
    std::vector<std::optional<Damage>> result(work.size());
    std::atomic<std::size_t> next{0};
    std::atomic<std::uint64_t> read{0};
    auto worker = [&] {
        for (std::size_t i = next++; i < work.size(); i = next++) {
            const ToHash& w = work[i];
            std::uint64_t now = 0;
            std::optional<Result<std::pair<std::string, std::uint64_t>>> h;
            try {
                h.emplace(cache.hash(w.path, w.dev, w.ino, now));
            } catch (const std::exception& e) { // nothing may escape a thread
                h.emplace(Error(ErrorCode::internal, e.what()));
            }
            read += now;
            if (!*h) {
                result[i] = Damage{w.replaced ? Kind::replaced : Kind::missing,
                                   w.rel,
                                   w.entry,
                                   h->error().message,
                                   !w.replaced};
            } else if ((*h)->first != w.want) {
                std::string what = "content changed: sha256 " + short_sha((*h)->first) +
                                   ", recorded " + short_sha(w.want);
                result[i] = Damage{w.replaced ? Kind::replaced : Kind::modified,
                                   w.rel,
                                   w.entry,
                                   w.replaced ? "not the store's object: the file put in its "
                                                "place differs, " +
                                                    what
                                              : what,
                                   !w.replaced};
            } else if (w.replaced) {
                result[i] = Damage{Kind::replaced,
                                   w.rel,
                                   w.entry,
                                   "not the store's object: another file with the same content "
                                   "was put in its place",
                                   false};
            }
        }
    };
    unsigned n = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(work.size())));
    std::vector<std::thread> threads;
    for (unsigned i = 1; i < n; ++i) {
        threads.emplace_back(worker);
    }
    worker();
    for (auto& t : threads) {
        t.join();
    }
    out.bytes_hashed += read;
    for (auto& r : result) {
        if (r) {
            found.push_back(std::move(*r));
        }
    }
}

} // namespace

Result<VersionCheck> check_version(const store::Root& root,
                                   const std::string& name,
                                   Depth depth,
                                   unsigned jobs,
                                   HashCache* cache) {
    VersionCheck out;
    out.version = name;
    fs::path prefix = root.version_dir(name);
    std::error_code ec;
    if (!fs::exists(prefix / store::k_version_record, ec)) {
        if (auto other = store::other_platform_error(root, name)) {
            return std::move(*other);
        }
        return Error(ErrorCode::not_found, "version '" + printable(name) + "' is not installed");
    }
    if (depth == Depth::content) {
        CUDAENV_TRY(sys::load(sys::k_crypto)); // here, before any thread hashes
    }
    out.prefix = prefix;
    out.root = store::root_of_version(prefix);
    out.upstream = root.upstream_of(name).has_value();
    auto vrec = store::read_version_record(prefix);
    if (!vrec) {
        out.damage.push_back(
            {Kind::store, store::k_version_record, {}, vrec.error().message, false});
        return out;
    }
    out.profile = vrec->profile;
    out.platform = vrec->platform;
    fs::path store_dir = out.root / "store";
    Checker c(out, depth, store_dir);
    std::vector<StoreEntry> entries;
    std::vector<store::StoreRecord> records;
    bool complete = true;
    for (const auto& comp : vrec->components) {
        const std::string& e = comp.store;
        if (e.empty() || e.find('/') != std::string::npos || e == "." || e == "..") {
            out.damage.push_back({Kind::store,
                                  store::k_version_record,
                                  {},
                                  "names a store entry '" + printable(e) + "' that is no name",
                                  false});
            complete = false;
            continue;
        }
        StoreEntry se{e,
                      store_dir / e,
                      comp.component,
                      comp.version,
                      comp.sha256,
                      manifest::is_cudnn_component(comp.component),
                      false,
                      comp.patch};
        auto rec = store::read_store_record(se.dir);
        if (!rec) {
            bool gone = !fs::exists(fs::symlink_status(se.dir, ec));
            out.damage.push_back(
                {Kind::store,
                 "store/" + e,
                 e,
                 gone ? "the store entry is gone" : "its record: " + rec.error().message,
                 true});
            complete = false;
            continue;
        }
        if (!comp.sha256.empty() && rec->sha256 != comp.sha256) {
            out.damage.push_back({Kind::store,
                                  "store/" + e,
                                  e,
                                  "holds the archive with sha256 " + short_sha(rec->sha256) +
                                      ", the version was composed from " + short_sha(comp.sha256),
                                  true});
            complete = false;
            continue;
        }

        struct stat st {};

        if (::lstat((se.dir / store::k_complete_record).c_str(), &st) == 0) {
            c.sealed[e] = st.st_mtim;
        }
        se.runfile = rec->top.empty(); // a runfile's selection has no top folder
        if (!rec->hashed()) {
            out.unhashed.push_back(e);
        }
        entries.push_back(std::move(se));
        records.push_back(std::move(*rec));
    }
    auto tree = version_tree(entries, records, vrec->platform);
    if (!tree) {
        out.damage.push_back({Kind::store,
                              store::k_version_record,
                              {},
                              "its entries cannot be laid out: " + tree.error().message,
                              false});
        return out;
    }
    for (const auto& [rel, f] : *tree) {
        fs::path at = prefix / rel;

        struct stat vst {};

        if (::lstat(at.c_str(), &vst) != 0) {
            c.damage(Kind::missing, rel, f.entry, "gone from the version", false);
            continue;
        }
        switch (f.type) {
        case store::FileRecord::Type::dir:
            if (!S_ISDIR(vst.st_mode)) {
                c.damage(Kind::replaced,
                         rel,
                         f.entry,
                         kind_of(vst.st_mode) + " where a folder was",
                         false);
            }
            break;
        case store::FileRecord::Type::symlink:
            if (!S_ISLNK(vst.st_mode)) {
                c.damage(Kind::replaced,
                         rel,
                         f.entry,
                         kind_of(vst.st_mode) + " where a link was",
                         false);
            } else if (auto to = fs::read_symlink(at, ec); ec || to.string() != f.target) {
                c.damage(Kind::link,
                         rel,
                         f.entry,
                         "points to '" + printable(to.string()) + "', installed pointing to '" +
                             printable(f.target) + "'",
                         false);
            }
            break;
        case store::FileRecord::Type::file:
            c.file(rel, f, vst);
            break;
        }
    }
    if (!c.to_hash.empty()) {
        HashCache own;
        std::vector<Damage> found;
        hash_all(c, out, jobs, cache ? *cache : own, found);
        out.damage.insert(out.damage.end(), found.begin(), found.end());
    }
    // Anything else in the version was put there after it was installed. Only when every entry
    // could be laid out: else that entry's files would all look added.
    if (complete) {
        std::set<std::string> own(std::begin(k_own_files), std::end(k_own_files));
        fs::recursive_directory_iterator it(prefix, fs::directory_options::none, ec), end;
        for (; !ec && it != end; it.increment(ec)) {
            std::string rel = it->path().lexically_relative(prefix).string();
            if (tree->count(rel) || own.count(rel)) {
                continue;
            }
            auto st = it->symlink_status(ec);
            if (fs::is_directory(st)) {
                it.disable_recursion_pending(); // the folder is the finding
            }
            c.damage(Kind::added,
                     rel,
                     {},
                     std::string(fs::is_directory(st) ? "a folder"
                                 : fs::is_symlink(st) ? "a link"
                                                      : "a file") +
                         " cudaenv did not put there",
                     false);
        }
    }
    std::stable_sort(out.damage.begin(), out.damage.end(), [](const Damage& a, const Damage& b) {
        bool sa = a.kind == Kind::store;
        bool sb = b.kind == Kind::store;
        return sa != sb ? sa : a.path < b.path;
    });
    return out;
}

} // namespace cudaenv::install
