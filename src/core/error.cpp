#include "error.hpp"

#include <cstdio>

namespace cudaenv {

namespace {

/// The length of the well-formed UTF-8 sequence at s[i] (2 to 4), 0 if there is none: overlong
/// forms, surrogates and code points past U+10FFFF are not well-formed.
std::size_t utf8_length(std::string_view s, std::size_t i) {
    auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = at(i);
    std::size_t n = c >= 0xc2 && c <= 0xdf   ? 2
                    : c >= 0xe0 && c <= 0xef ? 3
                    : c >= 0xf0 && c <= 0xf4 ? 4
                                             : 0;
    if (n == 0 || i + n > s.size()) {
        return 0;
    }
    for (std::size_t k = 1; k < n; ++k) {
        if ((at(i + k) & 0xc0) != 0x80) {
            return 0;
        }
    }
    unsigned char d = at(i + 1);
    if ((c == 0xe0 && d < 0xa0) || (c == 0xed && d > 0x9f) || (c == 0xf0 && d < 0x90) ||
        (c == 0xf4 && d > 0x8f)) {
        return 0;
    }
    if (c == 0xc2 && d <= 0x9f) {
        return 0; // U+0080..U+009F: C1 controls (0x9b is a CSI on some terminals)
    }
    return n;
}

} // namespace

std::string printable(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        auto u = static_cast<unsigned char>(s[i]);
        if (u >= 0x80) {
            if (std::size_t n = utf8_length(s, i)) {
                out.append(s.substr(i, n));
                i += n;
                continue;
            }
        }
        if (u < 0x20 || u >= 0x7f || s[i] == '\\') {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", u);
            out += buf;
        } else {
            out += s[i];
        }
        ++i;
    }
    return out;
}

int exit_code(ErrorCode code) {
    switch (code) {
    case ErrorCode::failure:
        return 1;
    case ErrorCode::usage:
        return 2;
    case ErrorCode::network:
        return 3;
    case ErrorCode::integrity:
        return 4;
    case ErrorCode::unsafe_archive:
        return 5;
    case ErrorCode::filesystem:
        return 6;
    case ErrorCode::conflict:
        return 7;
    case ErrorCode::incompatible:
        return 8;
    case ErrorCode::not_found:
        return 9;
    case ErrorCode::lock_timeout:
        return 75;
    case ErrorCode::internal:
        return 70;
    }
    return 1;
}

const char* to_string(ErrorCode code) {
    switch (code) {
    case ErrorCode::failure:
        return "failure";
    case ErrorCode::usage:
        return "usage";
    case ErrorCode::network:
        return "network";
    case ErrorCode::integrity:
        return "integrity";
    case ErrorCode::unsafe_archive:
        return "unsafe_archive";
    case ErrorCode::filesystem:
        return "filesystem";
    case ErrorCode::conflict:
        return "conflict";
    case ErrorCode::incompatible:
        return "incompatible";
    case ErrorCode::not_found:
        return "not_found";
    case ErrorCode::lock_timeout:
        return "lock_timeout";
    case ErrorCode::internal:
        return "internal";
    }
    return "failure";
}

std::string Error::full_message() const {
    std::string out;
    for (const auto& layer : context) {
        out += layer;
        out += ": ";
    }
    out += message;
    return out;
}

} // namespace cudaenv
