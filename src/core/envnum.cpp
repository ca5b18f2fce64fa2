#include "envnum.hpp"

#include <array>
#include <limits>

namespace cudaenv {

namespace {

constexpr std::uint64_t k_day = 24 * 3600;

constexpr std::array k_vars{
    NumberVar{"CUDAENV_CONNECT_TIMEOUT", "seconds", 1, 3600, false},
    NumberVar{"CUDAENV_STALL_TIMEOUT", "seconds", 1, 3600, false},
    NumberVar{"CUDAENV_CHANNEL_TIMEOUT", "seconds", 1, 3600, false},
    NumberVar{"CUDAENV_RETRIES", "", 0, 100, false},
    NumberVar{"CUDAENV_RETRY_BACKOFF_MS", "milliseconds", 0, 600000, false},
    NumberVar{"CUDAENV_LOCK_TIMEOUT", "seconds", 0, 7 * k_day, false},
    NumberVar{"CUDAENV_LDCONFIG_TIMEOUT", "seconds", 1, 3600, false},
    NumberVar{"CUDAENV_EXTRACT_MAX_BYTES", "bytes", 1, std::uint64_t{1} << 50, false},
    NumberVar{"CUDAENV_EXTRACT_MAX_ENTRIES", "", 1, 100000000, false},
    NumberVar{"CUDAENV_DOCTOR_TIMEOUT", "seconds", 1, 3600 * 1000, true},
    NumberVar{"CUDAENV_RECURSION_COUNT", "", 0, 1000, false},
};

Error bad(const NumberVar& v, std::string_view text, const std::string& why) {
    std::string range = v.thousandths ? "0.001 to " + std::to_string(v.max / 1000)
                                      : std::to_string(v.min) + " to " + std::to_string(v.max);
    return Error(ErrorCode::usage,
                 std::string(v.name) + "='" + printable(text.substr(0, 60)) + "': " + why)
        .with_hint(std::string(v.name) + " takes " +
                   (v.unit == "bytes" ? "a number of bytes (suffixes K, M, G, T = KiB, MiB, GiB, "
                                        "TiB)"
                    : v.unit.empty()  ? std::string("a whole number")
                                      : "a number of " + std::string(v.unit)) +
                   ", " + range + "; or unset it");
}

} // namespace

std::span<const NumberVar> number_vars() {
    return k_vars;
}

const NumberVar* number_var(std::string_view name) {
    for (const auto& v : k_vars) {
        if (v.name == name) {
            return &v;
        }
    }
    return nullptr;
}

Result<std::uint64_t> parse_number(const NumberVar& v, std::string_view text) {
    std::string_view s = text;
    std::uint64_t n = 0;
    std::size_t digits = 0;
    constexpr auto k_max = std::numeric_limits<std::uint64_t>::max();
    while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') {
        auto d = static_cast<std::uint64_t>(s[digits] - '0');
        if (n > (k_max - d) / 10) {
            return bad(v, text, "too large");
        }
        n = n * 10 + d;
        ++digits;
    }
    if (digits == 0) {
        return bad(v, text, "not a number");
    }
    s.remove_prefix(digits);
    std::uint64_t scale = 1;
    if (v.thousandths) {
        std::uint64_t frac = 0;
        std::size_t places = 0;
        if (!s.empty() && s.front() == '.') {
            s.remove_prefix(1);
            while (!s.empty() && s.front() >= '0' && s.front() <= '9') {
                if (++places > 3) {
                    return bad(v, text, "more than three decimals");
                }
                frac = frac * 10 + static_cast<std::uint64_t>(s.front() - '0');
                s.remove_prefix(1);
            }
            if (places == 0) {
                return bad(v, text, "not a number");
            }
        }
        for (std::size_t i = places; i < 3; ++i) {
            frac *= 10;
        }
        if (n > (k_max - frac) / 1000) {
            return bad(v, text, "too large");
        }
        n = n * 1000 + frac;
    } else if (v.unit == "bytes" && !s.empty()) {
        static constexpr std::pair<std::string_view, std::uint64_t> k_suffixes[] = {
            {"K", 1ull << 10},
            {"M", 1ull << 20},
            {"G", 1ull << 30},
            {"T", 1ull << 40},
            {"KiB", 1ull << 10},
            {"MiB", 1ull << 20},
            {"GiB", 1ull << 30},
            {"TiB", 1ull << 40}};
        bool found = false;
        for (const auto& [suffix, mult] : k_suffixes) {
            if (s == suffix) {
                scale = mult;
                found = true;
            }
        }
        if (!found) {
            return bad(v,
                       text,
                       "unknown size suffix '" + printable(s) +
                           "' (K, M, G, T, KiB, MiB, GiB, TiB)");
        }
        s = {};
    }
    if (!s.empty()) {
        return bad(v, text, "not a number");
    }
    if (n > k_max / scale) {
        return bad(v, text, "too large");
    }
    n *= scale;
    if (n < v.min || n > v.max) {
        return bad(v, text, "out of range");
    }
    return n;
}

} // namespace cudaenv
