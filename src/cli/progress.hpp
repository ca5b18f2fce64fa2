// Install progress on stderr: on a terminal, one bar per component (bytes, rate, ETA) redrawn
// at most ten times a second; otherwise one line per component when it is done. Thread-safe:
// install workers call it.
#pragma once

#include "core/install/install.hpp"

#include <chrono>
#include <iosfwd>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace cudaenv::cli {

class ProgressReporter {
  public:
    ProgressReporter(std::ostream& err, bool tty, bool quiet)
        : m_err(err), m_tty(tty), m_quiet(quiet) {}

    void on_event(const install::Event& e);

    /// Final redraw (terminal) so the bars show their end state.
    void finish();

  private:
    struct Row {
        std::string component;
        std::string version;
        std::uint64_t bytes = 0;
        std::optional<std::uint64_t> total;
        std::string state = "waiting";
        std::chrono::steady_clock::time_point started{};
        std::optional<std::chrono::steady_clock::time_point> ended;
    };

    void redraw(bool force);

    std::ostream& m_err;
    bool m_tty;
    bool m_quiet;
    std::mutex m_mu;
    std::vector<Row> m_rows;
    std::map<std::string, std::size_t> m_index;
    std::size_t m_drawn = 0;
    std::chrono::steady_clock::time_point m_last_draw{};
};

} // namespace cudaenv::cli
