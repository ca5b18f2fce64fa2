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

} // namespace cudaenv
