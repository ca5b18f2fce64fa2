#include "install.hpp"

#include "../archive/extract.hpp"
#include "../failpoint.hpp"
#include "../fs.hpp"
#include "../manifest/codec.hpp"
#include "../store/lock.hpp"
#include "../store/records.hpp"
#include "../sys/dynlib.hpp"
#include "compose.hpp"
#include "runfile.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace cudaenv::install {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Job {
    ResolvedArchive archive;
    bool cudnn = false;
    std::string entry; ///< store entry name
    std::string url;
    std::string expected_top;
    archive::Compression compression = archive::Compression::xz;
    bool present = false;
    /// An entry of that name is in the store but is not this archive (its record holds another
    /// sha256, or cannot be read) or failed its check: extracted again and swapped in.
    bool replace = false;
    std::optional<Alternate> alternate; ///< fetched instead of NVIDIA's file
};

std::string basename_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// A component version cudaenv already has must keep its hash (docs/reliability.md D15): NVIDIA
/// never republishes a version with other bytes, so a different hash means a tampered or confused
/// mirror or manifest. The same version's other builds are other files, which NVIDIA's names
/// tell apart (another platform -- one root serving x86_64 and Grace hosts --, another CUDA
/// variant of a cuDNN): only an entry downloaded as the same file counts.
Status refuse_changed_hash(const store::Root& root, const Job& j) {
    std::string prefix = j.archive.component + "-" + j.archive.version.str() + "-";
    std::string same = prefix + j.archive.artifact.sha256.substr(0, 12); // other profiles' too
    std::error_code ec;
    for (fs::directory_iterator it(root.store(), ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0 || name.rfind(same, 0) == 0 ||
            !fs::exists(it->path() / store::k_complete_record, ec)) {
            continue;
        }
        if (auto rec = store::read_store_record(it->path());
            rec && basename_of(rec->source) != basename_of(j.url)) {
            continue;
        }
        return Error(ErrorCode::integrity,
                     j.archive.component + " " + j.archive.version.str() +
                         " is installed from an archive with sha256 " +
                         name.substr(prefix.size(), 12) +
                         "..., but the manifest now "
                         "says " +
                         j.archive.artifact.sha256)
            .with_hint(
                "a version's bytes never change upstream: check the mirror and the manifests "
                "before trusting this one");
    }
    return Ok{};
}

/// The store entry at `dir` is the archive pinned by `sha256`: its record names all 64 digits
/// (its name carries only 12).
bool holds_archive(const fs::path& dir, const std::string& sha256) {
    auto rec = store::read_store_record(dir);
    return rec && rec->sha256 == sha256;
}

/// The jobs of a resolution. `read_records`: an entry is present only when its record holds the
/// pin (what the install decides on, under the lock); without, when it has a record at all
/// (enough for the first look, before the lock, which is planned again under it).
Result<std::vector<Job>>
plan(const store::Root& root, const Resolution& res, const Options& o, bool read_records) {
    std::vector<Job> jobs;
    for (const auto& a : res.archives) {
        Job j;
        j.archive = a;
        j.cudnn = manifest::is_cudnn_component(a.component);
        j.entry = a.component + "-" + a.version.str() + "-" + a.artifact.sha256.substr(0, 12);
        std::string loc = a.artifact.path.empty() ? a.artifact.url : a.artifact.path;
        j.url = a.artifact.path.empty()
                    ? a.artifact.url
                    : CUDAENV_TRY(manifest::join_url(o.base_url, a.artifact.path, a.component));
        // a runfile gives one entry per profile: what a runtime install took is not a devel one;
        // an artifact known only by its hash (install --archive FILE put it in the downloads)
        // is a runfile, or a cuDNN .tgz of the tarball era
        auto comp = a.runfile     ? std::optional(archive::Compression::none)
                    : loc.empty() ? std::optional(archive::Compression::gzip)
                                  : archive::compression_for(loc);
        if (a.runfile) {
            j.entry += "-" + a.runfile->profile;
        }
        if (!comp) {
            return Error(ErrorCode::integrity, "'" + loc + "' is not a .tar.xz or .tgz archive");
        }
        j.compression = *comp;
        std::string file = basename_of(loc);
        j.expected_top =
            *comp == archive::Compression::xz ? file.substr(0, file.size() - 7) : "cuda";
        // The name carries 12 hex digits of the sha256; the record the full one, which must be
        // the pin: an entry whose record names another archive is never reused.
        std::error_code ec;
        if (fs::exists(root.store() / j.entry / store::k_complete_record, ec)) {
            j.present = !read_records || holds_archive(root.store() / j.entry, a.artifact.sha256);
            j.replace = !j.present;
        }
        if (!j.present) {
            CUDAENV_TRY(refuse_changed_hash(root, j));
        }
        jobs.push_back(std::move(j));
    }
    return jobs;
}

store::StoreRecord entry_record(const Job& j, const archive::Extracted& x) {
    store::StoreRecord r{j.archive.component,
                         j.archive.version.str(),
                         j.archive.artifact.sha256,
                         j.url,
                         x.top,
                         x.bytes,
                         {}};
    r.files.reserve(x.entries.size());
    for (const auto& e : x.entries) {
        store::FileRecord f;
        f.path = e.path;
        switch (e.type) {
        case archive::Entry::Type::directory:
            f.type = store::FileRecord::Type::dir;
            break;
        case archive::Entry::Type::symlink:
            f.type = store::FileRecord::Type::symlink;
            f.target = e.target;
            break;
        case archive::Entry::Type::file:
            f.type = store::FileRecord::Type::file;
            f.size = e.size;
            f.executable = e.executable;
            f.sha256 = e.sha256;
            break;
        }
        r.files.push_back(std::move(f));
    }
    return r;
}

/// Extraction slots, one per core, handed to the largest waiting archive first: downloads finish
/// in size order (small ones first), but the makespan is set by the biggest xz stream, so it must
/// not queue behind small ones (longest-processing-time-first).
class ExtractGate {
  public:
    explicit ExtractGate(unsigned slots) : m_free(slots) {}

    void acquire(std::uint64_t size) {
        std::unique_lock<std::mutex> lock(m_mu);
        auto me = m_waiting.insert(size);
        m_cv.wait(lock, [&] { return m_free > 0 && *m_waiting.begin() == size; });
        m_waiting.erase(me);
        --m_free;
        m_cv.notify_all();
    }

    void release() {
        std::lock_guard<std::mutex> lock(m_mu);
        ++m_free;
        m_cv.notify_all();
    }

  private:
    std::mutex m_mu;
    std::condition_variable m_cv;
    unsigned m_free;
    std::multiset<std::uint64_t, std::greater<>> m_waiting;
};

/// Download, verify, extract and publish one archive into the store.
Status run_job(const store::Root& root,
               const Job& j,
               const Options& o,
               const Observer& observer,
               ExtractGate& extract_slots,
               const std::atomic<bool>& cancel,
               std::atomic<std::uint64_t>& downloaded) {
    auto emit =
        [&](Event::Kind k, std::uint64_t bytes = 0, bool cached = false, std::string note = {}) {
            if (observer) {
                Event e;
                e.note = std::move(note);
                e.kind = k;
                e.component = j.archive.component;
                e.version = j.archive.version.str();
                e.bytes = bytes;
                e.total = j.alternate ? std::optional(j.alternate->size) : j.archive.artifact.size;
                e.cached = cached;
                observer(e);
            }
        };
    emit(Event::Kind::downloading);
    if (j.url.empty() && !fs::exists(root.downloads() / j.archive.artifact.sha256)) {
        return Error(ErrorCode::usage,
                     j.archive.component + " " + j.archive.version.str() +
                         " is known only by its sha256 (" + j.archive.artifact.sha256 + ")")
            .with_hint("download it from NVIDIA and give it with --archive FILE");
    }
    fetch::Request req;
    req.url = j.alternate ? j.alternate->url : j.url;
    req.sha256 = j.alternate ? j.alternate->sha256 : j.archive.artifact.sha256;
    req.dest = root.downloads() / req.sha256;
    req.size = j.alternate ? std::optional(j.alternate->size) : j.archive.artifact.size;
    req.cancel = &cancel;
    auto got =
        fetch::download(req, o.policy, [&](std::uint64_t done, std::optional<std::uint64_t>) {
            emit(Event::Kind::progress, done);
        });
    if (!got) {
        return std::move(got).error();
    }
    downloaded += got->cached ? 0 : got->bytes - got->resumed_from;
    emit(Event::Kind::extracting,
         got->bytes,
         got->cached,
         got->restarted ? "the partial download did not match the server's file (it changed "
                          "since); discarded and downloaded again from the start"
                        : "");

    extract_slots.acquire(got->bytes);

    struct Release {
        ExtractGate& g;
        bool held = true;

        void now() {
            if (held) {
                held = false;
                g.release();
            }
        }

        ~Release() { now(); }
    } release{extract_slots};

    TempDir staged = CUDAENV_TRY(root.make_stage(j.entry));
    const fs::path& stage = staged.path();
    auto x = j.archive.runfile
                 ? extract_runfile(req.dest,
                                   basename_of(j.url),
                                   stage,
                                   j.archive.version,
                                   *j.archive.runfile,
                                   o.limits)
                 : archive::extract(req.dest,
                                    stage,
                                    j.alternate ? j.alternate->compression : j.compression,
                                    j.expected_top,
                                    o.limits);
    // The slot is a core for decoding: the sync below waits on the disk, so the next archive
    // may start decoding meanwhile.
    release.now();
    if (!x) {
        std::error_code ec;
        if (x.error().code == ErrorCode::unsafe_archive || x.error().code == ErrorCode::integrity) {
            // the pinned sha256 matched, but the bytes cannot be installed (a hostile archive, a
            // payload failing its own checksums): never keep them for the next try
            fs::remove(req.dest, ec);
        }
        return std::move(x).error();
    }
    CUDAENV_TRY(store::write_store_record(stage, entry_record(j, *x)));
    // read-only: a write through any version's hard link would change them all
    CUDAENV_TRY(store::make_read_only(stage));
    CUDAENV_TRY(store::sync_tree(stage));
    // an entry of that name that is not this archive, or is damaged, is swapped out in one step
    CUDAENV_TRY(store::replace_dir(stage, root.store() / j.entry));
    staged.release();
    std::error_code ec;
    fs::remove(req.dest, ec); // extracted: the archive is no longer needed
    emit(Event::Kind::done, got->bytes, got->cached);
    return Ok{};
}

Status run_jobs(const store::Root& root,
                const std::vector<Job>& jobs,
                const Options& o,
                const Observer& observer,
                std::atomic<std::uint64_t>& downloaded) {
    std::vector<const Job*> todo;
    for (const auto& j : jobs) {
        if (!j.present) {
            todo.push_back(&j);
        } else if (observer) {
            Event e;
            e.kind = Event::Kind::reused;
            e.component = j.archive.component;
            e.version = j.archive.version.str();
            observer(e);
        }
    }
    // Largest first: extraction (xz decoding) is the bottleneck and runs one per core, so the
    // biggest archive must not be the last to start (longest-processing-time-first scheduling).
    std::stable_sort(todo.begin(), todo.end(), [](const Job* a, const Job* b) {
        return a->archive.artifact.size.value_or(0) > b->archive.artifact.size.value_or(0);
    });
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    ExtractGate extract_slots(cores);
    std::atomic<std::size_t> next{0};
    std::atomic<bool> cancel{false};
    std::mutex mu;
    std::optional<Error> first_error;
    auto worker = [&] {
        while (!cancel) {
            std::size_t i = next++;
            if (i >= todo.size()) {
                return;
            }
            Status st = Ok{};
            try {
                st = run_job(root, *todo[i], o, observer, extract_slots, cancel, downloaded);
            } catch (const std::exception& e) {
                // nothing may escape a worker thread (std::terminate): a bug, reported as one
                st = Error(ErrorCode::failure,
                           std::string("internal error in a download worker: ") + e.what())
                         .with_hint("this is a bug; please report it with the command line");
            }
            if (!st) {
                std::lock_guard<std::mutex> g(mu);
                if (!first_error && !(st.error().code == ErrorCode::failure && cancel)) {
                    first_error = std::move(st).error();
                    if (observer) {
                        Event e;
                        e.kind = Event::Kind::failed;
                        e.component = todo[i]->archive.component;
                        observer(e);
                    }
                }
                cancel = true;
            }
        }
    };
    unsigned n = std::max(1u, std::min<unsigned>(o.jobs, static_cast<unsigned>(todo.size())));
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < n; ++i) {
        threads.emplace_back(worker);
    }
    for (auto& t : threads) {
        t.join();
    }
    if (first_error) {
        return *first_error;
    }
    return Ok{};
}

Status check_space(const store::Root& root, const std::vector<Job>& jobs) {
    std::uint64_t need = 0;
    for (const auto& j : jobs) {
        if (!j.present) {
            need += j.archive.artifact.size.value_or(0);
        }
    }

    struct statvfs vfs {};

    if (need == 0 || ::statvfs(root.dir.c_str(), &vfs) != 0) {
        return Ok{};
    }
    // The archive and its extracted files live side by side until the archive is deleted.
    std::uint64_t avail = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    if (avail < need * 2) {
        return Error(ErrorCode::filesystem,
                     "not enough space in '" + root.dir.string() + "': need about " +
                         std::to_string((need * 2) >> 20) + " MiB, have " +
                         std::to_string(avail >> 20) + " MiB")
            .with_hint("free some space, or set CUDAENV_ROOT to a larger filesystem");
    }
    return Ok{};
}

/// Which archives to download as a mirror's recompressed copy: those to download, from the
/// mirror (not another host), that are NVIDIA's xz and not already in the downloads (given with
/// --archive, or a resumed download).
Status choose_alternates(const store::Root& root, std::vector<Job>& jobs, const Options& o) {
    auto wanted = [&](const Job& j) {
        std::error_code ec;
        return !j.present && !j.archive.runfile && !j.archive.artifact.path.empty() &&
               j.compression == archive::Compression::xz &&
               !fs::exists(root.downloads() / j.archive.artifact.sha256, ec);
    };
    if (!o.alternates || std::none_of(jobs.begin(), jobs.end(), wanted)) {
        return Ok{};
    }
    auto alternates = CUDAENV_TRY(o.alternates());
    for (auto& j : jobs) {
        if (auto it = alternates.find(j.archive.artifact.sha256);
            it != alternates.end() && wanted(j)) {
            j.alternate = it->second;
        }
    }
    return Ok{};
}

/// True when the installed version already holds every archive of this resolution.
bool covers(const store::Root& root,
            const std::string& name,
            const std::vector<Job>& jobs,
            const std::string& platform) {
    fs::path dir = root.version_dir(name, platform); // an upstream's counts too
    auto rec = store::read_version_record(dir);
    if (!rec || rec->platform != platform) {
        return false; // a damaged record is replaced by a new composition
    }
    std::set<std::string> have;
    for (const auto& c : rec->components) {
        have.insert(c.store);
    }
    // its entries, in the store of the root that holds it, are the pinned archives (this
    // root's were read by plan())
    fs::path store = store::root_of_version(dir) / "store";
    bool own = store == root.store();
    for (const auto& j : jobs) {
        if (!have.count(j.entry) ||
            !(own ? j.present : holds_archive(store / j.entry, j.archive.artifact.sha256))) {
            return false;
        }
    }
    return true;
}

/// An installed version that no longer is what was installed: which of `jobs` to extract
/// again (their entries' objects are damaged; with `repair`, also those recorded without
/// per-file hashes). Refused when the version lives in an upstream root, or holds components
/// this resolution does not install (composing it again would drop them).
Status plan_repair(const store::Root& root,
                   const VersionCheck& check,
                   std::vector<Job>& jobs,
                   bool repair) {
    std::string first = check.damage.empty() ? std::string("recorded without per-file hashes")
                                             : check.damage[0].path + ": " + check.damage[0].what;
    if (check.upstream) {
        return Error(ErrorCode::integrity,
                     "'" + check.version + "' in '" + check.root.string() +
                         "' is not as it was installed: " + printable(first))
            .with_hint("its root's owner repairs it: sudo cudaenv install --repair " +
                       check.version);
    }
    auto bad = check.damaged_entries();
    if (repair) {
        bad.insert(check.unhashed.begin(), check.unhashed.end());
    }
    std::set<std::string> planned;
    for (auto& j : jobs) {
        planned.insert(j.entry);
        if (bad.count(j.entry)) {
            j.present = false;
            j.replace = true;
        }
    }
    auto rec = store::read_version_record(root.version_dir(check.version));
    if (rec) {
        for (const auto& c : rec->components) {
            if (!planned.count(c.store)) {
                return Error(ErrorCode::usage,
                             "'" + check.version + "' is not as it was installed (" +
                                 printable(first) + ") and holds " + c.component +
                                 ", which this SPEC does not install")
                    .with_hint("repair it as it was installed: cudaenv install --repair " +
                               check.version + " --profile " + check.profile +
                               (c.component == "cuda_compat" ? " --compat" : ""));
            }
        }
    }
    return Ok{};
}

} // namespace

Result<Outcome> install(const store::Root& root,
                        const Resolution& res,
                        const Options& o,
                        const Observer& observer) {
    if (!res.installable()) {
        return Error(ErrorCode::failure,
                     "cannot install '" + res.spec + "': " + res.not_installable[0])
            .with_hint("cudaenv resolve " + res.spec + " shows what is missing");
    }
    Outcome out;
    out.version = res.version_name();
    out.pins_not_met = res.pins_not_met;
    out.prefix = root.version_dir(out.version, res.platform);
    auto jobs = CUDAENV_TRY(plan(root, res, o, o.dry_run));
    auto describe = [&] {
        out.archives.clear();
        for (const auto& j : jobs) {
            out.archives.push_back({j.archive.component,
                                    j.archive.version.str(),
                                    j.url,
                                    j.archive.artifact.size,
                                    j.entry,
                                    j.present,
                                    j.alternate.has_value()});
        }
    };
    if (o.dry_run) {
        describe();
        out.changed = !covers(root, out.version, jobs, res.platform);
        return out;
    }
    CUDAENV_TRY(root.prepare());
    auto lock = CUDAENV_TRY(store::Lock::acquire(root.dir, o.lock_timeout));
    // Under the lock, first: what a killed run left goes, even when there is nothing to do.
    root.sweep();
    jobs = CUDAENV_TRY(plan(root, res, o, true));
    // Another run may have installed it while we waited (C1). Installed, it must still be what
    // was installed: each file's type, inode, size, mode and modification time against the
    // store records (about 0.1 s for 2000 files in a Debug build: docs/performance.md), or, with
    // --repair, its content re-hashed.
    if (covers(root, out.version, jobs, res.platform)) {
        auto check = CUDAENV_TRY(check_version(root,
                                               out.version,
                                               o.repair ? Depth::content : Depth::metadata,
                                               std::max(1u, std::thread::hardware_concurrency())));
        if (check.intact() && !(o.repair && !check.unhashed.empty())) {
            describe();
            out.changed = false;
            return out;
        }
        CUDAENV_TRY(plan_repair(root, check, jobs, o.repair));
        out.repaired = std::move(check.damage);
    }
    CUDAENV_TRY(choose_alternates(root, jobs, o));
    describe();
    CUDAENV_TRY(check_space(root, jobs));

    // Once, on this thread, before the workers start: libcurl, libarchive and libcrypto load
    // here or the install stops with the reason (never an exception in a worker).
    CUDAENV_TRY(fetch::global_init());
    CUDAENV_TRY(sys::load(sys::k_archive | sys::k_crypto));
    std::atomic<std::uint64_t> downloaded{0};
    CUDAENV_TRY(run_jobs(root, jobs, o, observer, downloaded));
    out.downloaded_bytes = downloaded;

    std::vector<StoreEntry> entries;
    for (const auto& j : jobs) {
        entries.push_back({j.entry,
                           root.store() / j.entry,
                           j.archive.component,
                           j.archive.version.str(),
                           j.archive.artifact.sha256,
                           j.cudnn,
                           j.archive.runfile.has_value(),
                           j.archive.component == "libcublas" && res.cublas_patch
                               ? "cublas " + res.cublas_patch->label
                               : std::string()});
    }
    TempDir staged = CUDAENV_TRY(root.make_stage(out.version));
    const fs::path& stage = staged.path();
    auto composed = compose_version(stage, res, entries, o.check_libraries);
    if (!composed) {
        return std::move(composed).error().with_context("installing " + out.version);
    }
    failpoint::hit("publish-before");
    CUDAENV_TRY(make_dirs(root.versions(res.platform)));
    fs::path dest = root.versions(res.platform) / out.version;
    // a fuller composition (or a repaired one) replaces the old one in one step
    CUDAENV_TRY(store::replace_dir(stage, dest));
    staged.release();
    failpoint::hit("publish-after");
    out.prefix = dest;
    out.changed = true;
    // the versions that still link what the replaced entries held
    std::set<std::string> replaced;
    for (const auto& j : jobs) {
        if (j.replace) {
            replaced.insert(j.entry);
        }
    }
    for (const auto& p : store::placed_versions_in(root.versions(), root.platforms)) {
        const auto& v = p.name;
        auto rec = store::read_version_record(p.dir);
        if (p.dir != dest && rec &&
            std::any_of(rec->components.begin(), rec->components.end(), [&](const auto& c) {
                return replaced.count(c.store) > 0;
            })) {
            out.still_damaged.push_back(v);
        }
    }
    return out;
}

Result<Removed> uninstall(const store::Root& root,
                          const std::string& version,
                          bool force,
                          std::chrono::milliseconds lock_timeout) {
    Removed out;
    std::error_code ec;
    if (auto up = root.upstream_of(version)) {
        return Error(ErrorCode::filesystem,
                     "'" + version + "' is in the machine-wide root '" + up->string() +
                         "': removing it needs root")
            .with_hint("sudo cudaenv uninstall " + version);
    }
    const store::Root own{root.dir, {}, root.platforms};
    fs::path vdir = own.version_dir(version); // not migrated yet: versions/<name>
    if (!fs::exists(vdir / store::k_version_record, ec)) {
        if (auto other = store::other_platform_error(own, version)) {
            return std::move(*other);
        }
        auto installed = store::installed_versions(root);
        auto err = Error(ErrorCode::not_found, "version '" + version + "' is not installed");
        if (!installed.empty()) {
            std::string all;
            for (const auto& v : installed) {
                all += (all.empty() ? "" : ", ") + v;
            }
            err = std::move(err).with_hint("installed: " + all);
        }
        return err;
    }
    CUDAENV_TRY(root.prepare());
    auto lock = CUDAENV_TRY(store::Lock::acquire(root.dir, lock_timeout));
    root.sweep();
    vdir = own.version_dir(version); // migrated by the sweep: versions/<platform>/<name>
    if (!fs::exists(vdir / store::k_version_record, ec)) {
        return out; // removed while we waited
    }
    if (auto global = CUDAENV_TRY(store::global_version(root));
        global && *global == version && !force) {
        return Error(ErrorCode::conflict, "'" + version + "' is the global version")
            .with_hint("switch first (cudaenv global OTHER), or pass --force to remove it anyway");
    }
    fs::path moved = root.trash() / (version + "-removed");
    if (::rename(vdir.c_str(), moved.c_str()) != 0) {
        return Error(ErrorCode::filesystem,
                     "cannot move '" + version + "' aside: " + errno_text(errno));
    }
    CUDAENV_TRY(store::sync_dir(vdir.parent_path()));
    // the migration's versions/<name> link to it goes too (a kill here: the next sweep drops it)
    if (fs::is_symlink(fs::symlink_status(root.versions() / version, ec)) &&
        !fs::exists(root.versions() / version, ec)) {
        fs::remove(root.versions() / version, ec);
        (void)store::sync_dir(root.versions());
    }
    remove_tree(moved);
    store::drop_if_empty(vdir.parent_path());
    out.changed = true;
    // Store entries no remaining version (of any platform) uses go too.
    std::set<std::string> used;
    for (const auto& p : store::placed_versions_in(root.versions(), root.platforms)) {
        auto rec = store::read_version_record(p.dir);
        if (!rec) {
            return out; // which entries it needs is unknown: keep them all
        }
        for (const auto& c : rec->components) {
            used.insert(c.store);
        }
    }
    for (fs::directory_iterator it(root.store(), ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (!used.count(name)) {
            fs::path gone = root.trash() / ("gc-" + name);
            if (::rename(it->path().c_str(), gone.c_str()) == 0) {
                remove_tree(gone);
                out.store_entries_removed.push_back(name);
            }
        }
    }
    return out;
}

} // namespace cudaenv::install
