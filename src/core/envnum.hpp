// The numbers cudaenv reads from its environment, parsed one way: plain digits (a fraction where
// the unit allows it, a binary size suffix for byte counts), within a range, or a usage error
// (exit 2) that names the variable. Before, "=abc" meant "this is a bug" (exit 70) for one
// variable, "=10GB" meant 10 bytes for another, and "=abc" silently meant the default for a third.
#pragma once

#include "error.hpp"

#include <cstdint>
#include <span>
#include <string_view>

namespace cudaenv {

struct NumberVar {
    std::string_view name;
    std::string_view unit; ///< "seconds", "milliseconds", "bytes", "" (a count)
    std::uint64_t min = 0;
    std::uint64_t max = 0;
    /// The value is stored in thousandths of the unit written ("0.5" seconds -> 500): the
    /// variable accepts up to three decimals.
    bool thousandths = false;
};

/// Every numeric variable cudaenv reads, with its unit and range.
std::span<const NumberVar> number_vars();

/// The entry for `name`; null for a variable that is not numeric.
const NumberVar* number_var(std::string_view name);

/// Parses `text` for `var`. Bytes take an optional K, M, G, T or KiB, MiB, GiB, TiB suffix
/// (powers of 1024); "10GB" is refused rather than guessed.
Result<std::uint64_t> parse_number(const NumberVar& var, std::string_view text);

} // namespace cudaenv
