#include "strict_json.hpp"

#include "../text.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace cudaenv::channel {

namespace {

using json = nlohmann::json;

/// Thrown from the parser's callback to stop it at once (nlohmann's parser offers no other way
/// to abandon a document part-way); caught in parse_strict, never escapes it.
struct Refused {
    std::string why;
};

} // namespace

Result<json> parse_strict(std::string_view text, const JsonLimits& limits, std::string_view what) {
    // One set of keys per open object; arrays push nothing.
    std::vector<std::set<std::string>> open;
    std::vector<bool> is_object;
    auto callback = [&](int depth, json::parse_event_t event, json& parsed) -> bool {
        switch (event) {
        case json::parse_event_t::object_start:
        case json::parse_event_t::array_start:
            if (static_cast<std::size_t>(depth) >= limits.max_depth) {
                throw Refused{"nested deeper than " + std::to_string(limits.max_depth) + " levels"};
            }
            is_object.push_back(event == json::parse_event_t::object_start);
            if (event == json::parse_event_t::object_start) {
                open.emplace_back();
            }
            break;
        case json::parse_event_t::object_end:
        case json::parse_event_t::array_end:
            if (!is_object.empty()) {
                if (is_object.back()) {
                    open.pop_back();
                }
                is_object.pop_back();
            }
            break;
        case json::parse_event_t::key:
            if (!open.empty() && !open.back().insert(parsed.get<std::string>()).second) {
                throw Refused{"the key '" + printable(parsed.get<std::string>()) +
                              "' is given twice in one object"};
            }
            break;
        case json::parse_event_t::value:
            break;
        }
        return true;
    };
    try {
        json doc = json::parse(text.begin(), text.end(), callback, true);
        return doc;
    } catch (const Refused& r) {
        return Error(ErrorCode::integrity, std::string(what) + ": " + r.why);
    } catch (const json::exception& e) {
        return Error(ErrorCode::integrity,
                     std::string(what) + ": not JSON (" + printable(e.what()) + ")");
    }
}

Status check_fields(const json& object,
                    std::initializer_list<std::string_view> allowed,
                    std::string_view what,
                    std::string_view where) {
    if (!object.is_object()) {
        return Error(ErrorCode::integrity,
                     std::string(what) + ": " + std::string(where) + " is not an object");
    }
    for (const auto& [key, value] : object.items()) {
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
            return Error(ErrorCode::integrity,
                         std::string(what) + ": " + std::string(where) + " has the field '" +
                             printable(key) +
                             "', which this schema does not have (a signed document "
                             "is read exactly)");
        }
    }
    return Ok{};
}

} // namespace cudaenv::channel
