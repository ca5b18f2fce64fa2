// Install progress on stderr: on a terminal, one bar per component (bytes, download rate, ETA)
// and an overall line across all of them, redrawn at most ten times a second; otherwise one
// line per component when it is done and the overall line at the end. A finished archive keeps
// the rate its download had. Thread-safe: install workers call it.
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
        bool downloaded_here = false; ///< it was downloaded (not reused, not from the cache)
        std::optional<std::chrono::steady_clock::time_point> fetched; ///< download finished
        std::optional<std::chrono::steady_clock::time_point> ended;
    };

    void redraw(bool force);
    /// The row of the event's component, made on its first event.
    Row& row_for(const install::Event& e);
    /// The row moved on by the event: its state, bytes and times.
    void advance(Row& r, const install::Event& e);
    /// Without a terminal: one line per archive done or reused.
    void log_line(const Row& r, const install::Event& e);
    /// "all: 1.2 GiB/3.4 GiB  85.1 MiB/s  ETA 27s" across every archive.
    std::string overall(std::chrono::steady_clock::time_point now) const;

    std::ostream& m_err;
    bool m_tty;
    bool m_quiet;
    bool m_finished = false; ///< after finish(): an error line may follow, and nothing after it
    std::mutex m_mu;
    std::vector<Row> m_rows;
    std::map<std::string, std::size_t> m_index;
    std::size_t m_drawn = 0;
    std::chrono::steady_clock::time_point m_last_draw{};
    std::optional<std::chrono::steady_clock::time_point> m_first_download;
};

} // namespace cudaenv::cli
