// Probe 16: temperature against the slowdown threshold, and the clock throttle reasons (NVML).
#include "probes.hpp"

#include <cstdio>

namespace cudaenv::doctor::checks {

namespace {

// nvmlClocksEventReason* (nvml.h)
constexpr std::uint64_t k_sw_power_cap = 0x4;
constexpr std::uint64_t k_hw_slowdown = 0x8;
constexpr std::uint64_t k_sw_thermal = 0x20;
constexpr std::uint64_t k_hw_thermal = 0x40;
constexpr std::uint64_t k_hw_power_brake = 0x80;

std::vector<std::string> reason_names(std::uint64_t r) {
    std::vector<std::string> out;
    if (r & k_hw_slowdown) {
        out.push_back("hardware slowdown");
    }
    if (r & k_sw_thermal) {
        out.push_back("software thermal slowdown");
    }
    if (r & k_hw_thermal) {
        out.push_back("hardware thermal slowdown");
    }
    if (r & k_hw_power_brake) {
        out.push_back("power brake");
    }
    return out;
}

} // namespace

Finding thermal(Host& h) {
    // NVML enumerates Jetson's GPU ("Orin (nvgpu)") but reports its temperature as N/A
    if (auto why = h.files().jetson_cannot("NVML reports no temperature or clock-event reasons "
                                           "for the integrated GPU (tegrastats does)");
        !why.empty()) {
        return skip(why);
    }
    const auto& d = h.facts().driver();
    if (!d.nvml_ok) {
        return skip("NVML is not available" + (d.nvml_error.empty() ? "" : ": " + d.nvml_error));
    }
    std::vector<std::string> details, hot;
    bool any = false;
    for (std::size_t i = 0; i < d.gpus.size(); ++i) {
        const auto& g = d.gpus[i];
        std::string label = gpu_label(i, g.name);
        if (!g.temperature) {
            details.push_back(label + ": temperature not reported");
            continue;
        }
        any = true;
        unsigned limit = g.slowdown_temperature.value_or(0);
        std::string line = label + ": " + std::to_string(*g.temperature) + " °C";
        if (limit) {
            line += " (slowdown at " + std::to_string(limit) + " °C)";
        }
        if (g.throttle_reasons) {
            char hex[32];
            std::snprintf(
                hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(*g.throttle_reasons));
            line += ", clock event reasons " + std::string(hex);
            if (*g.throttle_reasons & k_sw_power_cap) {
                line += " (power cap: normal under full load)";
            }
        }
        details.push_back(line);
        auto reasons =
            g.throttle_reasons ? reason_names(*g.throttle_reasons) : std::vector<std::string>{};
        bool near_limit = limit ? *g.temperature + 5 >= limit : *g.temperature >= 85;
        if (!reasons.empty()) {
            hot.push_back(label + " is throttled (" + join(reasons) + ") at " +
                          std::to_string(*g.temperature) + " °C");
        } else if (near_limit) {
            hot.push_back(label + " at " + std::to_string(*g.temperature) +
                          " °C is near its slowdown "
                          "temperature");
        }
    }
    if (!any) {
        return skip("no GPU reports its temperature", details);
    }
    if (!hot.empty()) {
        return warn(join(hot) + ": clocks drop while utilisation looks normal",
                    "improve cooling (fans, airflow, dust, the room), check power cables; "
                    "`nvidia-smi -q -d PERFORMANCE` shows the reasons live",
                    details);
    }
    return ok("temperatures normal, no thermal or hardware throttling", details);
}

} // namespace cudaenv::doctor::checks
