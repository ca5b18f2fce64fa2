#include "bundle.hpp"

#include "../manifest/codec.hpp"
#include "../text.hpp"
#include "../version.hpp"
#include "strict_json.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <set>

namespace cudaenv::channel {

namespace {

using json = nlohmann::json;

constexpr std::string_view k_schema_prefix = "cudaenv.bundle/";
constexpr EnvelopeKind k_kind{
    k_bundle_format,
    "cudaenv-bundle/",
    "manifests bundle",
    "bundle",
    k_max_bundle_bytes,
    "upgrade cudaenv to use this channel; the manifests in use stay as they are"};

Error bad(std::string_view origin, const std::string& why) {
    return envelope_error(k_kind, origin, why);
}

/// "cudaenv-bundle/<n>" or "cudaenv.bundle/<n>" -> n (0 when it is not such a name).
Error newer_needed(std::string_view origin, const std::string& what) {
    return Error(ErrorCode::incompatible, "manifests bundle '" + printable(origin) + "' " + what)
        .with_hint(std::string(k_kind.newer_hint));
}

Result<std::string> text_field(const json& doc, const char* key, std::string_view origin) {
    auto it = doc.find(key);
    if (it == doc.end() || !it->is_string()) {
        return bad(origin, std::string("'") + key + "' is missing or not text");
    }
    return it->get<std::string>();
}

Result<BundleInfo> read_info(const json& doc, std::string_view origin) {
    BundleInfo info;
    auto serial = doc.find("serial");
    if (serial == doc.end() || !serial->is_number_unsigned() || serial->get<std::uint64_t>() == 0) {
        return bad(origin, "'serial' is missing or not a positive whole number");
    }
    info.serial = serial->get<std::uint64_t>();
    info.created = CUDAENV_TRY(text_field(doc, "created", origin));
    info.expires = CUDAENV_TRY(text_field(doc, "expires", origin));
    info.requires_version = CUDAENV_TRY(text_field(doc, "requires", origin));
    if (!parse_utc(info.created) || !parse_utc(info.expires)) {
        return bad(origin, "'created' or 'expires' is not a UTC time (2026-12-06T00:00:00Z)");
    }
    if (!Version::try_parse(info.requires_version)) {
        return bad(origin, "'requires' is not a version");
    }
    return info;
}

Status check_files(const std::map<std::string, std::string>& files, std::string_view origin) {
    if (files.size() > k_max_bundle_files) {
        return bad(origin, "more than " + std::to_string(k_max_bundle_files) + " files");
    }
    bool cuda = false;
    for (const auto& [name, text] : files) {
        if (!manifest::is_manifest_file_name(name)) {
            return bad(origin,
                       "carries '" + printable(name) + "', which is not a manifest file's name");
        }
        cuda = cuda || name.rfind("cuda/", 0) == 0;
    }
    for (const char* needed : {"profiles.json", "rules.json"}) {
        if (!files.count(needed)) {
            return bad(origin, std::string("lacks ") + needed);
        }
    }
    if (!cuda) {
        return bad(origin, "holds no CUDA release (cuda/*.json)");
    }
    return Ok{};
}

/// What bounds a signer's mistake (or a stolen key): the serial may not run ahead of the day the
/// bundle was made (YYYYMMDDNN, or any smaller counter), a bundle lives at most k_max_valid_days,
/// and `created` is not in the future beyond a day of clock skew. Without these one bad bundle
/// with a huge serial or a far expiry would hold every host until its files were removed by hand.
std::string bounds_problem(const BundleInfo& info, std::optional<std::time_t> now) {
    auto created = parse_utc(info.created);
    auto expires = parse_utc(info.expires);
    if (!created || !expires) {
        return "'created' or 'expires' is not a UTC time (2026-12-06T00:00:00Z)";
    }
    std::uint64_t day = std::stoull(info.created.substr(0, 4) + info.created.substr(5, 2) +
                                    info.created.substr(8, 2));
    if (info.serial > day * 100 + 99) {
        return "serial " + std::to_string(info.serial) + " runs ahead of its creation day (" +
               info.created.substr(0, 10) + " allows at most " + std::to_string(day * 100 + 99) +
               ")";
    }
    if (*expires <= *created || *expires - *created > k_max_valid_days * 86400L) {
        return "valid from " + info.created + " to " + info.expires + ": more than " +
               std::to_string(k_max_valid_days) + " days, or none";
    }
    if (now && *created > *now + 86400) {
        return "made in the future (" + info.created + "): a clock or a signer is wrong";
    }
    return "";
}

} // namespace

Result<std::vector<PublicKey>>
check_signature(std::string_view bytes, const Trust& trust, std::string_view origin) {
    auto env = CUDAENV_TRY(split_envelope(bytes, k_kind, origin));
    return check_signatures(env, k_kind, trust.ring, origin);
}

Result<Bundle> open_bundle(std::string_view bytes, const Trust& trust, std::string_view origin) {
    auto env = CUDAENV_TRY(split_envelope(bytes, k_kind, origin));
    Bundle b;
    b.signers = CUDAENV_TRY(check_signatures(env, k_kind, trust.ring, origin));
    b.key_id = b.signers.front().id();
    // Signed by trusted keys: from here on the payload is what their holders wrote -- read
    // exactly, and within bounds all the same.
    std::string what = "manifests bundle '" + printable(origin) + "'";
    json doc = CUDAENV_TRY(parse_strict(env.payload, {k_max_payload_depth}, what));
    if (!doc.is_object()) {
        return bad(origin, "its payload is not a JSON object");
    }
    auto schema = doc.find("schema");
    if (schema == doc.end() || !schema->is_string()) {
        return bad(origin, "'schema' is missing");
    }
    if (schema->get<std::string>() != k_bundle_schema) {
        if (auto n = format_number(schema->get<std::string>(), k_schema_prefix); n > 1) {
            return newer_needed(origin,
                                "has schema " + schema->get<std::string>() +
                                    "; this cudaenv reads " + std::string(k_bundle_schema));
        }
        return bad(origin, "unknown schema '" + printable(schema->get<std::string>()) + "'");
    }
    CUDAENV_TRY(check_fields(
        doc, {"schema", "serial", "created", "expires", "requires", "files"}, what, "its payload"));
    b.info = CUDAENV_TRY(read_info(doc, origin));
    if (auto why = bounds_problem(b.info, trust.now); !why.empty()) {
        return bad(origin, why);
    }
    auto need = Version::parse(b.info.requires_version);
    auto have = Version::try_parse(trust.cudaenv_version);
    if (need && have && Version::compare_numeric(*need, *have) > 0) {
        return newer_needed(origin,
                            "needs cudaenv " + b.info.requires_version +
                                " or newer (this is cudaenv " + trust.cudaenv_version + ")");
    }
    if (auto expires = parse_utc(b.info.expires); *expires <= trust.now) {
        return bad(origin,
                   "expired on " + b.info.expires + " (serial " + std::to_string(b.info.serial) +
                       "): a channel that stopped being refreshed, or an old copy "
                       "served again")
            .with_hint("the manifests in use stay as they are; ask whoever runs the channel or "
                       "mirror to publish a fresh bundle");
    }
    auto files = doc.find("files");
    if (files == doc.end() || !files->is_object()) {
        return bad(origin, "'files' is missing or not an object");
    }
    for (const auto& [name, text] : files->items()) {
        if (!text.is_string()) {
            return bad(origin, "'files." + printable(name) + "' is not text");
        }
        b.files.emplace(name, text.get<std::string>());
    }
    CUDAENV_TRY(check_files(b.files, origin));
    for (const auto& [name, text] : b.files) {
        CUDAENV_TRY(parse_strict(text, {k_max_manifest_depth}, what + " file '" + name + "'"));
    }
    return b;
}

Result<std::string> make_bundle(const std::map<std::string, std::string>& files,
                                const BundleInfo& info,
                                const std::vector<SecretKey>& keys) {
    CUDAENV_TRY(check_files(files, "(being made)"));
    if (keys.empty() || keys.size() > k_max_signatures) {
        return Error(ErrorCode::usage,
                     "a bundle needs 1 to " + std::to_string(k_max_signatures) + " signing keys");
    }
    if (info.serial == 0 || !parse_utc(info.created) || !parse_utc(info.expires) ||
        !Version::try_parse(info.requires_version)) {
        return Error(ErrorCode::usage,
                     "a bundle needs a positive serial, UTC times and a 'requires' version");
    }
    if (auto why = bounds_problem(info, std::nullopt); !why.empty()) {
        return Error(ErrorCode::usage, "refusing to sign: " + why);
    }
    nlohmann::ordered_json doc;
    doc["schema"] = k_bundle_schema;
    doc["serial"] = info.serial;
    doc["created"] = info.created;
    doc["expires"] = info.expires;
    doc["requires"] = info.requires_version;
    doc["files"] = nlohmann::ordered_json::object();
    for (const auto& [name, text] : files) {
        doc["files"][name] = text;
    }
    std::string payload = doc.dump() + "\n";
    auto out = CUDAENV_TRY(seal(k_kind, payload, keys));
    if (out.size() > k_max_bundle_bytes) {
        return Error(ErrorCode::usage,
                     "the bundle would be larger than " + std::to_string(k_max_bundle_bytes >> 20) +
                         " MiB");
    }
    return out;
}

} // namespace cudaenv::channel
