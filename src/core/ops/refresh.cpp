#include "refresh.hpp"

#include "core/channel/sets.hpp"
#include "core/fs.hpp"
#include "core/manifest/advisories.hpp"
#include "core/manifest/codec.hpp"
#include "core/manifest/generate.hpp"
#include "core/manifest/gpu_support.hpp"
#include "core/sys/dynlib.hpp"

#include <cstdio>
#include <ctime>

namespace cudaenv::ops {

namespace fs = std::filesystem;

namespace {

/// The previous manifests' files into `to`: the top-level *.json (profiles.json, repins.json,
/// release.json, ...) and the release folders; never a bundle or anything else.
Status copy_manifests(const fs::path& from, const fs::path& to) {
    CUDAENV_TRY(make_dirs(to));
    std::error_code ec;
    for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (it->is_symlink()) {
            continue;
        }
        if (it->is_directory()) {
            fs::copy(it->path(), to / name, fs::copy_options::recursive, ec);
        } else if (it->is_regular_file() && name.ends_with(".json")) {
            fs::copy_file(it->path(), to / name, ec);
        }
        if (ec) {
            break;
        }
    }
    if (ec) {
        return Error(ErrorCode::filesystem,
                     "cannot copy the manifests '" + from.string() + "': " + ec.message());
    }
    return Ok{};
}

/// Now in UTC: "20261215" (`day`) or "2026-12-15T10:00:00Z".
std::string utc_now(bool day) {
    std::time_t now = std::time(nullptr);
    char buf[32];
    if (day) {
        std::strftime(buf, sizeof buf, "%Y%m%d", std::gmtime(&now));
    } else {
        std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    }
    return buf;
}

} // namespace

Result<RefreshReport> refresh_reference(Session& session, const RefreshRequest& r) {
    CUDAENV_TRY(sys::load(sys::k_crypto)); // sha256 of the inputs
    if (r.reference.empty() || r.out.empty() ||
        (r.inputs.nvidia.empty() && r.inputs.psirt.empty())) {
        return Error(ErrorCode::usage,
                     "__refresh needs --reference DIR, --out DIR and --nvidia DIR or --psirt DIR");
    }
    RefreshReport report;
    fs::path previous = r.previous.empty() ? session.manifests_path() : fs::path(r.previous);
    report.previous = previous.string();
    auto before_release = CUDAENV_TRY(channel::read_release(previous));
    report.previous_serial = before_release.serial;
    auto before = CUDAENV_TRY(manifest::load_catalog(previous));
    auto plan = CUDAENV_TRY(refresh::plan_reference(r.reference, r.inputs));
    report.added = plan.added;
    report.bulletins_seen = plan.bulletins_seen;
    report.bulletins_skipped = plan.bulletins_skipped;
    if (plan.added.empty()) {
        return report; // nothing new: nothing to sign, nothing written
    }
    fs::path out(r.out);
    std::error_code ec;
    if (fs::exists(fs::symlink_status(out, ec))) {
        return Error(ErrorCode::conflict, "'" + out.string() + "' already exists")
            .with_hint("__refresh makes a new folder; name one that does not exist");
    }
    fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
    auto stage = CUDAENV_TRY(TempDir::make(parent, "." + out.filename().string() + ".refresh"));
    fs::path ref = stage.path() / "reference";
    fs::path mf = stage.path() / "manifests";
    CUDAENV_TRY(refresh::write_reference(r.reference, plan, ref));
    CUDAENV_TRY(copy_manifests(previous, mf));
    auto generated = manifest::generate_manifests(ref, mf);
    if (!generated) {
        return Error(generated.error().code,
                     "the refreshed reference does not generate: " + generated.error().message)
            .with_hint("nothing was written");
    }
    // the new set's release: a serial above the previous one (YYYYMMDDNN)
    channel::Release release;
    std::string today = r.today.empty() ? utc_now(true) : r.today;
    std::uint64_t serial = std::stoull(today) * 100 + 1;
    release.serial = std::max(serial, before_release.serial + 1);
    release.created = utc_now(false);
    release.requires_version =
        before_release.requires_version.empty() ? "0.1.0" : before_release.requires_version;
    CUDAENV_TRY(write_file_atomic(mf / channel::k_release_file, channel::release_to_text(release)));
    report.serial = release.serial;

    // what changed against the manifests in use
    auto after = CUDAENV_TRY(manifest::load_catalog(mf));
    auto before_gpus = manifest::load_gpu_support(previous);
    auto after_gpus = CUDAENV_TRY(manifest::load_gpu_support(mf));
    report.changes = channel::diff_sets(
        before, before_gpus ? *before_gpus : manifest::GpuSupport{}, after, after_gpus);
    auto before_adv = manifest::load_advisories(previous);
    auto after_adv = CUDAENV_TRY(manifest::load_advisories(mf));
    auto adv =
        channel::diff_advisories(before_adv ? *before_adv : manifest::Advisories{}, after_adv);
    report.changes.insert(report.changes.end(), adv.begin(), adv.end());
    channel::KnownPins known;
    channel::add_pins(known, channel::pins_of(before));
    auto pins = channel::pin_changes(known, after);
    std::vector<channel::Repin> repins;
    if (auto text = read_text_file(mf / channel::k_repins_file)) {
        repins = CUDAENV_TRY(channel::parse_repins(*text, (mf / channel::k_repins_file).string()));
    }
    if (auto bad = channel::undeclared(pins, repins); !bad.empty()) {
        const auto& c = bad.front();
        return Error(ErrorCode::integrity,
                     "the refreshed manifests change the sha256 pinned for " + c.now.where + " (" +
                         c.now.subject + ") from " + c.was + " to " + c.now.sha256 +
                         " without declaring it")
            .with_hint("a changed pin needs an entry in repins.json (docs/channel.md); nothing "
                       "was written");
    }
    for (const auto& c : pins) {
        report.changes.push_back({channel::SetChange::Kind::repinned,
                                  c.now.where,
                                  c.now.subject + ": sha256 " + c.was.substr(0, 12) + "... -> " +
                                      c.now.sha256.substr(0, 12) + "..."});
    }
    // publish: the stage becomes the output folder in one rename
    if (::rename(stage.path().c_str(), out.c_str()) != 0) {
        return Error(errno == EEXIST || errno == ENOTEMPTY ? ErrorCode::conflict
                                                           : ErrorCode::filesystem,
                     "cannot make '" + out.string() + "': " + errno_text(errno));
    }
    stage.release();
    report.out = out.string();
    report.manifests = (out / "manifests").string();
    return report;
}

} // namespace cudaenv::ops
