#include "progress.hpp"

#include "context.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace cudaenv::cli {

namespace {

std::string bar(double frac, int width) {
    int full = static_cast<int>(frac * width);
    std::string s = "[";
    for (int i = 0; i < width; ++i) {
        s += i < full ? '#' : (i == full ? '>' : '.');
    }
    return s + "]";
}

} // namespace

ProgressReporter::Row& ProgressReporter::row_for(const install::Event& e) {
    auto it = m_index.find(e.component);
    if (it == m_index.end()) {
        it = m_index.emplace(e.component, m_rows.size()).first;
        Row row;
        row.component = e.component;
        row.version = e.version;
        row.total = e.total;
        row.started = std::chrono::steady_clock::now();
        m_rows.push_back(std::move(row));
    }
    return m_rows[it->second];
}

void ProgressReporter::advance(Row& r, const install::Event& e) {
    using K = install::Event::Kind;
    switch (e.kind) {
    case K::reused:
        r.state = "already in the store";
        break;
    case K::downloading:
        r.state = "downloading";
        r.started = std::chrono::steady_clock::now();
        r.downloaded_here = true;
        if (!m_first_download) {
            m_first_download = r.started;
        }
        break;
    case K::progress:
        r.bytes = e.bytes;
        break;
    case K::extracting:
        r.bytes = std::max(r.bytes, e.bytes);
        if (r.downloaded_here && !r.fetched) {
            r.fetched = std::chrono::steady_clock::now();
        }
        r.state = e.cached ? "verified in cache, extracting" : "verified, extracting";
        break;
    case K::done:
        r.bytes = std::max(r.bytes, e.bytes);
        r.state = "done";
        r.ended = std::chrono::steady_clock::now();
        if (r.downloaded_here && !r.fetched) {
            r.fetched = r.ended;
        }
        if (r.total) {
            r.bytes = std::max(r.bytes, *r.total);
        }
        break;
    case K::failed:
        r.state = "failed";
        break;
    }
}

void ProgressReporter::log_line(const Row& r, const install::Event& e) {
    using K = install::Event::Kind;
    if (e.kind != K::done && e.kind != K::reused) {
        return;
    }
    auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - r.started).count();
    char t[32];
    std::snprintf(t, sizeof t, "%.1f s", secs);
    m_err << "cudaenv: " << r.component << " " << r.version << ": "
          << (e.kind == K::reused ? std::string("already in the store")
                                  : human_size(r.bytes) + " verified and extracted in " + t)
          << "\n";
}

void ProgressReporter::on_event(const install::Event& e) {
    if (m_quiet) {
        return;
    }
    std::lock_guard<std::mutex> g(m_mu);
    if (m_finished) {
        return; // a worker's late event: the summary (and perhaps the error) is already printed
    }
    Row& r = row_for(e);
    if (!e.note.empty()) {
        m_err << (m_tty ? "\r\x1b[K" : "") << "cudaenv: warning: " << e.component << " "
              << e.version << ": " << e.note << "\n";
    }
    advance(r, e);
    if (!m_tty) {
        log_line(r, e);
        return;
    }
    redraw(e.kind != install::Event::Kind::progress);
}

void ProgressReporter::redraw(bool force) {
    auto now = std::chrono::steady_clock::now();
    if (!force && now - m_last_draw < std::chrono::milliseconds(100)) {
        return;
    }
    m_last_draw = now;
    std::string out;
    if (m_drawn) {
        out += "\x1b[" + std::to_string(m_drawn) + "F"; // back to the first bar
    }
    for (const auto& r : m_rows) {
        char line[256];
        double frac =
            r.total && *r.total ? static_cast<double>(r.bytes) / static_cast<double>(*r.total) : 0;
        // the download's own rate: while it runs, and kept once it is done (never "0 B/s")
        double secs = std::chrono::duration<double>(r.fetched.value_or(now) - r.started).count();
        double rate = r.downloaded_here && secs > 0.05 ? static_cast<double>(r.bytes) / secs : 0;
        std::string eta = "";
        if (r.state == "downloading" && rate > 0 && r.total && *r.total > r.bytes) {
            eta =
                "ETA " +
                std::to_string(static_cast<long>(static_cast<double>(*r.total - r.bytes) / rate)) +
                "s";
        }
        std::string rate_text =
            rate > 0 ? human_size(static_cast<std::uint64_t>(rate)) + "/s" : std::string("-");
        std::snprintf(line,
                      sizeof line,
                      "  %-22.22s %-12.12s %s %9s %11s %-9s %s",
                      r.component.c_str(),
                      r.version.c_str(),
                      bar(r.state == "done" ? 1.0 : frac, 20).c_str(),
                      human_size(r.bytes).c_str(),
                      rate_text.c_str(),
                      eta.c_str(),
                      r.state == "downloading" ? "" : r.state.c_str());
        out += line;
        out += "\x1b[K\n";
    }
    out += "  " + overall(now) + "\x1b[K\n";
    m_drawn = m_rows.size() + 1;
    m_err << out << std::flush;
}

std::string ProgressReporter::overall(std::chrono::steady_clock::time_point now) const {
    std::uint64_t got = 0, total = 0, downloaded = 0;
    std::size_t done = 0;
    bool running = false;
    for (const auto& r : m_rows) {
        got += r.bytes;
        total += r.total.value_or(r.bytes);
        downloaded += r.downloaded_here ? r.bytes : 0;
        if (r.state == "done" || r.state == "already in the store") {
            ++done;
        }
        running = running || r.state == "downloading";
    }
    std::string line = "all: " + std::to_string(done) + "/" + std::to_string(m_rows.size()) +
                       " archives, " + human_size(got) + " of " + human_size(total);
    if (m_first_download) {
        auto last = m_first_download.value();
        for (const auto& r : m_rows) {
            if (r.downloaded_here) {
                last = std::max(last, running ? now : r.fetched.value_or(now));
            }
        }
        double secs = std::chrono::duration<double>(last - *m_first_download).count();
        if (secs > 0) {
            double rate = static_cast<double>(downloaded) / secs;
            line += ", " + human_size(static_cast<std::uint64_t>(rate)) + "/s";
            if (running && rate > 0 && total > got) {
                line += ", ETA " +
                        std::to_string(static_cast<long>(static_cast<double>(total - got) / rate)) +
                        "s";
            }
        }
    }
    return line;
}

void ProgressReporter::finish() {
    std::lock_guard<std::mutex> g(m_mu);
    if (m_quiet || m_finished || m_rows.empty()) {
        m_finished = true;
        return;
    }
    m_finished = true;
    if (m_tty) {
        redraw(true);
    } else {
        m_err << "cudaenv: " << overall(std::chrono::steady_clock::now()) << "\n";
    }
}

} // namespace cudaenv::cli
