#include "trust.hpp"

#include "../fs.hpp"
#include "../store/lock.hpp"
#include "../text.hpp"
#include "keys.hpp"
#include "sets.hpp"
#include "strict_json.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace cudaenv::channel {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr EnvelopeKind k_root_kind{
    k_root_format,
    "cudaenv-root/",
    "root metadata",
    "root metadata",
    k_max_root_bytes,
    "upgrade cudaenv to follow this channel's keys; the manifests in use stay as they are"};

constexpr std::size_t k_max_root_keys = 64;

/// The chain a first root metadata starts: a 64-bit FNV-1a of its bytes (the built-in one's:
/// its keys and thresholds as text), in hex. Computed on every command that chooses manifests,
/// so not SHA-256 (no libcrypto); it names a folder and guards nothing -- only root writes
/// /etc/cudaenv/channel.root. Another first root is another chain, with a state of its own.
std::string anchor_of(std::string_view bytes) {
    std::uint64_t h = 14695981039346656037ull;
    for (char c : bytes) {
        h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    }
    std::uint8_t out[8];
    for (int i = 0; i < 8; ++i) {
        out[i] = static_cast<std::uint8_t>(h >> (56 - 8 * i));
    }
    return to_hex(out, 8);
}

std::string builtin_text(const RootMetadata& r) {
    std::string s = "cudaenv-root built in\n";
    for (const auto* role : {&r.root, &r.bundle}) {
        s += std::to_string(role->threshold);
        for (const auto& k : role->keys) {
            s += " " + to_hex(k.raw.data(), k.raw.size());
        }
        s += "\n";
    }
    return s;
}

std::vector<std::string> ids_of(const Role& role) {
    std::vector<std::string> out;
    for (const auto& k : role.keys) {
        out.push_back(k.id());
    }
    return out;
}

/// The payload of root metadata, read exactly. Signatures are checked by the caller; `check_ids`
/// (hashing each key: libcrypto) where the document comes from outside, not from the state
/// written after it was checked.
Result<RootMetadata>
parse_root_payload(std::string_view payload, std::string_view origin, bool check_ids = true) {
    std::string what = "root metadata '" + printable(origin) + "'";
    auto bad = [&](const std::string& why) {
        return Error(ErrorCode::integrity, what + ": " + why);
    };
    json doc = CUDAENV_TRY(parse_strict(payload, {6}, what));
    if (!doc.is_object()) {
        return bad("its payload is not a JSON object");
    }
    auto schema = doc.find("schema");
    if (schema == doc.end() || !schema->is_string()) {
        return bad("'schema' is missing");
    }
    if (*schema != k_root_schema) {
        if (format_number(schema->get<std::string>(), "cudaenv.root/") > 1) {
            return Error(ErrorCode::incompatible,
                         what + " has schema " + schema->get<std::string>() +
                             "; this cudaenv reads " + std::string(k_root_schema))
                .with_hint(std::string(k_root_kind.newer_hint));
        }
        return bad("unknown schema '" + printable(schema->get<std::string>()) + "'");
    }
    CUDAENV_TRY(check_fields(
        doc, {"schema", "version", "created", "expires", "keys", "roles"}, what, "its payload"));
    RootMetadata r;
    auto version = doc.find("version");
    if (version == doc.end() || !version->is_number_unsigned() || *version == 0) {
        return bad("'version' is missing or not a positive whole number");
    }
    r.version = version->get<std::uint64_t>();
    for (auto [key, field] : {std::pair{"created", &r.created}, {"expires", &r.expires}}) {
        auto it = doc.find(key);
        if (it == doc.end() || !it->is_string() || !parse_utc(it->get<std::string>())) {
            return bad(std::string("'") + key + "' is missing or not a UTC time");
        }
        *field = it->get<std::string>();
    }
    auto created = *parse_utc(r.created), expires = *parse_utc(r.expires);
    if (expires <= created || expires - created > k_max_root_days * 86400L) {
        return bad("valid from " + r.created + " to " + r.expires + ": more than " +
                   std::to_string(k_max_root_days) + " days, or none");
    }
    auto keys = doc.find("keys");
    if (keys == doc.end() || !keys->is_object() || keys->empty() ||
        keys->size() > k_max_root_keys) {
        return bad("'keys' is missing, empty or holds more than " +
                   std::to_string(k_max_root_keys) + " keys");
    }
    std::map<std::string, PublicKey> by_id;
    for (const auto& [id, entry] : keys->items()) {
        std::string where = "'keys." + printable(id) + "'";
        CUDAENV_TRY(check_fields(entry, {"public", "comment"}, what, where));
        auto pub = entry.find("public");
        auto comment = entry.find("comment");
        if (pub == entry.end() || !pub->is_string() ||
            (comment != entry.end() && !comment->is_string())) {
            return bad(where + ": 'public' is missing, or a field is not text");
        }
        std::string line = std::string(k_public_key_tag) + " " + pub->get<std::string>();
        if (comment != entry.end() && !comment->get<std::string>().empty()) {
            line += " " + comment->get<std::string>();
        }
        auto key = parse_public_key(line, std::string(origin) + " " + where);
        if (!key) {
            return bad(key.error().message);
        }
        key->origin = std::string(origin);
        if (check_ids && key->id() != id) {
            return bad(where + " is not that key's id (it is " + key->id() + ")");
        }
        by_id.emplace(id, std::move(*key));
    }
    auto roles = doc.find("roles");
    if (roles == doc.end()) {
        return bad("'roles' is missing");
    }
    CUDAENV_TRY(check_fields(*roles, {"root", "bundle"}, what, "'roles'"));
    for (auto [name, role] : {std::pair{"root", &r.root}, {"bundle", &r.bundle}}) {
        std::string where = std::string("'roles.") + name + "'";
        auto it = roles->find(name);
        if (it == roles->end()) {
            return bad(where + " is missing");
        }
        CUDAENV_TRY(check_fields(*it, {"keys", "threshold"}, what, where));
        auto ids = it->find("keys");
        auto threshold = it->find("threshold");
        if (ids == it->end() || !ids->is_array() || threshold == it->end() ||
            !threshold->is_number_unsigned()) {
            return bad(where + " needs 'keys' (a list) and 'threshold' (a whole number)");
        }
        std::set<std::string> seen;
        for (const auto& id : *ids) {
            if (!id.is_string() || !by_id.count(id.get<std::string>()) ||
                !seen.insert(id.get<std::string>()).second) {
                return bad(where + " names a key that 'keys' does not hold, or one twice");
            }
            role->keys.push_back(by_id.at(id.get<std::string>()));
        }
        auto t = threshold->get<std::uint64_t>();
        if (t == 0 || t > role->keys.size()) {
            return bad(where + ": a threshold of " + std::to_string(t) + " with " +
                       std::to_string(role->keys.size()) + " keys");
        }
        role->threshold = static_cast<unsigned>(t);
    }
    r.origin = std::string(origin);
    return r;
}

/// That `threshold` of `role`'s keys signed: the ids that did.
Result<std::vector<PublicKey>> role_signed(const Envelope& env,
                                           const Role& role,
                                           const std::string& whose,
                                           std::string_view origin,
                                           const std::vector<PublicKey>& revoked = {}) {
    KeyRing ring;
    for (const auto& k : role.keys) {
        if (std::none_of(revoked.begin(), revoked.end(), [&](const PublicKey& r) {
                return r.raw == k.raw;
            })) {
            ring.keys.push_back(k);
        }
    }
    ring.revoked = revoked;
    ring.threshold = role.threshold;
    ring.from = whose;
    return check_signatures(env, k_root_kind, ring, origin);
}

Result<std::optional<RootMetadata>> newest_recorded(const fs::path& state,
                                                    const std::string& anchor) {
    auto roots = recorded_roots(state, anchor);
    if (roots.empty()) {
        return std::optional<RootMetadata>();
    }
    const std::uint64_t version = roots.back().first;
    const fs::path file = roots.back().second;
    auto bytes = read_text_file(file);
    auto fail = [&](const std::string& why) {
        return Error(ErrorCode::integrity, "trust state '" + file.string() + "' is damaged: " + why)
            .with_hint("remove it and run `cudaenv update` again (docs/channel.md, "
                       "\"Where trust lives\")");
    };
    if (!bytes) {
        return fail(bytes.error().message);
    }
    // written only after its signatures verified: read, not verified again (no libcrypto)
    auto env = split_envelope(*bytes, k_root_kind, file.string());
    if (!env) {
        return fail(env.error().message);
    }
    auto r = parse_root_payload(env->payload, file.string(), false);
    if (!r) {
        return fail(r.error().message);
    }
    if (r->version != version) {
        return fail("it holds version " + std::to_string(r->version));
    }
    r->bytes = *bytes;
    r->anchor = anchor;
    return std::optional(std::move(*r));
}

Result<Floor> read_floor(const fs::path& file) {
    auto fail = [&](const std::string& why) {
        return Error(ErrorCode::integrity, "trust state '" + file.string() + "' is damaged: " + why)
            .with_hint("remove it and run `cudaenv update` again (docs/channel.md)");
    };
    auto text = read_text_file(file);
    if (!text) {
        return fail(text.error().message);
    }
    json doc = json::parse(*text, nullptr, false);
    if (!doc.is_object() || doc.value("schema", "") != k_floor_schema) {
        return fail(std::string("not a ") + k_floor_schema + " record");
    }
    Floor f;
    f.file = file;
    auto serial = doc.find("serial");
    auto signed_by = doc.find("signed_by");
    if (serial == doc.end() || !serial->is_number_unsigned() || signed_by == doc.end() ||
        !signed_by->is_array()) {
        return fail("'serial' or 'signed_by' is missing");
    }
    f.serial = serial->get<std::uint64_t>();
    for (const auto& id : *signed_by) {
        if (!id.is_string()) {
            return fail("'signed_by' holds something other than key ids");
        }
        f.signed_by.push_back(id.get<std::string>());
    }
    f.sha256 = doc.value("sha256", "");
    f.updated = doc.value("updated", "");
    return f;
}

std::string floor_text(const Floor& f) {
    nlohmann::ordered_json j;
    j["schema"] = k_floor_schema;
    j["serial"] = f.serial;
    j["sha256"] = f.sha256;
    j["signed_by"] = f.signed_by;
    j["updated"] = f.updated;
    return j.dump(2) + "\n";
}

Result<std::vector<PublicKey>> key_files(const fs::path& dir, std::string_view extension) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() == extension) {
            files.push_back(it->path());
        }
    }
    if (ec && ec != std::errc::no_such_file_or_directory) {
        return Error(ErrorCode::usage,
                     "cannot read the site's keys in '" + printable(dir.string()) +
                         "': " + ec.message());
    }
    std::sort(files.begin(), files.end());
    std::vector<PublicKey> out;
    for (const auto& f : files) {
        auto text = read_text_file(f);
        if (!text) {
            return Error(ErrorCode::usage, std::move(text).error().message);
        }
        if (text->size() > 4096) {
            return Error(ErrorCode::usage,
                         "key file '" + printable(f.string()) + "': not a key (too long)");
        }
        out.push_back(CUDAENV_TRY(parse_public_key(*text, f.string())));
    }
    return out;
}

} // namespace

Anchors anchors_for(bool is_root, const fs::path& sysroot, const fs::path& root_dir) {
    Anchors a;
    if (is_root) {
        a.fixed = true;
        a.keys_dir = fs::path("/") / k_site_keys_dir;
        a.channel_root = fs::path("/") / k_channel_root_file;
        a.state = fs::path("/") / k_machine_trust_dir;
        return a;
    }
    a.keys_dir = sysroot / k_site_keys_dir;
    a.channel_root = sysroot / k_channel_root_file;
    a.state = root_dir / "trust";
    a.upstream_states.push_back(sysroot / k_machine_trust_dir);
    return a;
}

RootMetadata builtin_root() {
    RootMetadata r;
    r.version = 1;
    r.root.keys = shipped_keys();
    r.root.threshold = 1;
    r.bundle = r.root;
    r.origin = "built in";
    r.anchor = anchor_of(builtin_text(r));
    return r;
}

KeyRing TrustState::ring() const {
    KeyRing ring;
    auto revoked_id = [&](const PublicKey& k) {
        return std::any_of(
            revoked.begin(), revoked.end(), [&](const PublicKey& r) { return r.raw == k.raw; });
    };
    for (const auto& k : root.bundle.keys) {
        if (!revoked_id(k)) {
            ring.keys.push_back(k);
        }
    }
    ring.threshold = root.bundle.threshold;
    for (const auto& k : site) {
        if (!revoked_id(k)) {
            ring.site.push_back(k);
        }
    }
    ring.revoked = revoked;
    ring.from = root.bytes.empty() && root.version == 1
                    ? std::string("the built-in root metadata")
                    : "root metadata version " + std::to_string(root.version);
    return ring;
}

std::vector<std::string> key_hexes(const std::vector<PublicKey>& keys) {
    std::vector<std::string> out;
    for (const auto& k : keys) {
        out.push_back(to_hex(k.raw.data(), k.raw.size()));
    }
    return out;
}

std::string TrustState::distrust(const std::vector<std::string>& signed_by) const {
    auto ring = this->ring();
    auto has = [](const std::vector<PublicKey>& keys, const std::string& hex) {
        return std::any_of(keys.begin(), keys.end(), [&](const PublicKey& k) {
            return to_hex(k.raw.data(), k.raw.size()) == hex;
        });
    };
    std::size_t role = 0;
    bool site_key = false, revoked_key = false;
    for (const auto& hex : signed_by) {
        if (has(revoked, hex)) {
            revoked_key = true;
        } else if (has(ring.keys, hex)) {
            ++role;
        } else if (has(ring.site, hex)) {
            site_key = true;
        }
    }
    if (revoked_key) {
        return "signed by a key this machine has revoked";
    }
    if (site_key || (role > 0 && role >= ring.threshold)) {
        return "";
    }
    if (signed_by.empty()) {
        return "its signers are not recorded";
    }
    if (role > 0) {
        return "signed by " + std::to_string(role) + " of the " + std::to_string(ring.threshold) +
               " keys " + ring.from + " requires";
    }
    return "signed by a key " + ring.from + " no longer names";
}

std::string TrustState::distrust_claimed(const std::vector<std::string>& ids) const {
    auto ring = this->ring();
    std::vector<std::string> hexes;
    for (const auto& id : ids) {
        auto find = [&](const std::vector<PublicKey>& keys) -> const PublicKey* {
            for (const auto& k : keys) {
                if (k.id() == id) {
                    return &k;
                }
            }
            return nullptr;
        };
        if (find(revoked)) {
            return "signed by key " + id + ", which this machine has revoked";
        }
        const PublicKey* k = find(ring.keys);
        k = k ? k : find(ring.site);
        if (!k) {
            return "its bundle names key " + id + ", which " + ring.from + " does not";
        }
        hexes.push_back(to_hex(k->raw.data(), k->raw.size()));
    }
    if (hexes.empty()) {
        return "its bundle names no signer";
    }
    // The cudaenv that took it stopped at the first signature that verified, and the header's
    // other lines were never checked: whichever one it was must be enough on its own.
    for (const auto& hex : hexes) {
        if (auto why = distrust({hex}); !why.empty()) {
            return why + " (a set an older cudaenv took: each key its bundle names must be "
                         "enough alone)";
        }
    }
    return "";
}

std::string TrustState::distrust_set(const Release& release, const fs::path& set_dir) const {
    return release.signed_by.empty() ? distrust_claimed(claimed_signers(set_dir))
                                     : distrust(release.signed_by);
}

std::optional<Floor> TrustState::floor() const {
    std::optional<Floor> best;
    for (const auto& f : floors) {
        if (distrust(f.signed_by).empty() && (!best || f.serial > best->serial)) {
            best = f;
        }
    }
    return best;
}

fs::path chain_dir(const fs::path& state, const std::string& anchor) {
    return state / anchor;
}

std::vector<std::pair<std::uint64_t, fs::path>> recorded_roots(const fs::path& state,
                                                               const std::string& anchor) {
    std::vector<std::pair<std::uint64_t, fs::path>> out;
    std::error_code ec;
    for (fs::directory_iterator it(chain_dir(state, anchor) / "roots", ec), end; !ec && it != end;
         it.increment(ec)) {
        std::string name = it->path().filename().string();
        auto dot = name.find('.');
        if (dot == std::string::npos || dot == 0 || dot > 19 || name.substr(dot) != ".root" ||
            !std::all_of(name.begin(), name.begin() + static_cast<long>(dot), [](char c) {
                return c >= '0' && c <= '9';
            })) {
            continue;
        }
        out.emplace_back(std::stoull(name.substr(0, dot)), it->path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

namespace {

/// A first root metadata read, its signatures checked only when `verify` (update checks them;
/// the commands that only choose manifests read the administrator's file as configuration).
Result<RootMetadata> read_first_root(std::string_view bytes, std::string_view origin, bool verify) {
    auto env = CUDAENV_TRY(split_envelope(bytes, k_root_kind, origin));
    auto r = CUDAENV_TRY(parse_root_payload(env.payload, origin, verify));
    if (verify) {
        CUDAENV_TRY(role_signed(env, r.root, "its own root role", origin));
    }
    r.bytes = std::string(bytes);
    r.anchor = anchor_of(bytes);
    return r;
}

} // namespace

Result<RootMetadata> open_first_root(std::string_view bytes, std::string_view origin) {
    return read_first_root(bytes, origin, true);
}

Status verify_first_root(const TrustState& trust) {
    if (trust.first_root_bytes.empty()) {
        return Ok{}; // the built-in one
    }
    auto checked = open_first_root(trust.first_root_bytes, trust.anchors.channel_root.string());
    if (!checked) {
        return Error(ErrorCode::usage, checked.error().message)
            .with_hint("/etc/cudaenv/channel.root is a site channel's first root metadata, signed "
                       "by its own root keys (docs/channel.md)");
    }
    return Ok{};
}

Result<RootMetadata> open_root(std::string_view bytes,
                               const RootMetadata& trusted,
                               std::string_view origin,
                               std::time_t now,
                               const std::vector<PublicKey>& revoked) {
    auto env = CUDAENV_TRY(split_envelope(bytes, k_root_kind, origin));
    // the keys trusted now must agree before anything else is read
    CUDAENV_TRY(role_signed(env,
                            trusted.root,
                            "root metadata version " + std::to_string(trusted.version) + "'s",
                            origin,
                            revoked));
    auto r = CUDAENV_TRY(parse_root_payload(env.payload, origin));
    CUDAENV_TRY(role_signed(env,
                            r.root,
                            "root metadata version " + std::to_string(r.version) + "'s own",
                            origin,
                            revoked));
    if (r.version != trusted.version + 1) {
        return Error(ErrorCode::integrity,
                     "root metadata '" + printable(origin) + "' is version " +
                         std::to_string(r.version) + " where version " +
                         std::to_string(trusted.version + 1) + " was asked for");
    }
    if (auto created = parse_utc(r.created); created && *created > now + 86400) {
        return Error(ErrorCode::integrity,
                     "root metadata '" + printable(origin) + "' was made in the future (" +
                         r.created + "): a clock or a signer is wrong");
    }
    r.bytes = std::string(bytes);
    r.anchor = trusted.anchor;
    return r;
}

Result<std::string> make_root(const RootMetadata& next, const std::vector<SecretKey>& keys) {
    nlohmann::ordered_json doc;
    doc["schema"] = k_root_schema;
    doc["version"] = next.version;
    doc["created"] = next.created;
    doc["expires"] = next.expires;
    doc["keys"] = nlohmann::ordered_json::object();
    for (const auto* role : {&next.root, &next.bundle}) {
        for (const auto& k : role->keys) {
            nlohmann::ordered_json entry;
            entry["public"] = to_hex(k.raw.data(), k.raw.size());
            entry["comment"] = k.comment;
            doc["keys"][k.id()] = entry;
        }
    }
    for (auto [name, role] : {std::pair{"root", &next.root}, {"bundle", &next.bundle}}) {
        doc["roles"][name]["keys"] = ids_of(*role);
        doc["roles"][name]["threshold"] = role->threshold;
    }
    std::string payload = doc.dump(2) + "\n";
    // what a host will check, checked before it is signed
    CUDAENV_TRY(parse_root_payload(payload, "(being made)"));
    return seal(k_root_kind, payload, keys);
}

Result<TrustState> load_trust(const Anchors& anchors) {
    TrustState t;
    t.anchors = anchors;
    t.site = CUDAENV_TRY(key_files(anchors.keys_dir, ".pub"));
    t.revoked = CUDAENV_TRY(key_files(anchors.keys_dir, ".revoked"));
    std::error_code ec;
    if (fs::exists(anchors.channel_root, ec)) {
        auto bytes = read_text_file(anchors.channel_root);
        if (!bytes) {
            return Error(ErrorCode::usage, bytes.error().message);
        }
        auto first = read_first_root(*bytes, anchors.channel_root.string(), false);
        if (!first) {
            return Error(ErrorCode::usage, first.error().message)
                .with_hint("/etc/cudaenv/channel.root is a site channel's first root metadata "
                           "(docs/channel.md)");
        }
        t.root = std::move(*first);
        t.first_root_bytes = *bytes;
    } else {
        t.root = builtin_root();
    }
    std::vector<fs::path> states{anchors.state};
    states.insert(states.end(), anchors.upstream_states.begin(), anchors.upstream_states.end());
    for (const auto& state : states) {
        // revocations an update recorded: they outlive /etc/cudaenv (a purge)
        for (auto& k : CUDAENV_TRY(key_files(state / "revoked", ".revoked"))) {
            t.revoked.push_back(std::move(k));
        }
        if (auto r = CUDAENV_TRY(newest_recorded(state, t.root.anchor));
            r && r->version > t.root.version) {
            t.root = std::move(*r);
        }
        fs::path floor = chain_dir(state, t.root.anchor) / "floor.json";
        if (fs::exists(fs::symlink_status(floor, ec))) {
            t.floors.push_back(CUDAENV_TRY(read_floor(floor)));
        }
    }
    return t;
}

Status record_roots(const Anchors& anchors, const std::vector<RootMetadata>& taken) {
    if (taken.empty()) {
        return Ok{};
    }
    fs::path dir = chain_dir(anchors.state, taken.front().anchor) / "roots";
    CUDAENV_TRY(make_dirs(dir));
    for (const auto& r : taken) {
        CUDAENV_TRY(write_file_atomic(dir / (std::to_string(r.version) + ".root"), r.bytes));
    }
    return Ok{};
}

Status record_revocations(const TrustState& trust) {
    if (trust.revoked.empty()) {
        return Ok{};
    }
    fs::path dir = trust.anchors.state / "revoked";
    CUDAENV_TRY(make_dirs(dir));
    for (const auto& k : trust.revoked) {
        fs::path file = dir / (to_hex(k.raw.data(), 8) + ".revoked");
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(file, ec))) {
            CUDAENV_TRY(write_file_atomic(file, format_public_key(k)));
        }
    }
    return Ok{};
}

Status raise_floor(const TrustState& trust, const Floor& floor) {
    const Anchors& anchors = trust.anchors;
    const std::string& anchor = trust.root.anchor;
    fs::path dir = chain_dir(anchors.state, anchor);
    CUDAENV_TRY(make_dirs(dir));
    auto lock = CUDAENV_TRY(store::Lock::acquire(dir, std::chrono::seconds(60)));
    fs::path file = dir / "floor.json";
    std::error_code ec;
    if (fs::exists(fs::symlink_status(file, ec))) {
        // a higher floor stays, unless its signers are no longer trusted
        if (auto now = read_floor(file);
            now && now->serial >= floor.serial && trust.distrust(now->signed_by).empty()) {
            return Ok{};
        }
    }
    return write_file_atomic(file, floor_text(floor));
}

} // namespace cudaenv::channel
