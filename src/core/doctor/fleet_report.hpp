// `cudaenv report DIR`'s input: the per-host `cudaenv doctor --json` documents a fleet run
// fetched (DIR/<host>.json). Every document is input from another machine: each field's type is
// checked, a link is never followed, one file may cost at most k_max_report_bytes, and a file that
// fails any of it is named with why and left out of the numbers -- the others are reported.
#pragma once

#include "../error.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace cudaenv::doctor {

inline constexpr std::size_t k_max_report_bytes = 8u << 20;
/// More files than this in DIR: the rest are not read (said in `truncated`).
inline constexpr std::size_t k_max_reports = 100000;

struct HostReport {
    std::string host; ///< the file's stem, printable
    std::string gpus = "-";
    std::string driver = "-";
    std::string cuda = "-";
    std::string cudnn = "-";
    std::size_t failures = 0;
    std::size_t warnings = 0;
    nlohmann::json worst; ///< {id, status, finding, fix} or null
    /// The advisories its doctor found applying (id -> severity), acknowledged ones left out.
    std::map<std::string, std::string> advisories;
    std::string problem; ///< why the document was left out ("probes[2].status is a number ...")
};

struct FleetReport {
    std::vector<HostReport> hosts; ///< unreadable first, then by failures, warnings, name
    std::size_t failing = 0;       ///< hosts with a failure or a document left out
    std::size_t warning = 0;
    bool truncated = false;

    /// Advisory id -> its severity and how many hosts it applies to, most hosts first.
    struct AdvisoryCount {
        std::string id;
        std::string severity;
        std::size_t hosts = 0;
    };

    std::vector<AdvisoryCount> advisories;
};

/// Reads DIR. Errors: not_found (no *.json at all), filesystem (DIR cannot be read).
Result<FleetReport> read_fleet_reports(const std::filesystem::path& dir);

/// One document's text as a host row (exposed for unit tests).
HostReport host_report(const std::string& host, const std::string& text);

} // namespace cudaenv::doctor
