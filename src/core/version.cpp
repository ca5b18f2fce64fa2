#include "version.hpp"

namespace cudaenv {

Result<Version> Version::parse(std::string_view text) {
    auto bad = [&](const char* why) {
        return Error(ErrorCode::usage, "invalid version '" + printable(text) + "': " + why);
    };
    if (text.empty()) {
        return bad("empty");
    }
    Version v;
    std::size_t i = 0;
    while (true) {
        if (v.m_size == k_max_parts) {
            return bad("more than six parts");
        }
        std::size_t start = i;
        std::uint64_t n = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            n = n * 10 + static_cast<std::uint64_t>(text[i] - '0');
            if (n > 999999999) {
                return bad("number too large");
            }
            ++i;
        }
        if (i == start) {
            return bad("expected a number");
        }
        v.m_width[v.m_size] = static_cast<std::uint8_t>(i - start);
        v.m_parts[v.m_size++] = static_cast<std::uint32_t>(n);
        if (i == text.size()) {
            break;
        }
        if (text[i] != '.') {
            return bad("unexpected character");
        }
        ++i;
        if (i == text.size()) {
            return bad("trailing dot");
        }
    }
    return v;
}

std::optional<Version> Version::try_parse(std::string_view text) {
    auto r = parse(text);
    if (!r) {
        return std::nullopt;
    }
    return *r;
}

Version Version::truncated(std::size_t n) const {
    Version v = *this;
    if (n < v.m_size) {
        for (std::size_t i = n; i < v.m_size; ++i) {
            v.m_parts[i] = 0;
            v.m_width[i] = 0;
        }
        v.m_size = n;
    }
    return v;
}

bool Version::is_prefix_of(const Version& other) const {
    if (m_size > other.m_size) {
        return false;
    }
    for (std::size_t i = 0; i < m_size; ++i) {
        if (m_parts[i] != other.m_parts[i]) {
            return false;
        }
    }
    return true;
}

std::string Version::str() const {
    std::string out;
    for (std::size_t i = 0; i < m_size; ++i) {
        if (i) {
            out += '.';
        }
        std::string part = std::to_string(m_parts[i]);
        if (part.size() < m_width[i]) {
            out.append(m_width[i] - part.size(), '0');
        }
        out += part;
    }
    return out;
}

std::strong_ordering Version::compare_numeric(const Version& a, const Version& b) {
    for (std::size_t i = 0; i < k_max_parts; ++i) {
        if (auto c = a[i] <=> b[i]; c != 0) {
            return c;
        }
    }
    return std::strong_ordering::equal;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
    if (auto c = Version::compare_numeric(a, b); c != 0) {
        return c;
    }
    return a.m_size <=> b.m_size;
}

} // namespace cudaenv
