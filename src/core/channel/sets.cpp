#include "sets.hpp"

#include "../fs.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

namespace cudaenv::channel {

namespace {

using json = nlohmann::json;

Error damaged(const std::filesystem::path& file, const std::string& why) {
    return Error(ErrorCode::integrity, "'" + file.string() + "': " + why);
}

Result<json> read_object(const std::filesystem::path& file) {
    auto text = read_text_file(file);
    if (!text) {
        return Error(ErrorCode::integrity, std::move(text).error().message);
    }
    json doc = json::parse(*text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        return damaged(file, "not a JSON object");
    }
    return doc;
}

Result<std::string>
text(const json& doc, const char* key, const std::filesystem::path& file, bool needed) {
    auto it = doc.find(key);
    if (it == doc.end() && !needed) {
        return std::string();
    }
    if (it == doc.end() || !it->is_string()) {
        return damaged(file, std::string("'") + key + "' is missing or not text");
    }
    return it->get<std::string>();
}

Result<std::uint64_t> serial_of(const json& doc, const std::filesystem::path& file) {
    auto it = doc.find("serial");
    if (it == doc.end() || !it->is_number_unsigned()) {
        return damaged(file, "'serial' is missing or not a whole number");
    }
    return it->get<std::uint64_t>();
}

} // namespace

Result<Release> read_release(const std::filesystem::path& dir) {
    auto file = dir / k_release_file;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        return Release{};
    }
    auto doc = CUDAENV_TRY(read_object(file));
    if (doc.value("schema", "") != "cudaenv.manifest/1" || doc.value("kind", "") != "release") {
        return damaged(file,
                       "not a cudaenv release record (schema cudaenv.manifest/1, kind "
                       "release)");
    }
    Release r;
    r.serial = CUDAENV_TRY(serial_of(doc, file));
    r.created = CUDAENV_TRY(text(doc, "created", file, true));
    r.expires = CUDAENV_TRY(text(doc, "expires", file, false));
    r.requires_version = CUDAENV_TRY(text(doc, "requires", file, true));
    r.channel = CUDAENV_TRY(text(doc, "channel", file, false));
    if (auto it = doc.find("signed_by"); it != doc.end()) {
        if (!it->is_array()) {
            return damaged(file, "'signed_by' is not a list");
        }
        for (const auto& k : *it) {
            if (!k.is_string() || k.get<std::string>().size() != 64) {
                return damaged(file, "'signed_by' holds something other than public keys");
            }
            r.signed_by.push_back(k.get<std::string>());
        }
    }
    return r;
}

std::string release_to_text(const Release& r) {
    nlohmann::ordered_json j;
    j["schema"] = "cudaenv.manifest/1";
    j["kind"] = "release";
    j["serial"] = r.serial;
    j["created"] = r.created;
    if (!r.expires.empty()) {
        j["expires"] = r.expires;
    }
    j["requires"] = r.requires_version;
    if (!r.channel.empty()) {
        j["channel"] = r.channel;
    }
    if (!r.signed_by.empty()) {
        j["signed_by"] = r.signed_by;
    }
    return j.dump(2) + "\n";
}

bool is_set_name(std::string_view name) {
    auto dash = name.find('-');
    if (dash == 0 || dash == std::string_view::npos || dash > 20 || name.size() != dash + 13) {
        return false;
    }
    return std::all_of(name.begin(),
                       name.begin() + static_cast<long>(dash),
                       [](char c) { return c >= '0' && c <= '9'; }) &&
           std::all_of(name.begin() + static_cast<long>(dash) + 1, name.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

Result<std::optional<CurrentRecord>> read_current(const std::filesystem::path& root_dir) {
    auto file = root_dir / "manifests" / k_current_record;
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) {
        return std::optional<CurrentRecord>();
    }
    auto doc = CUDAENV_TRY(read_object(file));
    if (doc.value("schema", "") != k_current_schema) {
        return damaged(file, std::string("not a ") + k_current_schema + " record");
    }
    CurrentRecord r;
    r.set = CUDAENV_TRY(text(doc, "set", file, true));
    r.serial = CUDAENV_TRY(serial_of(doc, file));
    r.sha256 = CUDAENV_TRY(text(doc, "sha256", file, true));
    r.channel = CUDAENV_TRY(text(doc, "channel", file, true));
    r.updated = CUDAENV_TRY(text(doc, "updated", file, true));
    if (!is_set_name(r.set)) {
        return damaged(file, "'set' is not a set's name");
    }
    return std::optional(r);
}

std::string current_to_text(const CurrentRecord& r) {
    nlohmann::ordered_json j;
    j["schema"] = k_current_schema;
    j["set"] = r.set;
    j["serial"] = r.serial;
    j["sha256"] = r.sha256;
    j["channel"] = r.channel;
    j["updated"] = r.updated;
    return j.dump(2) + "\n";
}

const char* ManifestsInUse::origin_text() const {
    switch (origin) {
    case Origin::given:
        return "given";
    case Origin::shipped:
        return "shipped";
    case Origin::channel:
        return "channel";
    }
    return "shipped";
}

std::optional<std::time_t> parse_utc(std::string_view text) {
    // exactly YYYY-MM-DDTHH:MM:SSZ
    if (text.size() != 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' ||
        text[13] != ':' || text[16] != ':' || text[19] != 'Z') {
        return std::nullopt;
    }
    auto num = [&](std::size_t at, std::size_t len) -> int {
        int v = 0;
        for (std::size_t i = at; i < at + len; ++i) {
            if (text[i] < '0' || text[i] > '9') {
                return -1;
            }
            v = v * 10 + (text[i] - '0');
        }
        return v;
    };
    int y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2),
        s = num(17, 2);
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
        s < 0 || s > 60) {
        return std::nullopt;
    }
    std::tm tm{};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    std::time_t t = ::timegm(&tm);
    if (t == static_cast<std::time_t>(-1) || tm.tm_mday != d) { // 2026-02-31 rolls over
        return std::nullopt;
    }
    return t;
}

std::string format_utc(std::time_t t) {
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::vector<std::string> staleness(const ManifestsInUse& m, std::time_t now) {
    std::vector<std::string> out;
    if (m.origin == ManifestsInUse::Origin::given) {
        return out;
    }
    if (auto expires = parse_utc(m.release.expires); expires && *expires <= now) {
        out.push_back("the manifests in use (serial " + std::to_string(m.release.serial) +
                      ") expired on " + m.release.expires.substr(0, 10) +
                      ": run `cudaenv update` (if it finds nothing newer, the channel or mirror "
                      "has stopped being refreshed)");
        return out;
    }
    if (auto made = parse_utc(m.release.created)) {
        long days = static_cast<long>((now - *made) / 86400);
        if (days > k_stale_days) {
            out.push_back("the manifests in use are " + std::to_string(days) +
                          " days old (serial " + std::to_string(m.release.serial) +
                          "): run `cudaenv update` to learn of newer releases");
        }
    }
    return out;
}

ManifestsInUse given_manifests(const std::filesystem::path& dir) {
    ManifestsInUse m;
    m.origin = ManifestsInUse::Origin::given;
    m.dir = dir;
    if (auto r = read_release(dir)) {
        m.release = *r;
    }
    return m;
}

std::optional<ManifestsInUse> newest_channel_set(const std::vector<std::filesystem::path>& roots,
                                                 std::vector<std::string>& warnings,
                                                 const SetCheck& check) {
    std::optional<ManifestsInUse> best;
    for (const auto& root : roots) {
        std::error_code ec;
        if (std::filesystem::is_symlink(root / "manifests", ec)) {
            // cudaenv makes this folder itself: a link there is someone else's set
            warnings.push_back("'" + (root / "manifests").string() +
                               "' is a link that cudaenv did not make (passed over)");
            continue;
        }
        auto rec = read_current(root);
        if (!rec) {
            warnings.push_back(rec.error().message + " (passed over)");
            continue;
        }
        if (!*rec || (best && (*rec)->serial <= best->release.serial)) {
            continue;
        }
        auto dir = root / "manifests" / (*rec)->set;
        auto release = read_release(dir);
        if (!release || release->serial != (*rec)->serial) {
            warnings.push_back("the manifests set '" + dir.string() + "' that '" +
                               (root / "manifests" / k_current_record).string() +
                               "' names is missing or damaged (passed over)");
            continue;
        }
        ManifestsInUse m;
        m.origin = ManifestsInUse::Origin::channel;
        m.dir = dir;
        m.root = root;
        m.release = *release;
        if (check) {
            if (auto why = check(m); !why.empty()) {
                warnings.push_back("the manifests set serial " + std::to_string(m.release.serial) +
                                   " in '" + dir.string() + "' is not used: " + why +
                                   " (run `cudaenv update`)");
                continue;
            }
        }
        best = std::move(m);
    }
    return best;
}

ManifestsInUse choose_manifests(const std::filesystem::path& floor,
                                const std::vector<std::filesystem::path>& roots,
                                const SetCheck& check) {
    ManifestsInUse best;
    best.origin = ManifestsInUse::Origin::shipped;
    best.dir = floor;
    if (auto r = read_release(floor)) {
        best.release = *r;
    } else {
        best.warnings.push_back(r.error().message);
    }
    auto warnings = best.warnings;
    auto set = newest_channel_set(roots, warnings, check);
    if (set && set->release.serial > best.release.serial) {
        best = std::move(*set);
    }
    best.warnings = std::move(warnings);
    return best;
}

std::vector<std::string> claimed_signers(const std::filesystem::path& set_dir) {
    std::vector<std::string> out;
    // the header is a few lines at the top of the file: read no more
    std::string head(4096, '\0');
    Fd fd(::open((set_dir / "manifests.bundle").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    ssize_t got = fd.valid() ? ::read(fd.get(), head.data(), head.size()) : -1;
    if (got <= 0) {
        return out;
    }
    head.resize(static_cast<std::size_t>(got));
    std::string_view rest(head);
    auto first = rest.find('\n');
    if (first == std::string_view::npos) {
        return out;
    }
    rest.remove_prefix(first + 1);
    while (true) {
        auto end = rest.find('\n');
        if (end == std::string_view::npos) {
            return out;
        }
        std::string_view line = rest.substr(0, end);
        rest.remove_prefix(end + 1);
        if (line.substr(0, 10) != "signature ") {
            return out;
        }
        line.remove_prefix(10);
        out.emplace_back(line.substr(0, line.find(' ')));
    }
}

} // namespace cudaenv::channel
