// Shared by the fuzz targets: the properties every input must keep. A broken property aborts, so
// libFuzzer (and the replay driver in plain builds) stops on it and keeps the input.
#pragma once

#include "core/error.hpp"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace cudaenv::fuzz {

[[noreturn]] inline void fail(const char* what, std::string_view detail = {}) {
    std::fprintf(stderr,
                 "fuzz property broken: %s: %.*s\n",
                 what,
                 static_cast<int>(detail.size()),
                 detail.data());
    std::abort();
}

inline void require(bool ok, const char* what, std::string_view detail = {}) {
    if (!ok) {
        fail(what, detail);
    }
}

/// The error contract (design.md §5): one line the terminal prints as it is, whatever the input
/// held: no newline, no control byte, no escape sequence, in the message, its context or a hint.
inline void require_printable_error(const Error& e) {
    auto clean = [](std::string_view s) {
        for (char ch : s) {
            auto c = static_cast<unsigned char>(ch);
            if (c < 0x20 || c == 0x7f) {
                return false;
            }
        }
        return true;
    };
    require(!e.message.empty(), "an error without a message");
    require(clean(e.full_message()), "an error line with control bytes", e.full_message());
    for (const auto& h : e.hints) {
        require(clean(h), "a hint with control bytes", h);
    }
}

/// CUDAENV_FUZZ_VERBOSE=1: each input's outcome on stderr (what a seed exercises).
inline bool verbose() {
    static const bool on = std::getenv("CUDAENV_FUZZ_VERBOSE") != nullptr;
    return on;
}

template <typename T> void report(const Result<T>& r, const char* what) {
    if (verbose()) {
        std::fprintf(stderr, "  %s: %s\n", what, r ? "accepted" : r.error().full_message().c_str());
    }
}

template <typename T> void require_printable_if_error(const Result<T>& r) {
    if (!r) {
        require_printable_error(r.error());
    }
}

template <typename T> void check(const Result<T>& r, const char* what) {
    report(r, what);
    if (!r) {
        require_printable_error(r.error());
    }
}

} // namespace cudaenv::fuzz
