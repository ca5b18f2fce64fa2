// Small text helpers every floor shares (one of each: the doctor, the channel's diff, the ops and
// the CLI each had a join of their own).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cudaenv {

/// The parts with `sep` between each two: {"11.8", "12.4"} -> "11.8, 12.4"; {} -> "".
inline std::string join(const std::vector<std::string>& parts, std::string_view sep = ", ") {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i > 0) {
            out += sep;
        }
        out += parts[i];
    }
    return out;
}

/// The words of `line` between runs of any of `separators`, empty ones dropped:
/// words(" a  b\tc ") -> {"a", "b", "c"}. Views into `line`.
inline std::vector<std::string_view> words(std::string_view line,
                                           std::string_view separators = " \t") {
    std::vector<std::string_view> out;
    std::size_t pos = 0;
    while (pos < line.size()) {
        auto start = line.find_first_not_of(separators, pos);
        if (start == std::string_view::npos) {
            break;
        }
        auto end = line.find_first_of(separators, start);
        out.push_back(line.substr(start, end == std::string_view::npos ? end : end - start));
        pos = end == std::string_view::npos ? line.size() : end;
    }
    return out;
}

} // namespace cudaenv
