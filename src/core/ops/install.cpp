// The install operation (install.hpp).
#include "install.hpp"

#include "audit.hpp"
#include "core/activate/shims.hpp"
#include "core/fs.hpp"
#include "core/manifest/codec.hpp"
#include "core/manifest/indexes.hpp"
#include "core/mirror/recompressed.hpp"
#include "core/ops/machine.hpp"
#include "core/ops/trust.hpp"
#include "core/store/records.hpp"
#include "core/sys/dynlib.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace cudaenv::ops {

namespace {

/// Puts a file given with --archive where the download would have put it, by its hash (copied
/// and renamed into place: the file stays the user's); the install verifies it again there.
Status stage_local_archive(const std::filesystem::path& file,
                           const std::string& sha256,
                           const std::filesystem::path& downloads) {
    namespace fs = std::filesystem;
    std::error_code ec;
    CUDAENV_TRY(make_dirs(downloads));
    fs::path dest = downloads / sha256;
    fs::path tmp = downloads / (sha256 + ".local");
    fs::remove(tmp, ec);
    if (!fs::copy_file(file, tmp, ec) || ec) {
        return Error(ErrorCode::filesystem,
                     "cannot copy '" + file.string() + "' to '" + tmp.string() +
                         "': " + ec.message());
    }
    fs::rename(tmp, dest, ec);
    if (ec) {
        fs::remove(tmp, ec);
        return Error(ErrorCode::filesystem,
                     "cannot place '" + dest.string() + "': " + ec.message());
    }
    return Ok{};
}

/// The SPECs to install: those given; with --match, the installed version that matches the
/// active environment or else the match itself; with neither, what the project asks for (as
/// `rustup install` and `nvm install` do).
Result<std::vector<std::string>> specs_to_install(Session& session,
                                                  const manifest::Catalog& catalog,
                                                  const InstallRequest& request,
                                                  InstallReport& report,
                                                  InstallObserver& observer) {
    auto specs = request.specs;
    if (request.match) {
        if (!specs.empty()) {
            return Error(ErrorCode::usage, "install --match chooses what to install: give no SPEC");
        }
        auto m = CUDAENV_TRY(activate::match_environment(catalog, session.root(), session.env));
        observer.note(m.found + " (" + m.found_by + ") was built for CUDA " + m.cuda.str() + " (" +
                      m.cuda_from + ")");
        specs.push_back(m.installed ? *m.installed : m.spec);
        report.match = std::move(m);
    }
    if (specs.empty()) {
        auto asked = CUDAENV_TRY(activate::project_request(catalog, session.cwd, session.env));
        if (!asked) {
            return Error(ErrorCode::usage,
                         "install needs a SPEC: no .cuda-version here or above, and no TensorFlow "
                         "pinned in this project's files or Python environment")
                .with_hint("cudaenv install tf-2.13; cudaenv list --available");
        }
        observer.note("installing " + asked->spec + " (from " + asked->source + ")");
        specs.push_back(asked->spec);
    }
    return specs;
}

/// Whether the installed version `name` was installed with --compat.
bool has_compat(const store::Root& root, const std::string& name) {
    auto rec = store::read_version_record(root.version_dir(name));
    return rec && std::any_of(rec->components.begin(), rec->components.end(), [](const auto& c) {
               return c.component == "cuda_compat";
           });
}

/// The installed version's libcublas patch ("13.4.1" of "cublas 13.4.1") and profile; empty
/// when it is not installed or holds the release's own cuBLAS.
struct InstalledNow {
    bool found = false;
    std::string patch;
    std::string profile;
};

InstalledNow installed_state(const store::Root& root, const std::string& name) {
    InstalledNow out;
    auto rec = store::read_version_record(root.version_dir(name));
    if (!rec) {
        return out;
    }
    out.found = true;
    out.profile = rec->profile;
    for (const auto& c : rec->components) {
        if (c.component == "libcublas" && c.patch.starts_with("cublas ")) {
            out.patch = c.patch.substr(7);
        }
    }
    return out;
}

/// Every SPEC resolved (with the indexes it needs) and every --archive file matched to one of
/// the archives, before anything is installed.
Result<std::vector<ResolvedSpec>> resolve_all(Session& session,
                                              const manifest::Catalog& trusted,
                                              const std::vector<std::string>& specs,
                                              const InstallRequest& request,
                                              const std::map<std::string, std::string>& local,
                                              InstallObserver& observer) {
    auto names = framework_names(trusted);
    auto ro = CUDAENV_TRY(to_resolve_options(request.spec_options, session));
    for (const auto& [sha, file] : local) {
        ro.local_archives.insert(sha);
    }
    std::vector<ResolvedSpec> todo;
    std::set<std::string> used;
    auto resolve_one = [&](const std::string& text, const ResolveOptions& with) {
        return resolve_with_indexes(session,
                                    trusted,
                                    names,
                                    text,
                                    with,
                                    request.allow_unpinned,
                                    "install",
                                    [&observer](const std::string& w) { observer.warning(w); });
    };
    for (const auto& text : specs) {
        auto resolved = CUDAENV_TRY(resolve_one(text, ro));
        if (!ro.compat && has_compat(session.root(), resolved.res.version_name())) {
            // a version installed with --compat keeps its compat libraries when it is composed
            // again (another profile, a repair), as it keeps its cuDNN
            auto with = ro;
            with.compat = true;
            resolved = CUDAENV_TRY(resolve_one(text, with));
            observer.note(resolved.res.version_name() +
                          " keeps its forward-compatibility libraries (cuda_compat)");
        }
        for (const auto& pin : resolved.res.pins_not_met) {
            observer.note(resolved.res.version_name() + ": " + pin_not_met_text(pin));
        }
        auto had = installed_state(session.root(), resolved.res.version_name());
        if (had.found && ro.patch.empty() && !had.patch.empty()) {
            // a version installed with a cuBLAS patch keeps it when it is composed again
            // (another profile, a repair); `--patch none` goes back to the release's own
            auto with = ro;
            with.compat = resolved.res.compat;
            with.patch = "cublas=" + had.patch;
            auto kept = resolve_one(text, with);
            if (!kept) {
                return Error(kept.error().code,
                             resolved.res.version_name() + " holds cuBLAS patch " + had.patch +
                                 ", which cannot be kept: " + kept.error().message)
                    .with_hint("--patch cublas takes the newest patch for it, --patch none the "
                               "release's own cuBLAS");
            }
            resolved = std::move(*kept);
            observer.note(resolved.res.version_name() + " keeps its cuBLAS patch " + had.patch);
        }
        std::string now = resolved.res.cublas_patch ? resolved.res.cublas_patch->label : "";
        if (had.found && now != had.patch && !had.profile.empty() &&
            had.profile != resolved.res.profile && ro.profile == "runtime") {
            // swapping its cuBLAS changes nothing else: the profile it was installed with stays
            // (the default profile never drops components from a fuller one)
            auto with = ro;
            with.compat = resolved.res.compat;
            with.patch = now.empty() ? "none" : "cublas=" + now;
            with.profile = had.profile;
            resolved = CUDAENV_TRY(resolve_one(text, with));
            observer.note(resolved.res.version_name() + " keeps its " + had.profile + " profile");
        }
        for (const auto& n : advisories_for(session, resolved.res)) {
            // said, not refused: whoever installs an affected release may have a reason
            observer.note(n.acknowledged.empty()
                              ? "advisory: " + n.text + " (fix: " + n.fix + ")"
                              : "advisory (acknowledged: " + n.acknowledged + "): " + n.text);
        }
        if (resolved.res.compat) {
            auto& res = resolved.res;
            res.forward_compat_gpus = CUDAENV_TRY(forward_compat_gpus(session));
            if (ro.compat) { // asked now, not kept: this machine must be able to use them
                CUDAENV_TRY(check_forward_compat_here(session, res, res.forward_compat_gpus));
            }
        }
        for (const auto& a : resolved.res.archives) {
            if (local.count(a.artifact.sha256)) {
                used.insert(a.artifact.sha256);
            }
        }
        todo.push_back(std::move(resolved));
    }
    for (const auto& [sha, file] : local) {
        if (!used.count(sha)) {
            return Error(ErrorCode::usage,
                         "--archive '" + file + "' (sha256 " + sha.substr(0, 16) +
                             "...) is none of the archives to install")
                .with_hint("cudaenv resolve SPEC --json lists each archive's sha256");
        }
    }
    return todo;
}

/// A mirror's recompressed archives (mirror/recompressed.hpp): offered when a mirror is the
/// download base, unless CUDAENV_RECOMPRESSED=off. The index is fetched (once, and only when an
/// archive is to be downloaded) and must be signed by a key this machine trusts.
install::Alternates recompressed_alternates(const Session& session) {
    std::string base = session.base_url();
    auto off = session.getenv("CUDAENV_RECOMPRESSED");
    if (base == manifest::k_nvidia_base || (off && (*off == "off" || *off == "0"))) {
        return {};
    }
    return [base,
            policy = session.download_policy(),
            limit = session.channel_timeout(),
            anchors = trust_anchors(
                session)]() mutable -> Result<std::map<std::string, install::Alternate>> {
        // the same keys, revocations and root metadata as the update channel's bundles
        auto trust = CUDAENV_TRY(channel::load_trust(anchors));
        policy.start_deadline(limit, "CUDAENV_CHANNEL_TIMEOUT");
        auto index = CUDAENV_TRY(mirror::fetch_index(base, policy, trust.ring()));
        std::map<std::string, install::Alternate> out;
        if (!index) {
            return out; // an ordinary mirror
        }
        for (const auto& [sha, a] : index->by_original) {
            auto url = CUDAENV_TRY(manifest::join_url(base, a.path, a.original_path));
            out[sha] = {url, a.sha256, a.size, archive::Compression::zstd};
        }
        return out;
    };
}

} // namespace

install::Options install_options(const Session& session, unsigned jobs, bool dry_run) {
    install::Options io;
    io.base_url = session.base_url();
    io.alternates = recompressed_alternates(session);
    io.policy = session.download_policy();
    io.jobs = std::max(1u, jobs);
    io.dry_run = dry_run;
    io.lock_timeout = session.lock_timeout();
    if (auto v = session.env_number_value("CUDAENV_EXTRACT_MAX_BYTES")) {
        io.limits.max_total_bytes = *v;
        io.limits.max_entry_bytes = std::min(io.limits.max_entry_bytes, io.limits.max_total_bytes);
    }
    if (auto v = session.env_number_value("CUDAENV_EXTRACT_MAX_ENTRIES")) {
        io.limits.max_entries = *v;
    }
    auto exe = session.exe_path;
    io.check_libraries = [exe](const std::filesystem::path& dir,
                               const std::vector<std::string>& files) {
        return install::check_libraries_in_child(exe, dir, files);
    };
    return io;
}

void rehash_after_change(Session& session, const Warn& warn) {
    auto r = activate::rehash(session.root(), session.shim_exe(), session.lock_timeout());
    if (!r && warn) {
        warn("could not rehash the shims: " + r.error().full_message());
    }
}

Result<InstallReport>
install(Session& session, const InstallRequest& request, InstallObserver& observer) {
    // the libraries an install uses, loaded here on the main thread (a broken copy on
    // LD_LIBRARY_PATH is this one-line error, never an abort in a worker)
    CUDAENV_TRY(sys::load(sys::k_curl | sys::k_archive | sys::k_crypto));
    const auto* catalog = CUDAENV_TRY(session.catalog());
    CUDAENV_TRY(
        to_resolve_options(request.spec_options, session)); // a bad option before anything else
    std::map<std::string, std::string> local; // sha256 -> the file given with --archive
    for (const auto& file : request.archives) {
        auto h = CUDAENV_TRY(fetch::hash_file(file));
        local[h.sha256] = file;
    }
    auto io = install_options(session, request.jobs, request.dry_run);
    io.repair = request.repair;
    auto root = session.root();
    // the manifests plus the indexes this root trusted before (--allow-unpinned), read once
    auto trusted = CUDAENV_TRY(manifest::with_trusted(*catalog, root.dir));
    InstallReport report;
    auto specs = CUDAENV_TRY(specs_to_install(session, *catalog, request, report, observer));
    auto todo = CUDAENV_TRY(resolve_all(session, trusted, specs, request, local, observer));
    for (const auto& resolved : todo) {
        const Resolution& res = resolved.res;
        for (const auto& w : machine_check(session, *res.cuda).warnings) {
            observer.machine_warning(w);
        }
        for (const auto& a : res.archives) {
            auto it = local.find(a.artifact.sha256);
            if (it != local.end() && !request.dry_run) {
                CUDAENV_TRY(stage_local_archive(it->second, it->first, root.downloads()));
            }
        }
        observer.starting(res);
        auto out = install::install(
            root, res, io, [&observer](const install::Event& e) { observer.event(e); });
        observer.finished(out ? &*out : nullptr);
        if (!out) {
            return std::move(out).error();
        }
        report.changed = report.changed || out->changed;
        report.outcomes.push_back(std::move(*out));
    }
    if (report.changed && !request.dry_run) {
        rehash_after_change(session, [&observer](const std::string& w) { observer.warning(w); });
    }
    if (report.match && !request.dry_run) {
        // pin the project to what was installed (or found installed), as `use --match` would
        auto& m = *report.match;
        if (!m.installed) {
            m.installed = report.outcomes.back().version;
            m.why.back() = m.found + " was built for CUDA " + m.cuda.str() + " (" + m.cuda_from +
                           "): installed " + m.spec + " as " + *m.installed;
        }
        report.pin = CUDAENV_TRY(activate::write_project_pin(root, session.cwd, *m.installed));
    }
    return report;
}

} // namespace cudaenv::ops
