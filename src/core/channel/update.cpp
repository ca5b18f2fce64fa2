#include "update.hpp"

#include "../failpoint.hpp"
#include "../fs.hpp"
#include "../manifest/advisories.hpp"
#include "../manifest/codec.hpp"
#include "../manifest/gpu_support.hpp"
#include "../sha256.hpp"
#include "../store/lock.hpp"
#include "../text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>

namespace cudaenv::channel {

namespace {

namespace fs = std::filesystem;

Result<manifest::GpuSupport> gpus_of(const manifest::ManifestFiles& files,
                                     const std::string& shown) {
    auto it = files.find("gpu-support.json");
    if (it == files.end()) {
        return manifest::GpuSupport{};
    }
    auto doc = CUDAENV_TRY(manifest::parse_json_text(it->second, shown + "/gpu-support.json"));
    return manifest::parse_gpu_support(doc, shown + "/gpu-support.json");
}

constexpr const char* k_pins_schema = "cudaenv.pins/1";

/// Every pin this machine (or user) took before, by both keys: <state>/<chain>/pins.json, the
/// own state's over the machine's. A release a later set dropped is still remembered, so adding
/// it back with another hash is a change like any other. A damaged file fails closed.
Result<KnownPins> pin_history(const TrustState& trust) {
    KnownPins known;
    std::vector<fs::path> states = trust.anchors.upstream_states;
    states.push_back(trust.anchors.state);
    for (const auto& state : states) {
        fs::path file = chain_dir(state, trust.root.anchor) / "pins.json";
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(file, ec))) {
            continue;
        }
        auto text = read_text_file(file);
        auto doc = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
        if (!doc.is_object() || doc.value("schema", "") != k_pins_schema || !doc.contains("pins") ||
            !doc["pins"].is_object()) {
            return Error(ErrorCode::integrity,
                         "trust state '" + file.string() + "' is damaged: not a " + k_pins_schema +
                             " record")
                .with_hint("remove it and run `cudaenv update` again (docs/channel.md)");
        }
        for (const auto& [key, sha] : doc["pins"].items()) {
            if (sha.is_string()) {
                known[key] = sha.get<std::string>();
            }
        }
    }
    return known;
}

Status record_pin_history(const TrustState& trust, KnownPins known, const std::vector<Pin>& pins) {
    add_pins(known, pins);
    nlohmann::ordered_json doc;
    doc["schema"] = k_pins_schema;
    doc["pins"] = nlohmann::ordered_json::object();
    for (const auto& [key, sha] : known) {
        doc["pins"][key] = sha;
    }
    fs::path dir = chain_dir(trust.anchors.state, trust.root.anchor);
    CUDAENV_TRY(make_dirs(dir));
    return write_file_atomic(dir / "pins.json", doc.dump() + "\n");
}

/// The changes from the set in use to the bundle's, the repinned files last; errors when the
/// bundle's do not load, or change a pin -- one the shipped set, the pin history or the set in
/// use knows, by its place or by what it is -- that no declaration in its repins.json covers.
Result<std::vector<SetChange>> changes_of(const ManifestsInUse& before,
                                          const fs::path& floor,
                                          const KnownPins& history,
                                          const Bundle& bundle,
                                          const std::string& url) {
    auto after = manifest::parse_catalog(bundle.files, url);
    if (!after) {
        return Error(ErrorCode::integrity,
                     "the manifests in the bundle do not load: " + after.error().message)
            .with_hint("the manifests in use stay as they are; tell whoever signs the channel");
    }
    auto after_gpus = gpus_of(bundle.files, url);
    if (!after_gpus) {
        return Error(ErrorCode::integrity,
                     "the manifests in the bundle do not load: " + after_gpus.error().message);
    }
    std::vector<Repin> repins;
    if (auto it = bundle.files.find(k_repins_file); it != bundle.files.end()) {
        repins = CUDAENV_TRY(parse_repins(it->second, url + "/" + k_repins_file));
    }
    // The set in use could be unreadable (a floor damaged by hand): everything is then new --
    // but its pins are still judged against the shipped set's and the history.
    manifest::Catalog old;
    manifest::GpuSupport old_gpus;
    if (auto c = manifest::load_catalog(before.dir)) {
        old = std::move(*c);
    }
    if (auto g = manifest::load_gpu_support(before.dir)) {
        old_gpus = std::move(*g);
    }
    KnownPins known;
    if (before.dir != floor) {
        if (auto shipped = manifest::load_catalog(floor)) {
            add_pins(known, pins_of(*shipped));
        }
    }
    for (const auto& [key, sha] : history) {
        known[key] = sha;
    }
    add_pins(known, pins_of(old));
    auto out = diff_sets(old, old_gpus, *after, *after_gpus);
    // advisories.json: a set that carries one must carry one that loads
    manifest::Advisories after_advisories;
    if (auto it = bundle.files.find(manifest::k_advisories_file); it != bundle.files.end()) {
        std::string shown = url + "/" + manifest::k_advisories_file;
        auto doc = manifest::parse_json_text(it->second, shown);
        auto parsed = doc ? manifest::parse_advisories(*doc, shown)
                          : Result<manifest::Advisories>(std::move(doc).error());
        if (!parsed) {
            return Error(ErrorCode::integrity,
                         "the manifests in the bundle do not load: " + parsed.error().message)
                .with_hint("the manifests in use stay as they are; tell whoever signs the channel");
        }
        after_advisories = std::move(*parsed);
    }
    auto old_advisories = manifest::load_advisories(before.dir);
    auto advisories = diff_advisories(old_advisories ? *old_advisories : manifest::Advisories{},
                                      after_advisories);
    out.insert(out.end(), advisories.begin(), advisories.end());
    auto pins = pin_changes(known, *after);
    if (auto bad = undeclared(pins, repins); !bad.empty()) {
        const auto& c = bad.front();
        return Error(ErrorCode::integrity,
                     "manifests bundle '" + printable(url) + "' changes the sha256 pinned for " +
                         c.now.where + " (" + c.now.subject + ") from " + c.was + " to " +
                         c.now.sha256 + " without declaring it" +
                         (bad.size() > 1 ? " (and " + std::to_string(bad.size() - 1) + " more pins)"
                                         : std::string()))
            .with_hint("a channel may add releases and verdicts; a hash NVIDIA published changes "
                       "only with an entry in the set's repins.json (docs/channel.md). The "
                       "manifests in use stay as they are");
    }
    for (const auto& c : pins) {
        out.push_back({SetChange::Kind::repinned,
                       c.now.where,
                       c.now.subject + ": sha256 " + c.was.substr(0, 12) + "... -> " +
                           c.now.sha256.substr(0, 12) + "... (" + join(c.declared, "; ") + ")"});
    }
    return out;
}

std::vector<fs::path> roots_of(const store::Root& root) {
    std::vector<fs::path> r{root.dir};
    r.insert(r.end(), root.upstreams.begin(), root.upstreams.end());
    return r;
}

/// The set in use that a new bundle must not go below: the newest among the floor and the roots'
/// sets whose signers the keys trusted now still accept (recorded at update; for a set an older
/// cudaenv took, every key its bundle names). A set signed by a key since revoked or dropped
/// from the root metadata no longer holds hosts above it: the next update replaces it even with
/// a lower serial.
ManifestsInUse
baseline(const UpdateRequest& req, const TrustState& trust, std::vector<std::string>& notes) {
    auto m = choose_manifests(req.floor, roots_of(req.root), [&](const ManifestsInUse& set) {
        return trust.distrust_set(set.release, set.dir);
    });
    for (const auto& w : m.warnings) {
        if (w.find(" is not used: ") != std::string::npos) {
            notes.push_back(w + ": it does not count against this update");
        }
    }
    return m;
}

/// The root's own set in use when its signers are no longer trusted (a revoked or dropped key):
/// not used by any command already; `update` clears it -- current.json removed, the set to the
/// trash -- so a user's root holds nothing a leaked key signed once the machine has revoked it.
Status clear_untrusted(const UpdateRequest& req,
                       const TrustState& trust,
                       std::vector<std::string>& notes) {
    auto rec = read_current(req.root.dir);
    if (!rec || !*rec) {
        return Ok{};
    }
    fs::path dir = req.root.manifests() / (*rec)->set;
    auto release = read_release(dir);
    if (!release) {
        return Ok{};
    }
    std::string why = trust.distrust_set(*release, dir);
    if (why.empty()) {
        return Ok{};
    }
    auto lock = CUDAENV_TRY(store::Lock::acquire(req.root.dir, req.lock_timeout));
    auto again = read_current(req.root.dir);
    if (!again || !*again || (*again)->set != (*rec)->set) {
        return Ok{}; // another update switched meanwhile
    }
    fs::path record = req.root.manifests() / k_current_record;
    if (::unlink(record.c_str()) != 0) {
        return Error(ErrorCode::filesystem,
                     "cannot remove '" + record.string() + "': " + errno_text(errno));
    }
    CUDAENV_TRY(store::sync_dir(req.root.manifests()));
    fs::path aside = req.root.trash() / ("manifests-" + (*rec)->set + "-" + random_hex());
    if (::rename(dir.c_str(), aside.c_str()) == 0) {
        remove_tree(aside);
    }
    notes.push_back("removed the manifests set serial " + std::to_string((*rec)->serial) +
                    " from '" + req.root.manifests().string() + "': " + why);
    return Ok{};
}

/// The channel's root metadata versions after the one trusted now, each taken in turn.
Result<std::vector<RootMetadata>> follow_roots(const UpdateRequest& req, TrustState& trust) {
    std::vector<RootMetadata> taken;
    std::string base(req.channel);
    while (!base.empty() && base.back() == '/') {
        base.pop_back();
    }
    for (std::uint64_t step = 0; step < k_max_root_steps; ++step) {
        std::string url = base + "/root/" + std::to_string(trust.root.version + 1) + ".root";
        auto bytes = CUDAENV_TRY(fetch::fetch_text_if_there(url, req.policy, k_max_root_bytes));
        if (!bytes) {
            break;
        }
        auto next = CUDAENV_TRY(open_root(*bytes, trust.root, url, req.now, trust.revoked));
        trust.root = next;
        taken.push_back(std::move(next));
    }
    if (auto expires = parse_utc(trust.root.expires); expires && *expires <= req.now) {
        return Error(ErrorCode::integrity,
                     "the channel's root metadata (version " + std::to_string(trust.root.version) +
                         ", " + trust.root.origin + ") expired on " + trust.root.expires +
                         ": its keys have not been re-signed since (a frozen channel or mirror)")
            .with_hint("the manifests in use stay as they are; ask whoever runs the channel to "
                       "publish root/" +
                       std::to_string(trust.root.version + 1) + ".root");
    }
    return taken;
}

Error rollback(const Bundle& b, const ManifestsInUse& in_use, const std::string& url) {
    return Error(ErrorCode::integrity,
                 "manifests bundle '" + printable(url) + "' has serial " +
                     std::to_string(b.info.serial) + ", older than the serial in use (" +
                     std::to_string(in_use.release.serial) + ", " + in_use.origin_text() +
                     "): refusing to go back")
        .with_hint("a mirror or channel serving an old bundle; the manifests in use stay as "
                   "they are");
}

Error below_floor(const Bundle& b, const Floor& floor, const std::string& url) {
    return Error(ErrorCode::integrity,
                 "manifests bundle '" + printable(url) + "' has serial " +
                     std::to_string(b.info.serial) + ", older than serial " +
                     std::to_string(floor.serial) + " this machine took on " +
                     floor.updated.substr(0, 10) + " (its rollback floor, '" + floor.file.string() +
                     "'): refusing to go back")
        .with_hint("the floor outlives reinstalling cudaenv; it is lowered only when the keys "
                   "that signed it are revoked (docs/channel.md, \"The rollback floor\")");
}

/// Writes the bundle's set into a new stage and reads it back; returns the stage.
Result<TempDir> stage_set(const store::Root& root,
                          const Bundle& b,
                          std::string_view bytes,
                          const std::string& channel) {
    TempDir staged = CUDAENV_TRY(root.make_stage("manifests"));
    const fs::path& stage = staged.path();
    auto dir = CUDAENV_TRY(Contained::open(stage, false));
    for (const auto& [rel, text] : b.files) {
        CUDAENV_TRY(dir.write_file(rel, text));
    }
    Release r;
    r.serial = b.info.serial;
    r.created = b.info.created;
    r.expires = b.info.expires;
    r.requires_version = b.info.requires_version;
    r.channel = channel;
    r.signed_by = key_hexes(b.signers);
    CUDAENV_TRY(dir.write_file(k_release_file, release_to_text(r)));
    CUDAENV_TRY(dir.write_file(k_bundle_file, bytes));
    CUDAENV_TRY(store::make_world_readable(stage));
    CUDAENV_TRY(store::sync_tree(stage));
    if (auto back = manifest::load_catalog(stage); !back) {
        return Error(ErrorCode::filesystem,
                     "the staged manifests do not read back: " + back.error().message);
    }
    return staged;
}

/// Sets in `root` other than `keep` and older than an hour: moved to the trash, then removed. A
/// command that chose a set moments ago (readers hold no lock) still finds its files.
void drop_old_sets(const store::Root& root, const std::vector<std::string>& keep) {
    std::error_code ec;
    auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
    for (fs::directory_iterator it(root.manifests(), ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        std::error_code tec;
        if (!is_set_name(name) || std::find(keep.begin(), keep.end(), name) != keep.end() ||
            fs::last_write_time(it->path(), tec) > hour_ago) {
            continue;
        }
        fs::path to = root.trash() / ("manifests-" + name + "-" + random_hex());
        if (::rename(it->path().c_str(), to.c_str()) == 0) {
            remove_tree(to);
        }
    }
}

} // namespace

std::string bundle_url(std::string_view channel) {
    std::string u(channel);
    while (!u.empty() && u.back() == '/') {
        u.pop_back();
    }
    return u + "/" + k_bundle_file;
}

Result<Bundle> verify_bundle_file(const fs::path& file, const Trust& trust) {
    auto bytes = CUDAENV_TRY(read_text_file(file));
    return open_bundle(bytes, trust, file.string());
}

Result<UpdateOutcome> update(const UpdateRequest& req) {
    UpdateOutcome out;
    out.url = bundle_url(req.channel);
    TrustState trust = req.trust;
    CUDAENV_TRY(verify_first_root(trust));
    auto taken = CUDAENV_TRY(follow_roots(req, trust));
    for (const auto& r : taken) {
        out.roots_taken.push_back(r.version);
    }
    out.root_version = trust.root.version;
    if (!req.check) {
        // a revocation takes effect even when the bundle below turns out to be refused
        CUDAENV_TRY(record_roots(trust.anchors, taken));
        CUDAENV_TRY(record_revocations(trust));
        CUDAENV_TRY(req.root.prepare());
        CUDAENV_TRY(clear_untrusted(req, trust, out.notes));
    }
    Trust checked{trust.ring(), req.now, req.cudaenv_version};
    out.before = baseline(req, trust, out.notes);
    out.floor = trust.floor();
    auto bytes = CUDAENV_TRY(fetch::fetch_text(out.url, req.policy, k_max_bundle_bytes));
    auto bundle = CUDAENV_TRY(open_bundle(bytes, checked, out.url));
    failpoint::hit("update-fetched");
    out.offered = bundle.info;
    out.key_id = bundle.key_id;
    if (bundle.info.serial < out.before.release.serial) {
        return rollback(bundle, out.before, out.url);
    }
    if (out.floor && bundle.info.serial < out.floor->serial) {
        return below_floor(bundle, *out.floor, out.url);
    }
    if (bundle.info.serial == out.before.release.serial) {
        return out; // up to date
    }
    auto history = CUDAENV_TRY(pin_history(trust));
    out.changes = CUDAENV_TRY(changes_of(out.before, req.floor, history, bundle, out.url));
    if (req.check) {
        out.state = UpdateOutcome::State::available;
        return out;
    }

    CUDAENV_TRY(req.root.prepare());
    auto lock = CUDAENV_TRY(store::Lock::acquire(req.root.dir, req.lock_timeout));
    req.root.sweep(); // what a killed run left in .staging and .trash
    sweep_temp_files(req.root.manifests(), k_current_record);
    // Another update may have switched while this one fetched.
    std::vector<std::string> again;
    auto now_in_use = baseline(req, trust, again);
    if (now_in_use.release.serial >= bundle.info.serial) {
        out.before = now_in_use;
        out.changes.clear();
        return out;
    }
    auto previous = read_current(req.root.dir);
    TempDir staged = CUDAENV_TRY(stage_set(req.root, bundle, bytes, req.channel));
    const fs::path& stage = staged.path();
    failpoint::hit("update-staged");

    Sha256 h;
    h.update(bytes);
    std::string sha = h.hex_digest();
    CurrentRecord rec;
    rec.set = std::to_string(bundle.info.serial) + "-" + sha.substr(0, 12);
    rec.serial = bundle.info.serial;
    rec.sha256 = sha;
    rec.channel = req.channel;
    rec.updated = format_utc(std::time(nullptr));
    fs::path dest = req.root.manifests() / rec.set;
    std::error_code ec;
    if (fs::exists(fs::symlink_status(dest, ec))) {
        // a set of the same name that never became current (a kill before the switch): its
        // files were written by a run that died; this run's are known good
        fs::path aside = req.root.trash() / ("manifests-" + rec.set + "-" + random_hex());
        if (::rename(dest.c_str(), aside.c_str()) != 0) {
            return Error(ErrorCode::filesystem,
                         "cannot move '" + dest.string() + "' aside: " + errno_text(errno));
        }
        remove_tree(aside);
    }
    CUDAENV_TRY(store::publish_dir(stage, dest));
    staged.release();
    failpoint::hit("update-published");
    auto dir = CUDAENV_TRY(Contained::open(req.root.manifests(), false));
    CUDAENV_TRY(dir.write_file(k_current_record, current_to_text(rec)));
    failpoint::hit("update-switched");
    Floor floor;
    floor.serial = bundle.info.serial;
    floor.sha256 = sha;
    floor.signed_by = key_hexes(bundle.signers);
    floor.updated = rec.updated;
    CUDAENV_TRY(raise_floor(trust, floor));
    if (auto taken_set = manifest::parse_catalog(bundle.files, out.url)) {
        CUDAENV_TRY(record_pin_history(trust, history, pins_of(*taken_set)));
    }
    std::vector<std::string> keep{rec.set};
    if (previous && *previous) {
        keep.push_back((*previous)->set);
    }
    drop_old_sets(req.root, keep);
    out.state = UpdateOutcome::State::updated;
    out.set_dir = dest;
    return out;
}

} // namespace cudaenv::channel
