// Small text helpers the Host's views share (files, facts, loader). Not for probes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::doctor {

namespace detail {

inline std::string trim(std::string_view s) {
    auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) {
        return {};
    }
    auto e = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(b, e - b + 1));
}

inline std::vector<std::string> lines_of(std::string_view text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        out.emplace_back(text.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

inline std::string join_machine(std::string_view dir, std::string_view name) {
    std::string out(dir);
    while (out.size() > 1 && out.back() == '/') {
        out.pop_back();
    }
    if (out != "/") {
        out += '/';
    }
    out += name;
    return out;
}

} // namespace detail

} // namespace cudaenv::doctor
