// Dotted numeric versions: CUDA (11.8, 11.8.0), component builds (11.8.89), cuDNN (8.9.7.29),
// drivers (520.61.05), TensorFlow (2.13.1).
//
// A Version keeps the components it was written with, so "11.8" and "11.8.0" print as written,
// and so do zero-padded parts ("520.61.05", a driver).
// Ordering compares numerically with missing components read as 0, then by component count, so
// 11.8 < 11.8.0 < 11.8.89 and sorting is total. A shorter version is also a *prefix pattern*:
// "11.8" matches 11.8.0 and 11.8.89 (matches()), which is how SPECs pick the newest release.
#pragma once

#include "error.hpp"

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cudaenv {

class Version {
  public:
    static constexpr std::size_t k_max_parts = 6;

    Version() = default;

    /// Parses "11", "11.8", "11.8.0", "8.9.7.29". Rejects empty parts, signs, leading or
    /// trailing dots, more than six parts, and parts over 999999999 (NVIDIA writes
    /// five-part versions -- cccl 13.3.3.3.1 -- and eight-digit ones -- cuda_compat 13.3.45405995).
    static Result<Version> parse(std::string_view text);

    /// parse() or nullopt, for optional inputs.
    static std::optional<Version> try_parse(std::string_view text);

    std::size_t size() const { return m_size; }

    std::uint32_t operator[](std::size_t i) const { return i < m_size ? m_parts[i] : 0; }

    std::uint32_t major() const { return (*this)[0]; }

    std::uint32_t minor() const { return (*this)[1]; }

    /// The first n components (n <= size()).
    Version truncated(std::size_t n) const;

    /// True when every component of *this equals the same component of other:
    /// Version("11.8").matches(Version("11.8.89")).
    bool is_prefix_of(const Version& other) const;

    std::string str() const;

    /// Numeric comparison with missing components read as 0, ignoring how many were written.
    static std::strong_ordering compare_numeric(const Version& a, const Version& b);

    friend std::strong_ordering operator<=>(const Version& a, const Version& b);

    friend bool operator==(const Version& a, const Version& b) {
        return (a <=> b) == std::strong_ordering::equal;
    }

  private:
    std::array<std::uint32_t, k_max_parts> m_parts{};
    std::array<std::uint8_t, k_max_parts> m_width{}; ///< digits as written (leading zeros)
    std::size_t m_size = 0;
};

} // namespace cudaenv
