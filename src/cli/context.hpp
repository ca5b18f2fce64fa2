// What every command gets: the environment captured once in main, the global options, and
// the output streams. Nothing below cli/ reads the process's environment or writes to stdout.
#pragma once

#include "core/error.hpp"
#include "core/ops/session.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace cudaenv::cli {

/// stdout or stderr, made at its first use. A shim or a prompt hook that prints nothing then
/// never builds an iostream, and so never the locale and its facets: that is ~45,000 of the
/// shim's instructions and a tenth of its page faults before the tool's exec (docs/performance.md).
/// `*ctx.out << ...` reads as it did with a plain pointer; a test may point it at its own stream.
class LazyStream {
  public:
    using Make = std::ostream& (*)();
    LazyStream() = default;

    explicit LazyStream(Make make) : m_make(make) {}

    LazyStream& operator=(std::ostream* stream) {
        m_stream = stream;
        return *this;
    }

    std::ostream& operator*() const {
        if (m_stream == nullptr) {
            m_stream = &m_make();
        }
        return *m_stream;
    }

    std::ostream* operator->() const { return &**this; }

  private:
    Make m_make = nullptr;
    mutable std::ostream* m_stream = nullptr;
};

/// An operation's Session (the environment, the user's choices, the machine's config and what
/// follows from them: core/ops/session.hpp) plus what only the front end has: the output
/// streams, the output options and the exit code.
struct Context : ops::Session {
    LazyStream out;
    LazyStream err;

    // global options
    bool json = false;
    bool no_color = false;

    /// `exec`'s command line, taken verbatim from argv before CLI11 parses the rest: every
    /// argument after the tool's name belongs to the tool (`--`, `--version`, `-h` included).
    std::vector<std::string> exec_command;

    /// Set by the command that ran.
    int exit_code = 0;

    /// stderr is a terminal (progress bars), and colour is allowed.
    bool stderr_tty = false;
    /// stdout is a terminal and colour is allowed (NO_COLOR unset; --no-color is checked apart).
    bool stdout_color = false;
};

/// Fills a Context from this process, once, at the start of main: the environment, the
/// executable's path, the working directory, stdout/stderr and whether stderr is a terminal.
void capture_process(Context& ctx, char** environ_);

/// The name a process was started under (argv[0]'s file name, or CUDAENV_FORCE_ARG0 for tests).
std::string started_as(const Context& ctx, const char* argv0);

/// Prints an error as the contract says: one line "cudaenv: error: ..." and "help:" lines on
/// stderr; with --json also a document on stdout. Returns the exit code.
int report_error(Context& ctx, const Error& error, const std::string& command);

/// Writes one JSON document (with schema_version) to stdout.
void emit_json(Context& ctx, nlohmann::json doc);

/// 1536 -> "1.5 KiB"
std::string human_size(std::uint64_t bytes);

} // namespace cudaenv::cli
