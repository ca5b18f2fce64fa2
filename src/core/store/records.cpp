#include "records.hpp"

#include "../fs.hpp"
#include "../sha256.hpp"
#include "root.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <iterator>

namespace cudaenv::store {

using json = nlohmann::json;

namespace {

/// Reads the fields of one JSON object; every error names the file and the field.
class Fields {
  public:
    Fields(const json& j, const std::string& origin, std::string prefix = {})
        : m_j(j), m_origin(origin), m_prefix(std::move(prefix)) {}

    Error bad(const std::string& why) const {
        return Error(ErrorCode::integrity, m_origin + " " + why);
    }

    /// A string field: absent or null is none (or an error when required).
    Result<std::optional<std::string>> opt_string(const char* key) const {
        auto it = m_j.find(key);
        if (it == m_j.end() || it->is_null()) {
            return std::optional<std::string>{};
        }
        if (!it->is_string()) {
            return bad("has a '" + m_prefix + key + "' that is not a string");
        }
        return std::optional<std::string>(it->get<std::string>());
    }

    Result<std::string> string(const char* key) const {
        auto v = CUDAENV_TRY(opt_string(key));
        if (!v) {
            return bad("has no '" + m_prefix + key + "'");
        }
        return std::move(*v);
    }

    Result<std::uint64_t> count(const char* key, bool required = true) const {
        auto it = m_j.find(key);
        if (it == m_j.end() || it->is_null()) {
            if (required) {
                return bad("has no '" + m_prefix + key + "'");
            }
            return std::uint64_t{0};
        }
        if (!it->is_number_unsigned()) {
            return bad("has a '" + m_prefix + key + "' that is not a count");
        }
        return it->get<std::uint64_t>();
    }

    Result<bool> flag(const char* key) const {
        auto it = m_j.find(key);
        if (it == m_j.end() || it->is_null()) {
            return false;
        }
        if (!it->is_boolean()) {
            return bad("has a '" + m_prefix + key + "' that is not true or false");
        }
        return it->get<bool>();
    }

    Result<const json*> array(const char* key) const {
        auto it = m_j.find(key);
        if (it == m_j.end() || !it->is_array()) {
            return bad("has no '" + m_prefix + key + "' list");
        }
        return &*it;
    }

  private:
    const json& m_j;
    const std::string& m_origin;
    std::string m_prefix;
};

/// The document's object, once its schema is the one this cudaenv reads.
Result<json> open_document(std::string_view text, const std::string& origin, const char* schema) {
    auto j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        return Error(ErrorCode::integrity, origin + " is not a JSON object (damaged?)");
    }
    auto have = CUDAENV_TRY(Fields(j, origin).opt_string("schema"));
    if (!have) {
        return Error(ErrorCode::integrity, origin + " has no 'schema' (damaged?)");
    }
    if (*have != schema) {
        return Error(ErrorCode::integrity,
                     origin + " has schema '" + printable(*have) + "'; this cudaenv reads " +
                         schema + " (written by a newer cudaenv?)")
            .with_hint("use the cudaenv that wrote it, or reinstall that version");
    }
    return j;
}

std::string quoted(const std::filesystem::path& p) {
    return "'" + p.string() + "'";
}

Result<Snapshot> decode_snapshot(const json& j, const std::string& origin) {
    if (!j.is_object()) {
        return Error(ErrorCode::integrity, origin + " has a 'previous' that is not an object");
    }
    Fields f(j, origin, "previous.");
    Snapshot s;
    s.global = CUDAENV_TRY(f.opt_string("global")).value_or("system");
    auto link = j.find("link");
    if (link != j.end() && !link->is_null()) {
        if (!link->is_object()) {
            return f.bad("has a 'previous.link' that is not an object");
        }
        Fields l(*link, origin, "previous.link.");
        s.link_kind = CUDAENV_TRY(l.opt_string("kind")).value_or("absent");
        s.link_target = CUDAENV_TRY(l.opt_string("target")).value_or("");
        static constexpr std::string_view k_kinds[] = {
            "absent", "ours", "foreign_link", "alternatives", "directory", "other"};
        if (std::find(std::begin(k_kinds), std::end(k_kinds), s.link_kind) == std::end(k_kinds)) {
            return f.bad("names an unknown link kind '" + printable(s.link_kind) + "'");
        }
    }
    s.conf = CUDAENV_TRY(f.opt_string("conf"));
    s.moved_to = CUDAENV_TRY(f.opt_string("moved_to"));
    return s;
}

} // namespace

bool StoreRecord::hashed() const {
    return std::all_of(files.begin(), files.end(), [](const FileRecord& f) {
        return f.type != FileRecord::Type::file || !f.sha256.empty();
    });
}

Result<StoreRecord> decode_store_record(std::string_view text, const std::string& origin) {
    auto j = CUDAENV_TRY(open_document(text, origin, k_store_schema));
    Fields f(j, origin);
    StoreRecord r;
    r.component = CUDAENV_TRY(f.string("component"));
    r.version = CUDAENV_TRY(f.string("version"));
    r.sha256 = CUDAENV_TRY(f.string("sha256"));
    r.source = CUDAENV_TRY(f.opt_string("source")).value_or("");
    r.top = CUDAENV_TRY(f.opt_string("top")).value_or("");
    r.bytes = CUDAENV_TRY(f.count("bytes", false));
    const json* files = CUDAENV_TRY(f.array("files"));
    r.files.reserve(files->size());
    for (const auto& e : *files) {
        if (!e.is_object()) {
            return f.bad("has a 'files' entry that is not an object");
        }
        Fields ef(e, origin, "files[].");
        FileRecord fr;
        fr.path = CUDAENV_TRY(ef.string("path"));
        auto type = CUDAENV_TRY(ef.string("type"));
        if (type == "dir") {
            fr.type = FileRecord::Type::dir;
        } else if (type == "file") {
            fr.type = FileRecord::Type::file;
            fr.size = CUDAENV_TRY(ef.count("size"));
            fr.executable = CUDAENV_TRY(ef.flag("x"));
            // absent in records written before per-file hashes (still cudaenv.store/1: an
            // older cudaenv reading a newer record ignores it)
            fr.sha256 = CUDAENV_TRY(ef.opt_string("sha256")).value_or("");
            if (!fr.sha256.empty() && !is_sha256_hex(fr.sha256)) {
                return f.bad("has a 'files[].sha256' of '" + printable(fr.path) +
                             "' that is not a SHA-256");
            }
        } else if (type == "symlink") {
            fr.type = FileRecord::Type::symlink;
            fr.target = CUDAENV_TRY(ef.string("target"));
        } else {
            return f.bad("has a file of unknown type '" + printable(type) + "'");
        }
        r.files.push_back(std::move(fr));
    }
    return r;
}

std::string encode(const StoreRecord& r) {
    json files = json::array();
    for (const auto& e : r.files) {
        json f{{"path", e.path}};
        switch (e.type) {
        case FileRecord::Type::dir:
            f["type"] = "dir";
            break;
        case FileRecord::Type::symlink:
            f["type"] = "symlink";
            f["target"] = e.target;
            break;
        case FileRecord::Type::file:
            f["type"] = "file";
            f["size"] = e.size;
            if (e.executable) {
                f["x"] = true;
            }
            if (!e.sha256.empty()) {
                f["sha256"] = e.sha256;
            }
            break;
        }
        files.push_back(std::move(f));
    }
    return json{{"schema", k_store_schema},
                {"component", r.component},
                {"version", r.version},
                {"sha256", r.sha256},
                {"source", r.source},
                {"top", r.top},
                {"bytes", r.bytes},
                {"files", std::move(files)}}
               .dump() +
           "\n";
}

Result<VersionRecord> decode_version_record(std::string_view text, const std::string& origin) {
    auto j = CUDAENV_TRY(open_document(text, origin, k_version_schema));
    Fields f(j, origin);
    VersionRecord r;
    r.name = CUDAENV_TRY(f.string("name"));
    r.cuda = CUDAENV_TRY(f.string("cuda"));
    r.cudnn = CUDAENV_TRY(f.opt_string("cudnn")).value_or("");
    r.cudnn_cuda = CUDAENV_TRY(f.opt_string("cudnn_cuda")).value_or("");
    r.profile = CUDAENV_TRY(f.opt_string("profile")).value_or("");
    r.platform = CUDAENV_TRY(f.string("platform"));
    r.files = CUDAENV_TRY(f.count("files", false));
    r.bytes = CUDAENV_TRY(f.count("bytes", false));
    const json* components = CUDAENV_TRY(f.array("components"));
    for (const auto& c : *components) {
        if (!c.is_object()) {
            return f.bad("has a 'components' entry that is not an object");
        }
        Fields cf(c, origin, "components[].");
        VersionComponent vc;
        vc.component = CUDAENV_TRY(cf.string("component"));
        vc.version = CUDAENV_TRY(cf.string("version"));
        vc.sha256 = CUDAENV_TRY(cf.opt_string("sha256")).value_or("");
        vc.store = CUDAENV_TRY(cf.string("store"));
        vc.patch = CUDAENV_TRY(cf.opt_string("patch")).value_or("");
        r.components.push_back(std::move(vc));
    }
    return r;
}

Result<PinRecord> decode_pin_record(std::string_view text, const std::string& origin) {
    auto raw = json::parse(text, nullptr, false);
    bool legacy = raw.is_object() && raw.contains("schema") && raw["schema"].is_number_integer() &&
                  raw["schema"].get<long long>() == 1; // what 0.1.0 wrote
    json j = legacy ? raw : CUDAENV_TRY(open_document(text, origin, k_pin_schema));
    PinRecord r;
    r.dir = CUDAENV_TRY(Fields(j, origin).string("dir"));
    if (r.dir.empty() || r.dir.front() != '/') {
        return Error(ErrorCode::integrity, origin + ": 'dir' is not an absolute path");
    }
    return r;
}

Result<TrustedIndexes> decode_trusted_indexes(std::string_view text, const std::string& origin) {
    auto raw = json::parse(text, nullptr, false);
    // before the schema: the entries alone, keyed "<product>/<version>"
    bool legacy = raw.is_object() && !raw.contains("schema");
    json j = legacy ? json{{"indexes", std::move(raw)}}
                    : CUDAENV_TRY(open_document(text, origin, k_trusted_schema));
    auto it = j.find("indexes");
    if (it == j.end() || !it->is_object()) {
        return Error(ErrorCode::integrity, origin + " has no 'indexes' object");
    }
    TrustedIndexes r;
    for (const auto& [key, entry] : it->items()) {
        auto slash = key.find('/');
        TrustedIndex t;
        t.product = key.substr(0, slash);
        t.version = slash == std::string::npos ? std::string() : key.substr(slash + 1);
        // the version names a file: a plain name, never a path
        bool plain = !t.version.empty() && t.version.front() != '.' &&
                     std::all_of(t.version.begin(), t.version.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                                c == '_' || c == '-';
                     });
        if ((t.product != "cuda" && t.product != "cudnn") || !plain) {
            return Error(ErrorCode::integrity,
                         origin + " has an index '" + printable(key) +
                             "' that is not <cuda|cudnn>/<version>");
        }
        if (!entry.is_object()) {
            return Error(ErrorCode::integrity,
                         origin + " has an index '" + key + "' that is not an object");
        }
        t.sha256 = CUDAENV_TRY(Fields(entry, origin, "indexes." + key + ".").string("sha256"));
        if (!is_sha256_hex(t.sha256)) {
            return Error(ErrorCode::integrity,
                         origin + " has an 'indexes." + key + ".sha256' that is not a SHA-256");
        }
        r.indexes.push_back(std::move(t));
    }
    return r;
}

std::string encode(const TrustedIndexes& r) {
    json indexes = json::object();
    for (const auto& t : r.indexes) {
        indexes[t.product + "/" + t.version] = {{"sha256", t.sha256}};
    }
    return json{{"schema", k_trusted_schema}, {"indexes", indexes}}.dump(2) + "\n";
}

Result<MirrorRecord> decode_mirror_record(std::string_view text, const std::string& origin) {
    json j = CUDAENV_TRY(open_document(text, origin, k_mirror_schema));
    MirrorRecord r;
    for (const auto& e : *CUDAENV_TRY(Fields(j, origin).array("files"))) {
        if (!e.is_object()) {
            return Error(ErrorCode::integrity,
                         origin + " has a 'files' entry that is not an object");
        }
        Fields f(e, origin, "files[].");
        MirrorFile m;
        m.path = CUDAENV_TRY(f.string("path"));
        m.sha256 = CUDAENV_TRY(f.string("sha256"));
        m.size = CUDAENV_TRY(f.count("size"));
        m.what = CUDAENV_TRY(f.opt_string("what")).value_or("");
        r.files.push_back(std::move(m));
    }
    return r;
}

std::string encode(const MirrorRecord& r) {
    json files = json::array();
    for (const auto& f : r.files) {
        files.push_back(
            {{"path", f.path}, {"sha256", f.sha256}, {"size", f.size}, {"what", f.what}});
    }
    return json{{"schema", k_mirror_schema}, {"files", files}}.dump(1) + "\n";
}

std::string encode(const PinRecord& r) {
    return json{{"schema", k_pin_schema}, {"dir", r.dir}}.dump() + "\n";
}

std::string encode(const VersionRecord& r) {
    json components = json::array();
    for (const auto& c : r.components) {
        json one{{"component", c.component},
                 {"version", c.version},
                 {"sha256", c.sha256},
                 {"store", c.store}};
        if (!c.patch.empty()) {
            one["patch"] = c.patch;
        }
        components.push_back(std::move(one));
    }
    return json{{"schema", k_version_schema},
                {"name", r.name},
                {"cuda", r.cuda},
                {"cudnn", r.cudnn},
                {"cudnn_cuda", r.cudnn_cuda},
                {"profile", r.profile},
                {"platform", r.platform},
                {"files", r.files},
                {"bytes", r.bytes},
                {"components", std::move(components)}}
               .dump(2) +
           "\n";
}

Result<State> decode_state(std::string_view text, const std::string& origin) {
    auto j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        return Error(ErrorCode::integrity, origin + " is not a JSON object (damaged?)");
    }
    Fields f(j, origin);
    // state.json predates the schema field: absent reads as cudaenv.state/1.
    if (auto schema = CUDAENV_TRY(f.opt_string("schema")); schema && *schema != k_state_schema) {
        return f.bad("has schema '" + printable(*schema) + "'; this cudaenv reads " +
                     k_state_schema + " (written by a newer cudaenv?)");
    }
    State s;
    s.global = CUDAENV_TRY(f.opt_string("global"));
    s.pending = CUDAENV_TRY(f.opt_string("pending"));
    if (auto p = j.find("previous"); p != j.end() && !p->is_null()) {
        s.previous = CUDAENV_TRY(decode_snapshot(*p, origin));
    }
    return s;
}

std::string encode(const State& s) {
    json j{{"schema", k_state_schema}};
    if (s.global) {
        j["global"] = *s.global;
    }
    if (s.pending) {
        j["pending"] = *s.pending;
    }
    if (s.previous) {
        const auto& p = *s.previous;
        json pj{{"global", p.global},
                {"link", {{"kind", p.link_kind}, {"target", p.link_target}}},
                {"conf", p.conf ? json(*p.conf) : json()}};
        if (p.moved_to) {
            pj["moved_to"] = *p.moved_to;
        }
        j["previous"] = pj;
    }
    return j.dump(2) + "\n";
}

Result<StoreRecord> read_store_record(const std::filesystem::path& entry_dir) {
    auto path = entry_dir / k_complete_record;
    auto text = CUDAENV_TRY(read_text_file(path));
    return decode_store_record(text, quoted(path));
}

Result<VersionRecord> read_version_record(const std::filesystem::path& version_dir) {
    auto path = version_dir / k_version_record;
    auto text = CUDAENV_TRY(read_text_file(path));
    return decode_version_record(text, quoted(path));
}

Status write_store_record(const std::filesystem::path& entry_dir, const StoreRecord& r) {
    return write_file_atomic(entry_dir / k_complete_record, encode(r));
}

Status write_version_record(const std::filesystem::path& version_dir, const VersionRecord& r) {
    return write_file_atomic(version_dir / k_version_record, encode(r));
}

} // namespace cudaenv::store
