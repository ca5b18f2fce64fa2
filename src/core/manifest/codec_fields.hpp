// What the codec's files share (not for other rooms): field access whose errors name the manifest
// and the field, and the small parsers both directions use. decode.cpp reads each manifest kind,
// encode.cpp writes it, catalog.cpp reads a manifests folder into a Catalog; codec.cpp has the
// path and URL rules.
#pragma once

#include "codec.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::manifest::detail {

using nlohmann::json;

/// Field access with errors that name the manifest and the field.
class Reader {
  public:
    explicit Reader(std::string_view origin) : m_origin(origin) {}

    /// Field values come from the manifest: the line is escaped as a whole (printable()).
    Error error(const std::string& what) const {
        return Error(ErrorCode::integrity, printable("manifest '" + m_origin + "': " + what));
    }

    Result<const json*> object(const json& parent, std::string_view key) const {
        auto it = parent.find(key);
        if (it == parent.end() || !it->is_object()) {
            return error("'" + std::string(key) + "' must be an object");
        }
        return &*it;
    }

    /// The array `key` of `parent`, which must be there.
    Result<const json*> array(const json& parent, std::string_view key) const {
        auto it = parent.find(key);
        if (it == parent.end() || !it->is_array()) {
            return error("'" + std::string(key) + "' must be an array");
        }
        return &*it;
    }

    /// The array `key` of `parent`, which must be there and hold something.
    Result<const json*> non_empty_array(const json& parent, std::string_view key) const {
        auto it = parent.find(key);
        if (it == parent.end() || !it->is_array() || it->empty()) {
            return error("'" + std::string(key) + "' must be a non-empty array");
        }
        return &*it;
    }

    /// An array of strings that may be left out (then empty).
    Result<std::vector<std::string>> strings(const json& obj, std::string_view key) const {
        std::vector<std::string> v;
        if (auto it = obj.find(key); it != obj.end()) {
            if (!it->is_array()) {
                return error("'" + std::string(key) + "' must be an array");
            }
            for (const auto& s : *it) {
                if (!s.is_string()) {
                    return error("'" + std::string(key) + "' must hold strings");
                }
                v.push_back(s.get<std::string>());
            }
        }
        return v;
    }

    Result<std::string> string(const json& obj, std::string_view key) const {
        auto it = obj.find(key);
        if (it == obj.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
            return error("missing or empty '" + std::string(key) + "'");
        }
        return it->get<std::string>();
    }

    std::string opt_string(const json& obj, std::string_view key) const {
        auto it = obj.find(key);
        if (it == obj.end() || !it->is_string()) {
            return {};
        }
        return it->get<std::string>();
    }

    Result<Version> version(const json& obj, std::string_view key) const {
        auto s = string(obj, key);
        if (!s) {
            return std::move(s).error();
        }
        auto v = Version::parse(*s);
        if (!v) {
            return error("'" + std::string(key) + "': " + v.error().message);
        }
        return *v;
    }

    Result<std::optional<Version>> opt_version(const json& obj, std::string_view key) const {
        auto it = obj.find(key);
        if (it == obj.end() || it->is_null()) {
            return std::optional<Version>{};
        }
        auto v = version(obj, key);
        if (!v) {
            return std::move(v).error();
        }
        return std::optional<Version>{*v};
    }

    /// Non-negative integer, written as a number or (as NVIDIA does) a decimal string.
    Result<std::optional<std::uint64_t>> size(const json& obj, std::string_view key) const {
        auto it = obj.find(key);
        if (it == obj.end() || it->is_null()) {
            return std::optional<std::uint64_t>{};
        }
        if (it->is_number_unsigned()) {
            return std::optional<std::uint64_t>{it->get<std::uint64_t>()};
        }
        if (it->is_string()) {
            const auto& s = it->get_ref<const std::string&>();
            if (!s.empty() && s.size() <= 19 &&
                std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
                return std::optional<std::uint64_t>{std::stoull(s)};
            }
        }
        return error("'" + std::string(key) + "' must be a non-negative integer");
    }

    Result<unsigned> uint(const json& obj, std::string_view key) const {
        auto it = obj.find(key);
        if (it == obj.end() || !it->is_number_unsigned() || it->get<std::uint64_t>() > 100000) {
            return error("'" + std::string(key) + "' must be a small non-negative integer");
        }
        return static_cast<unsigned>(it->get<std::uint64_t>());
    }

    /// {path?, sha256, size?}; `need_size` makes size mandatory.
    Result<Artifact> artifact(const json& obj, const std::string& where, bool need_size) const {
        if (!obj.is_object()) {
            return error(where + " must be an object");
        }
        Artifact a;
        a.path = opt_string(obj, "path");
        if (obj.contains("path") && !obj.at("path").is_null() &&
            (!obj.at("path").is_string() || !is_safe_relative_path(a.path))) {
            return error(where + ": unsafe or malformed path '" + a.path +
                         "' (must be relative: letters, digits and ._+~- between slashes, no "
                         "'..' or percent-encoding)");
        }
        a.url = opt_string(obj, "url");
        if (obj.contains("url") && (!is_safe_https_url(a.url) || !a.path.empty())) {
            return error(where +
                         ": 'url' must be a plain https URL (no encoded or literal '..') and "
                         "exclude 'path'");
        }
        auto sha = obj.find("sha256");
        if (sha == obj.end() || !sha->is_string()) {
            return error(where + ": missing sha256");
        }
        a.sha256 = sha->get<std::string>();
        if (!is_sha256_hex(a.sha256)) {
            return error(where + ": sha256 '" + a.sha256 + "' is not 64 lowercase hex digits");
        }
        auto sz = size(obj, "size");
        if (!sz) {
            return error(where + ": " + sz.error().message);
        }
        a.size = *sz;
        if (need_size && !a.size) {
            return error(where + ": missing size");
        }
        return a;
    }

    Status header(const json& doc, std::string_view kind) const {
        if (!doc.is_object()) {
            return error("not a JSON object");
        }
        auto schema = doc.find("schema");
        if (schema == doc.end() || !schema->is_string()) {
            return error("no 'schema' field; expected '" + std::string(k_schema) + "'");
        }
        if (schema->get_ref<const std::string&>() != k_schema) {
            return error("unknown schema '" + schema->get<std::string>() +
                         "'; this cudaenv reads '" + std::string(k_schema) + "'")
                .with_hint("a newer cudaenv may read it; upgrade cudaenv or use manifests written "
                           "for this version");
        }
        auto k = doc.find("kind");
        if (k == doc.end() || !k->is_string() || k->get_ref<const std::string&>() != kind) {
            return error("expected kind '" + std::string(kind) + "'");
        }
        return Ok{};
    }

  private:
    std::string m_origin;
};

/// The per-platform artifacts of a release or build: {"linux-x86_64": {relative_path, sha256,
/// size}}.
Result<std::map<std::string, Artifact, std::less<>>>
platform_map(const Reader& rd, const json& obj, const std::string& where, bool need_size);
Result<SmRange> parse_sm(const Reader& rd, const json& obj);
CompatRule parse_rule(const std::string& s, bool& ok);
const char* rule_name(CompatRule r);

} // namespace cudaenv::manifest::detail
