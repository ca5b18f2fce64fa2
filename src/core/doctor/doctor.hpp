// cudaenv doctor (docs/design.md §5): independent probes, one per file under probes/, each reading
// the machine only through a Host (files under the sysroot, the loader's view, child processes for
// the libraries) and returning ok / warn / fail / skip with a one-line finding, the details and
// the exact step that fixes it. A probe names the probes it stands on; when one of those fails or
// is skipped, the runner reports it as skipped with that reason instead of adding noise.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::doctor {

class Host;

/// Ordered by how much it matters: the worst status of a layer is its status.
enum class Status { ok, skip, warn, fail };

std::string_view to_string(Status s);

/// One problem a probe found: what, how bad, and the step that fixes it.
struct Issue {
    Status status = Status::warn;
    std::string summary;
    std::string fix;
};

struct Finding {
    Status status = Status::ok;
    std::string summary;              ///< one line: the worst problem (or the all-clear)
    std::vector<std::string> details; ///< shown with -v and in --json
    std::string fix;                  ///< the command or step that fixes it; empty when ok
    /// Every further problem the probe found, worst first, each with its fix: a probe never
    /// stops at its first finding (text shows "+N more", -v and --json all of them).
    std::vector<Issue> more = {};
};

Finding ok(std::string summary, std::vector<std::string> details = {});
Finding warn(std::string summary, std::string fix, std::vector<std::string> details = {});
Finding fail(std::string summary, std::string fix, std::vector<std::string> details = {});
Finding skip(std::string summary, std::vector<std::string> details = {});

/// A probe's verdict from every problem it found: none is `all_clear`; else the worst (the first
/// of the worst, as found) is the headline and the others follow in `more`, worst first.
Finding verdict(std::vector<Issue> issues, Finding all_clear);

struct Probe {
    std::string_view id;
    std::string_view layer;
    std::string_view title;
    /// Probes this one stands on: a failed or skipped one turns this one into a skip.
    std::vector<std::string_view> needs;
    Finding (*run)(Host& host);
};

/// Every probe, in the order they run and are shown (outermost layer first).
std::span<const Probe> probes();

/// The layers in display order.
std::span<const std::string_view> layers();

struct Entry {
    const Probe* probe = nullptr;
    Finding finding;
};

/// Runs every probe (or only `only`, plus what those stand on, which are run but not returned).
/// Unknown ids in `only` are the caller's to reject (see find_probe). A full run with remembered
/// answers (HostConfig::answers) first starts the children it will ask all at once
/// (checks::start_children); the probes still run one after the other, in this order.
std::vector<Entry> run(Host& host, const std::vector<std::string>& only = {});

const Probe* find_probe(std::string_view id);

/// The worst status among `entries`.
Status worst(const std::vector<Entry>& entries);

} // namespace cudaenv::doctor
