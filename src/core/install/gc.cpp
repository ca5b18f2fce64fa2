#include "gc.hpp"

#include "../store/lock.hpp"
#include "../store/records.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

namespace cudaenv::install {

namespace fs = std::filesystem;

namespace {

/// Bytes of the regular files under `dir` that have no link outside the set being removed: a
/// file whose every link is in `dir` (st_nlink 1) or that `seen` already counted once.
std::uint64_t tree_bytes(const fs::path& dir, std::set<std::pair<dev_t, ino_t>>& seen) {
    std::uint64_t total = 0;
    std::error_code ec;

    struct stat st {};

    if (::lstat(dir.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        return static_cast<std::uint64_t>(st.st_size);
    }
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
         !ec && it != end;
         it.increment(ec)) {
        if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            seen.insert({st.st_dev, st.st_ino}).second) {
            total += static_cast<std::uint64_t>(st.st_size);
        }
    }
    return total;
}

} // namespace

GcPlan plan_gc(const store::Root& root, const std::map<std::string, std::string>& needed) {
    GcPlan plan;
    std::error_code ec;
    std::set<std::string> used;             // store entries a kept version uses
    std::vector<store::PlacedVersion> gone; // versions to remove
    // every platform's versions of this root: another platform's are its hosts' to remove
    // (their pins and choices are not this host's to see), and the store entries they use stay
    for (const auto& p : store::placed_versions_in(root.versions(), root.platforms)) {
        const auto& name = p.name;
        auto rec = store::read_version_record(p.dir);
        if (!p.this_host) {
            plan.kept[name + " (" + p.platform + ")"] =
                "another platform's: gc on a " + p.platform + " host decides";
            if (!rec) {
                return plan;
            }
            for (const auto& c : rec->components) {
                used.insert(c.store);
            }
            continue;
        }
        if (auto it = needed.find(name); it != needed.end() || !rec) {
            plan.kept[name] = it != needed.end() ? it->second : "its record cannot be read";
            if (!rec) {
                return plan; // which entries it needs is unknown: remove no store entry at all
            }
            for (const auto& c : rec->components) {
                used.insert(c.store);
            }
            continue;
        }
        gone.push_back(p);
    }
    // Sizes: a version's files are hard links of its store entries, so what a removal frees is
    // counted on the entries, each file once; the version itself is its record and its links.
    std::set<std::pair<dev_t, ino_t>> seen;
    for (const auto& p : gone) {
        plan.items.push_back({GcItem::Kind::version, p.name, p.dir, 0});
    }
    for (fs::directory_iterator it(root.store(), ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (!used.count(name)) {
            GcItem item{GcItem::Kind::store_entry, name, it->path(), tree_bytes(it->path(), seen)};
            plan.bytes += item.bytes;
            plan.items.push_back(std::move(item));
        }
    }
    for (fs::directory_iterator it(root.downloads(), ec), end; !ec && it != end; it.increment(ec)) {
        GcItem item{GcItem::Kind::download,
                    it->path().filename().string(),
                    it->path(),
                    tree_bytes(it->path(), seen)};
        plan.bytes += item.bytes;
        plan.items.push_back(std::move(item));
    }
    return plan;
}

Result<GcPlan> run_gc(const store::Root& root,
                      const std::map<std::string, std::string>& needed,
                      std::chrono::milliseconds lock_timeout) {
    CUDAENV_TRY(root.prepare());
    auto lock = CUDAENV_TRY(store::Lock::acquire(root.dir, lock_timeout));
    root.sweep();
    auto plan = plan_gc(root, needed);
    GcPlan done;
    done.kept = plan.kept;
    // Versions first (renamed into .trash, one step each, then deleted), so that no version is
    // ever left pointing at a removed store entry.
    std::sort(plan.items.begin(), plan.items.end(), [](const GcItem& a, const GcItem& b) {
        return static_cast<int>(a.kind) < static_cast<int>(b.kind);
    });
    for (const auto& item : plan.items) {
        fs::path moved = root.trash() / ("gc-" + item.name);
        if (::rename(item.path.c_str(), moved.c_str()) != 0) {
            return Error(ErrorCode::filesystem,
                         "cannot move '" + item.path.string() +
                             "' aside: " + std::string(std::strerror(errno)))
                .with_context("gc (what was removed before stays removed)");
        }
        if (item.kind == GcItem::Kind::version) {
            CUDAENV_TRY(store::sync_dir(item.path.parent_path()));
            // the migration's versions/<name> link to it goes too
            std::error_code lec;
            fs::path link = root.versions() / item.name;
            if (fs::is_symlink(fs::symlink_status(link, lec)) && !fs::exists(link, lec)) {
                fs::remove(link, lec);
                (void)store::sync_dir(root.versions());
            }
        }
        remove_tree(moved);
        if (item.kind == GcItem::Kind::version) {
            store::drop_if_empty(item.path.parent_path());
        }
        done.bytes += item.bytes;
        done.items.push_back(item);
    }
    return done;
}

} // namespace cudaenv::install
