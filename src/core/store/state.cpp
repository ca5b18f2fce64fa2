#include "state.hpp"

#include "../fs.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <string_view>

namespace cudaenv::store {

using json = nlohmann::json;

namespace {

Error corrupt(const Root& root, const std::string& why) {
    return Error(ErrorCode::integrity, "'" + root.state_file().string() + "' " + why)
        .with_hint(
            "it records the global version and the last switch: fix it by hand, or move "
            "it aside (the global choice is then forgotten; /usr/local/cuda stays as it is)");
}

/// An optional string field: absent or null is none; anything but a string is an error.
Result<std::optional<std::string>>
opt_string(const Root& root, const json& j, const char* key, const std::string& where) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        return std::optional<std::string>{};
    }
    if (!it->is_string()) {
        return corrupt(root, "has a '" + where + key + "' that is not a string");
    }
    return std::optional<std::string>(it->get<std::string>());
}

Result<Snapshot> snapshot_of(const Root& root, const json& j) {
    if (!j.is_object()) {
        return corrupt(root, "has a 'previous' that is not an object");
    }
    Snapshot s;
    s.global = CUDAENV_TRY(opt_string(root, j, "global", "previous.")).value_or("system");
    auto link = j.find("link");
    if (link != j.end() && !link->is_null()) {
        if (!link->is_object()) {
            return corrupt(root, "has a 'previous.link' that is not an object");
        }
        s.link_kind =
            CUDAENV_TRY(opt_string(root, *link, "kind", "previous.link.")).value_or("absent");
        s.link_target =
            CUDAENV_TRY(opt_string(root, *link, "target", "previous.link.")).value_or("");
        static constexpr std::string_view k_kinds[] = {
            "absent", "ours", "foreign_link", "alternatives", "directory", "other"};
        if (std::find(std::begin(k_kinds), std::end(k_kinds), s.link_kind) == std::end(k_kinds)) {
            return corrupt(root, "names an unknown link kind '" + printable(s.link_kind) + "'");
        }
    }
    s.conf = CUDAENV_TRY(opt_string(root, j, "conf", "previous."));
    s.moved_to = CUDAENV_TRY(opt_string(root, j, "moved_to", "previous."));
    return s;
}

} // namespace

Result<State> load_state(const Root& root) {
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(root.state_file(), ec))) {
        return State{};
    }
    auto text = read_text_file(root.state_file());
    if (!text) {
        return corrupt(root, "cannot be read: " + text.error().message);
    }
    auto j = json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        return corrupt(root, "is not a JSON object (damaged?)");
    }
    auto schema = CUDAENV_TRY(opt_string(root, j, "schema", ""));
    if (schema && *schema != k_state_schema) {
        return corrupt(root,
                       "has schema '" + printable(*schema) + "'; this cudaenv reads " +
                           k_state_schema + " (written by a newer cudaenv?)");
    }
    State s;
    s.global = CUDAENV_TRY(opt_string(root, j, "global", ""));
    s.pending = CUDAENV_TRY(opt_string(root, j, "pending", ""));
    if (auto p = j.find("previous"); p != j.end() && !p->is_null()) {
        s.previous = CUDAENV_TRY(snapshot_of(root, *p));
    }
    return s;
}

Status save_state(const Root& root, const State& s) {
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
    return write_file_atomic(root.state_file(), j.dump(2) + "\n");
}

} // namespace cudaenv::store
