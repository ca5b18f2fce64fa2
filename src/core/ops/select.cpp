// The selection as the commands read it (select.hpp).
#include "select.hpp"

#include "core/activate/project.hpp"
#include "core/store/root.hpp"

#include <algorithm>

namespace cudaenv::ops {

Result<activate::Selection> selection(Session& session) {
    const auto* cat = CUDAENV_TRY(session.frameworks_catalog());
    return activate::select(session.root(), cat->frameworks, session.env, session.cwd);
}

Result<std::filesystem::path> prefix_of(Session& session, const std::string& spec) {
    if (!spec.empty()) {
        const auto* cat = CUDAENV_TRY(session.frameworks_catalog());
        auto v = CUDAENV_TRY(activate::match_installed(session.root(), cat->frameworks, spec));
        return session.root().version_dir(v);
    }
    auto sel = CUDAENV_TRY(selection(session));
    if (!sel.version) {
        return Error(ErrorCode::not_found, "no cudaenv version is selected (system)")
            .with_hint("cudaenv use SPEC for this project, or cudaenv global SPEC for the machine");
    }
    return session.root().version_dir(*sel.version);
}

activate::Machine machine_of(const Session& session) {
    activate::Machine m;
    m.sysroot = session.sysroot();
    m.ldconfig = session.getenv("CUDAENV_LDCONFIG").value_or("");
    m.ldconfig_timeout = session.ldconfig_timeout();
    return m;
}

std::optional<Error> refuse_for_project(Session& session,
                                        const manifest::Catalog& catalog,
                                        const std::string& version,
                                        const std::string& spec,
                                        bool force) {
    if (force) {
        return std::nullopt;
    }
    auto e = activate::project_framework_conflict(
        catalog, session.root(), version, spec, session.cwd, session.env);
    if (!e) {
        return std::nullopt;
    }
    e->message = "refusing " + e->message;
    return std::move(*e).with_hint("pass --force to use it anyway");
}

Result<InstalledList> installed_versions(Session& session) {
    InstalledList out;
    out.root = session.root();
    auto global = CUDAENV_TRY(store::effective_global(out.root));
    out.global = global.version;
    out.global_file = global.owner.state_file();
    if (auto sel = selection(session)) {
        out.selected = sel->version;
        out.selected_by = sel->origin_text();
        out.selected_by_global = sel->origin == activate::Selection::Origin::global;
    } else {
        out.selection_error = sel.error().full_message();
    }
    for (const auto& p : store::placed_versions(out.root)) {
        if (!p.this_host) {
            ++out.other_platforms[p.platform];
        }
    }
    out.platform = out.root.platforms.forced.empty()
                       ? sys::default_platform(out.root.platforms.host)
                       : out.root.platforms.forced;
    auto versions = install::list_installed(out.root, true);
    for (auto& v : versions) {
        ListedVersion l;
        l.wins = v.shadowed_by.empty();
        l.copy_below = l.wins && std::count_if(versions.begin(),
                                               versions.end(),
                                               [&](const auto& o) { return o.name == v.name; }) > 1;
        l.selected = l.wins && out.selected == v.name;
        l.global = l.wins && out.global == v.name;
        l.version = v;
        out.versions.push_back(std::move(l));
    }
    return out;
}

} // namespace cudaenv::ops
