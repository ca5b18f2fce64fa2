// Probe: the kernel log since boot (/dev/kmsg) for the driver's Xid events and GPUs that fell off
// the bus, each with what it means and what to do (NVIDIA's Xid catalog). Reading the log needs
// root where kernel.dmesg_restrict is 1: then the probe says so and skips.
#include "probes.hpp"

#include <map>

namespace cudaenv::doctor::checks {

namespace {

/// What an Xid means and what to do, for the ones a machine's owner acts on. `fatal`: the GPU
/// needs a reset or service; else the application (or a pending reset) does.
struct XidMeaning {
    unsigned xid;
    bool fatal;
    const char* what;
    const char* fix;
};

constexpr const char* k_reset =
    "stop the jobs on it and reset the GPU (sudo nvidia-smi -r -i <index>) or reboot; if it "
    "recurs, collect sudo nvidia-bug-report.sh and contact your hardware vendor";

constexpr XidMeaning k_meanings[] = {
    {13,
     false,
     "a graphics engine exception (usually the application's bug)",
     "fix or update the application; if different applications hit it, run the GPU's "
     "diagnostics (dcgmi diag -r 3)"},
    {31,
     false,
     "a GPU memory page fault (the application read or wrote memory it does not own)",
     "fix or update the application (compute-sanitizer finds the access)"},
    {43,
     false,
     "the GPU stopped processing (the application was stopped)",
     "restart the application; if it recurs, update the driver"},
    {45,
     false,
     "preemptive cleanup after an application was stopped",
     "nothing if the application was killed on purpose"},
    {48, true, "an uncorrectable (double-bit) ECC memory error", k_reset},
    {61, true, "an internal micro-controller breakpoint", k_reset},
    {62, true, "an internal micro-controller halt", k_reset},
    {63,
     false,
     "ECC page retirement or row remapping recorded",
     "reset the GPU when it is idle to activate the remapping (sudo nvidia-smi -r -i <index>)"},
    {64, true, "ECC page retirement or row remapping failed", k_reset},
    {74, true, "an NVLink error", k_reset},
    {79,
     true,
     "the GPU has fallen off the bus",
     "reboot to get it back; check its power cables, seating and cooling (and the PCIe slot's "
     "power limit); if it recurs, collect sudo nvidia-bug-report.sh and contact your hardware "
     "vendor"},
    {92,
     false,
     "a high rate of corrected (single-bit) ECC errors",
     "watch it (nvidia-smi -q -d ECC); plan service if it keeps rising"},
    {94,
     false,
     "a contained ECC error (the application using that memory was stopped)",
     "restart the application; reset the GPU when idle"},
    {95, true, "an uncontained ECC error", k_reset},
    {119, true, "the GPU's system processor (GSP) did not answer in time", k_reset},
    {120, true, "an error in the GPU's system processor (GSP)", k_reset},
    {154,
     true,
     "the driver asks for a recovery action (the message names it: reset or reboot)",
     "do what the message names (GPU reset or node reboot)"},
};

const XidMeaning* meaning_of(unsigned xid) {
    for (const auto& m : k_meanings) {
        if (m.xid == xid) {
            return &m;
        }
    }
    return nullptr;
}

/// One kind of event on one GPU: how often, and the first message.
struct Seen {
    std::size_t count = 0;
    std::string first;
};

/// "NVRM: Xid (PCI:0000:65:00): 79, pid=..., GPU has fallen off the bus." -> bus "0000:65:00",
/// 79. Older drivers write "Xid (0000:01:00): 3, ...".
bool parse_xid(std::string_view m, std::string& bus, unsigned& xid) {
    auto at = m.find("NVRM: Xid (");
    if (at == std::string_view::npos) {
        return false;
    }
    m.remove_prefix(at + 11);
    auto close = m.find("): ");
    if (close == std::string_view::npos || close > 64) {
        return false;
    }
    bus = std::string(m.substr(0, close));
    if (bus.rfind("PCI:", 0) == 0) {
        bus.erase(0, 4);
    }
    m.remove_prefix(close + 3);
    unsigned v = 0;
    std::size_t digits = 0;
    while (digits < m.size() && digits < 5 && m[digits] >= '0' && m[digits] <= '9') {
        v = v * 10 + static_cast<unsigned>(m[digits] - '0');
        ++digits;
    }
    xid = v;
    return digits > 0;
}

/// "NVRM: GPU 0000:65:00.0: GPU has fallen off the bus." / "NVRM: GPU at 0000:01:00.0 has
/// fallen off the bus." -> "0000:65:00".
std::optional<std::string> fell_off(std::string_view m) {
    // "NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) installed in this system has fallen
    // off the bus and is not responding to commands." (one printk of three lines)
    if (auto at = m.find("The NVIDIA GPU ");
        at != std::string_view::npos && m.find("fallen off the bus") != std::string_view::npos) {
        std::string bus(m.substr(at + 15, m.find(' ', at + 15) - at - 15));
        return bus.size() > 3 && bus[bus.size() - 2] == '.' ? bus.substr(0, bus.size() - 2) : bus;
    }
    if (m.find("has fallen off the bus") == std::string_view::npos ||
        m.find("NVRM: Xid") != std::string_view::npos) {
        return std::nullopt;
    }
    auto at = m.find("NVRM: GPU ");
    if (at == std::string_view::npos) {
        return std::string("?");
    }
    m.remove_prefix(at + 10);
    if (m.rfind("at ", 0) == 0) {
        m.remove_prefix(3);
    }
    auto end = m.find_first_of(" :.", 10);
    std::string bus(m.substr(0, end == std::string_view::npos ? m.size() : end));
    return bus;
}

std::string shown(const std::string& message) {
    std::string s = printable(message);
    return s.size() > 160 ? s.substr(0, 157) + "..." : s;
}

} // namespace

Finding xid(Host& h) {
    auto log = h.files().kernel_log();
    if (!log.readable) {
        return skip(log.why + "; Xid events are not checked (sudo cudaenv doctor --only xid)");
    }
    std::map<std::pair<std::string, unsigned>, Seen> events; // (bus, xid) -> seen
    for (const auto& m : log.messages) {
        std::string bus;
        unsigned id = 0;
        if (parse_xid(m, bus, id)) {
            auto& s = events[{bus, id}];
            if (s.count++ == 0) {
                s.first = m;
            }
        } else if (auto gone = fell_off(m)) {
            // said with Xid 79 by newer drivers: counted once per GPU
            auto& s = events[{*gone, 79}];
            if (s.count == 0) {
                s.count = 1;
                s.first = m;
            }
        }
    }
    std::string read = std::to_string(log.messages.size()) + " kernel log records read";
    if (events.empty()) {
        return ok("no Xid events since boot (" + read + ")");
    }
    std::vector<Issue> issues;
    std::vector<std::string> details{read};
    for (const auto& [key, seen] : events) {
        const auto& [bus, id] = key;
        const auto* m = meaning_of(id);
        std::string times = seen.count == 1 ? "once" : std::to_string(seen.count) + " times";
        std::string what = m ? m->what : "an event NVIDIA's Xid catalog explains";
        issues.push_back({m && m->fatal ? Status::fail : Status::warn,
                          "Xid " + std::to_string(id) + " on GPU " + printable(bus) + " (" + times +
                              " since boot): " + what,
                          m ? m->fix
                            : "look it up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/"
                              "xid-errors); if it recurs, collect sudo nvidia-bug-report.sh"});
        details.push_back("Xid " + std::to_string(id) + " first: " + shown(seen.first));
    }
    return verdict(std::move(issues), ok("no Xid events since boot", details));
}

} // namespace cudaenv::doctor::checks
