#include "bundle.hpp"

#include "../manifest/codec.hpp"
#include "../text.hpp"
#include "../version.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <set>

namespace cudaenv::channel {

namespace {

using json = nlohmann::json;

constexpr std::string_view k_format_prefix = "cudaenv-bundle/";
constexpr std::string_view k_schema_prefix = "cudaenv.bundle/";
constexpr std::string_view k_signature_tag = "signature ";

Error bad(std::string_view origin, const std::string& why) {
    return Error(ErrorCode::integrity, "manifests bundle '" + printable(origin) + "': " + why);
}

/// "cudaenv-bundle/<n>" or "cudaenv.bundle/<n>" -> n (0 when it is not such a name).
unsigned long format_number(std::string_view s, std::string_view prefix) {
    if (s.substr(0, prefix.size()) != prefix || s.size() == prefix.size() ||
        s.size() > prefix.size() + 6) {
        return 0;
    }
    unsigned long n = 0;
    for (char c : s.substr(prefix.size())) {
        if (c < '0' || c > '9') {
            return 0;
        }
        n = n * 10 + static_cast<unsigned long>(c - '0');
    }
    return n;
}

Error newer_needed(std::string_view origin, const std::string& what) {
    return Error(ErrorCode::incompatible, "manifests bundle '" + printable(origin) + "' " + what)
        .with_hint("upgrade cudaenv to use this channel; the manifests in use stay as they are");
}

struct Envelope {
    std::string_view payload;
    std::vector<std::pair<std::string, SignatureBytes>> signatures; // key id, signature
};

Result<Envelope> split_envelope(std::string_view bytes, std::string_view origin) {
    if (bytes.size() > k_max_bundle_bytes) {
        return bad(origin, "larger than " + std::to_string(k_max_bundle_bytes >> 20) + " MiB");
    }
    auto line_end = bytes.find('\n');
    std::string_view first = bytes.substr(0, line_end);
    if (first != k_bundle_format) {
        if (auto n = format_number(first, k_format_prefix); n > 1) {
            return newer_needed(
                origin, "is in format " + std::to_string(n) + "; this cudaenv reads format 1");
        }
        return bad(origin,
                   "not a cudaenv manifests bundle (it does not start with '" +
                       std::string(k_bundle_format) + "')");
    }
    Envelope env;
    std::size_t pos = line_end == std::string_view::npos ? bytes.size() : line_end + 1;
    while (true) {
        auto end = bytes.find('\n', pos);
        if (end == std::string_view::npos) {
            return bad(origin, "truncated: it ends inside its header");
        }
        std::string_view line = bytes.substr(pos, end - pos);
        pos = end + 1;
        if (line.empty()) {
            break;
        }
        if (line.substr(0, k_signature_tag.size()) != k_signature_tag) {
            return bad(origin, "a header line that is not a signature");
        }
        line.remove_prefix(k_signature_tag.size());
        auto space = line.find(' ');
        std::string_view id = line.substr(0, space);
        std::string_view hex = space == std::string_view::npos ? "" : line.substr(space + 1);
        SignatureBytes sig{};
        std::array<std::uint8_t, 8> id_bytes{};
        if (!parse_hex(id, id_bytes.data(), id_bytes.size()) ||
            !parse_hex(hex, sig.data(), sig.size())) {
            return bad(origin, "a malformed signature line");
        }
        if (env.signatures.size() == k_max_signatures) {
            return bad(origin, "more than " + std::to_string(k_max_signatures) + " signatures");
        }
        env.signatures.emplace_back(to_hex(id_bytes.data(), id_bytes.size()), sig);
    }
    if (env.signatures.empty()) {
        return bad(origin, "not signed");
    }
    env.payload = bytes.substr(pos);
    return env;
}

std::string signed_message(std::string_view payload) {
    std::string m(k_bundle_format);
    m += '\n';
    m.append(payload);
    return m;
}

/// Which key signed it: the first signature by a trusted key that verifies.
Result<std::string>
check_signatures(const Envelope& env, const Trust& trust, std::string_view origin) {
    std::string message = signed_message(env.payload);
    std::vector<std::string> failed;
    for (const auto& [id, sig] : env.signatures) {
        for (const auto& key : trust.keys) {
            if (key.id() != id) {
                continue;
            }
            if (CUDAENV_TRY(verify(key, message, sig))) {
                return id;
            }
            failed.push_back(id);
        }
    }
    if (!failed.empty()) {
        return bad(origin,
                   "the signature by key " + failed.front() +
                       " does not verify: the bundle was changed or cut short after "
                       "it was signed");
    }
    std::vector<std::string> named, trusted;
    for (const auto& s : env.signatures) {
        named.push_back(s.first);
    }
    for (const auto& k : trust.keys) {
        trusted.push_back(k.id());
    }
    return bad(origin,
               "signed by no key this machine trusts (signed by " + join(named) +
                   "; trusted: " + (trusted.empty() ? "none" : join(trusted)) + ")")
        .with_hint("a site's own signing key goes in /etc/cudaenv/keys/<name>.pub "
                   "(docs/channel.md)");
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

Result<std::string>
check_signature(std::string_view bytes, const Trust& trust, std::string_view origin) {
    auto env = CUDAENV_TRY(split_envelope(bytes, origin));
    return check_signatures(env, trust, origin);
}

Result<Bundle> open_bundle(std::string_view bytes, const Trust& trust, std::string_view origin) {
    auto env = CUDAENV_TRY(split_envelope(bytes, origin));
    Bundle b;
    b.key_id = CUDAENV_TRY(check_signatures(env, trust, origin));
    // Signed by a trusted key: from here on the payload is what that key's holder wrote.
    json doc = json::parse(env.payload, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
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
    std::string message = signed_message(payload);
    std::string out(k_bundle_format);
    out += '\n';
    for (const auto& key : keys) {
        auto pub = CUDAENV_TRY(public_key_of(key));
        auto sig = CUDAENV_TRY(sign(key, message));
        out +=
            std::string(k_signature_tag) + pub.id() + " " + to_hex(sig.data(), sig.size()) + "\n";
    }
    out += '\n';
    out += payload;
    if (out.size() > k_max_bundle_bytes) {
        return Error(ErrorCode::usage,
                     "the bundle would be larger than " + std::to_string(k_max_bundle_bytes >> 20) +
                         " MiB");
    }
    return out;
}

} // namespace cudaenv::channel
