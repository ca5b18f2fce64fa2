#include "error.hpp"

#include <cstdio>

namespace cudaenv {

std::string printable(std::string_view s) {
    std::string out;
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f || c == '\\') {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", u);
            out += buf;
        } else {
            out += c;
        }
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
