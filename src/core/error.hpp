// Errors and results for everything in cudaenv_core.
//
// Expected failures travel as values (Result<T>), never as exceptions: third-party exceptions
// (nlohmann, CLI11) are converted at the wrapper that calls them. Each ErrorCode maps to one exit
// code of the documented table (README "Exit codes"), so a script can tell a network fault from a
// refused combination without parsing text.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace cudaenv {

/// The classes of failure; each has exactly one exit code (exit_code()).
enum class ErrorCode {
    failure,        ///< 1: generic failure
    usage,          ///< 2: bad command line or malformed SPEC
    network,        ///< 3: download failed
    integrity,      ///< 4: checksum mismatch, bad or unknown manifest
    unsafe_archive, ///< 5: an archive entry the filter refuses
    filesystem,     ///< 6: ENOSPC, EIO, EROFS, EACCES...
    conflict,       ///< 7: state conflict (foreign link, active version)
    incompatible,   ///< 8: a combination the manifests mark incompatible
    not_found,      ///< 9: a well-formed SPEC that names no known release
    lock_timeout,   ///< 75: another cudaenv holds the lock (EX_TEMPFAIL)
    internal,       ///< 70: a bug (EX_SOFTWARE)
};

/// The process exit code for an error class.
int exit_code(ErrorCode code);

/// Short stable name for JSON output ("usage", "not_found", ...).
const char* to_string(ErrorCode code);

/// Text from outside (archive entries, manifests, .cuda-version) as it may be printed on one line
/// of a terminal: control bytes (C0, DEL, C1), bytes that are not well-formed UTF-8 and
/// backslashes become \xNN, so nothing can move the cursor, start an escape sequence or split an
/// error line; well-formed UTF-8 text stays as it is.
std::string printable(std::string_view s);

struct Error {
    ErrorCode code = ErrorCode::failure;
    std::string message;
    /// Outermost first: "resolving 'tf-2.13'", then the message.
    std::vector<std::string> context;
    /// Each a line the user can act on, printed as "help: ...".
    std::vector<std::string> hints;

    Error() = default;

    Error(ErrorCode c, std::string msg) : code(c), message(std::move(msg)) {}

    /// Returns a new Error (by value, so `e = std::move(e).with_hint(...)` is safe).
    Error with_context(std::string layer) && {
        context.insert(context.begin(), std::move(layer));
        return std::move(*this);
    }

    Error with_hint(std::string hint) && {
        hints.push_back(std::move(hint));
        return std::move(*this);
    }

    /// "<context>: <context>: <message>" on one line.
    std::string full_message() const;
};

/// A value or an Error. A small stand-in for std::expected (C++23), which Debian 12's
/// compilers do not have in C++20 mode.
template <typename T> class [[nodiscard]] Result {
  public:
    Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}

    Result(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}

    bool has_value() const { return m_v.index() == 0; }

    explicit operator bool() const { return has_value(); }

    T& value() & {
        assert(has_value());
        return std::get<0>(m_v);
    }

    const T& value() const& {
        assert(has_value());
        return std::get<0>(m_v);
    }

    T&& value() && {
        assert(has_value());
        return std::get<0>(std::move(m_v));
    }

    T& operator*() & { return value(); }

    const T& operator*() const& { return value(); }

    T* operator->() { return &value(); }

    const T* operator->() const { return &value(); }

    const Error& error() const& {
        assert(!has_value());
        return std::get<1>(m_v);
    }

    Error&& error() && {
        assert(!has_value());
        return std::get<1>(std::move(m_v));
    }

  private:
    std::variant<T, Error> m_v;
};

/// Result<void>: success carries nothing.
struct Ok {};

using Status = Result<Ok>;

} // namespace cudaenv

/// Propagate an error from an expression returning Result<T>; evaluates to the value.
#define CUDAENV_TRY(expr)                                                                          \
    __extension__({                                                                                \
        auto cudaenv_try_r_ = (expr);                                                              \
        if (!cudaenv_try_r_) {                                                                     \
            return std::move(cudaenv_try_r_).error();                                              \
        }                                                                                          \
        std::move(cudaenv_try_r_).value();                                                         \
    })
