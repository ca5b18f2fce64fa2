// uninstall and gc (remove.hpp).
#include "remove.hpp"

#include "../text.hpp"
#include "core/activate/project.hpp"
#include "core/activate/selection.hpp"
#include "core/ops/install.hpp"
#include "core/store/records.hpp"

#include <algorithm>

namespace cudaenv::ops {

Result<std::vector<UninstallTarget>> uninstall_targets(Session& session,
                                                       const std::vector<std::string>& specs) {
    const auto* cat = CUDAENV_TRY(session.frameworks_catalog());
    auto root = session.root();
    std::vector<UninstallTarget> out;
    for (const auto& spec : specs) {
        auto v = activate::match_installed(root, cat->frameworks, spec);
        if (!v) {
            auto err = v.error();
            std::string all = join(store::installed_versions(root));
            if (!all.empty()) {
                err.hints = {"installed: " + all};
            }
            return err;
        }
        if (std::none_of(out.begin(), out.end(), [&](const auto& t) { return t.version == *v; })) {
            auto rec = store::read_version_record(root.version_dir(*v));
            out.push_back({*v, rec ? std::optional(rec->bytes) : std::nullopt});
        }
    }
    return out;
}

Result<UninstallReport> uninstall(Session& session,
                                  const std::vector<UninstallTarget>& targets,
                                  bool force,
                                  const RemoveObserver& observer) {
    UninstallReport report;
    for (const auto& t : targets) {
        auto out = install::uninstall(session.root(), t.version, force, session.lock_timeout());
        if (!out) {
            if (report.changed) {
                rehash_after_change(session, observer.warning);
            }
            return std::move(out).error();
        }
        report.changed = report.changed || out->changed;
        report.removed.push_back({t.version, std::move(*out)});
        if (observer.removed) {
            observer.removed(report.removed.back());
        }
    }
    if (report.changed) {
        rehash_after_change(session, observer.warning);
    }
    return report;
}

Result<install::GcPlan>
collect_garbage(Session& session, bool apply, const RemoveObserver& observer) {
    const auto* cat = CUDAENV_TRY(session.frameworks_catalog());
    auto root = session.root();
    auto needed =
        CUDAENV_TRY(activate::needed_versions(root, cat->frameworks, session.env, session.cwd));
    if (!apply) {
        return install::plan_gc(root, needed);
    }
    auto plan = CUDAENV_TRY(install::run_gc(root, needed, session.lock_timeout()));
    if (std::any_of(plan.items.begin(), plan.items.end(), [](const auto& i) {
            return i.kind == install::GcItem::Kind::version;
        })) {
        rehash_after_change(session, observer.warning);
    }
    // records of pins whose project or .cuda-version is gone keep nothing: they go too
    std::vector<std::filesystem::path> stale;
    activate::recorded_pins(root, &stale);
    for (const auto& f : stale) {
        std::error_code ec;
        std::filesystem::remove(f, ec);
    }
    return plan;
}

} // namespace cudaenv::ops
