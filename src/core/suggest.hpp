// "Did you mean" suggestions (edit distance, as ninja's EditDistance).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv {

/// Levenshtein distance between two strings.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word`, if it is close enough to be a plausible typo
/// (distance <= max(1, word.size() / 3)).
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

} // namespace cudaenv
