// Probe 15: each GPU's PCIe link (sysfs current_link_* against max_link_*), and the slot above it.
#include "probes.hpp"

#include <cstdlib>

namespace cudaenv::doctor::checks {

namespace {

std::optional<double> speed(Host& h, const std::string& file) {
    auto text = h.files().read(file, 64);
    if (!text) {
        return std::nullopt;
    }
    char* end = nullptr;
    double v = std::strtod(text->c_str(), &end);
    if (end == text->c_str() || v <= 0) {
        return std::nullopt;
    }
    return v; // "16.0 GT/s PCIe"
}

std::optional<int> width(Host& h, const std::string& file) {
    auto text = h.files().read(file, 64);
    if (!text) {
        return std::nullopt;
    }
    int v = std::atoi(text->c_str());
    return v > 0 ? std::optional<int>(v) : std::nullopt;
}

std::string gts(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g GT/s", v);
    return buf;
}

/// The PCIe bridge a device hangs off, from the real path of its sysfs folder.
std::string parent_bridge(Host& h, const std::string& sysfs) {
    std::string real = h.files().canonical(sysfs);
    auto slash = real.rfind('/');
    if (slash == std::string::npos || slash == 0) {
        return {};
    }
    std::string parent = real.substr(0, slash);
    auto name = parent.substr(parent.rfind('/') + 1);
    // a PCI address "0000:00:01.0", not the root "pci0000:00"
    if (name.size() != 12 || name[4] != ':' || !h.files().exists(parent + "/max_link_speed")) {
        return {};
    }
    return parent;
}

} // namespace

Finding pcie(Host& h) {
    if (auto why = h.files().jetson_cannot("the integrated GPU is not on the PCI bus");
        !why.empty()) {
        return skip(why);
    }
    const auto& gpus = h.facts().pci_gpus();
    std::vector<std::string> details, narrow, slow_slot;
    bool any = false;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        const auto& g = gpus[i];
        auto cur_w = width(h, g.sysfs + "/current_link_width");
        auto max_w = width(h, g.sysfs + "/max_link_width");
        auto cur_s = speed(h, g.sysfs + "/current_link_speed");
        auto max_s = speed(h, g.sysfs + "/max_link_speed");
        std::string label = gpu_label(i, g.name.empty() ? g.address : g.name);
        if (!cur_w || !max_w || !cur_s || !max_s) {
            details.push_back(label + ": no link information in sysfs");
            continue;
        }
        any = true;
        details.push_back(label + ": x" + std::to_string(*cur_w) + " at " + gts(*cur_s) +
                          " (the GPU can do x" + std::to_string(*max_w) + " at " + gts(*max_s) +
                          ")");
        if (*cur_w < *max_w) {
            narrow.push_back(label + " runs at x" + std::to_string(*cur_w) + " of x" +
                             std::to_string(*max_w));
        }
        if (*cur_s < *max_s) {
            details.push_back(label + ": link below its top speed now; GPUs lower it when idle, "
                                      "so check again under load");
        }
        auto bridge = parent_bridge(h, g.sysfs);
        if (!bridge.empty()) {
            auto slot_s = speed(h, bridge + "/max_link_speed");
            if (slot_s && *slot_s < *max_s) {
                slow_slot.push_back(label + " sits in a " + gts(*slot_s) +
                                    " slot (the GPU can do " + gts(*max_s) + ")");
            }
        }
    }
    if (!any) {
        return skip("no PCIe link information (a virtual machine, or not a PCIe GPU)", details);
    }
    if (!narrow.empty() || !slow_slot.empty()) {
        auto all = narrow;
        all.insert(all.end(), slow_slot.begin(), slow_slot.end());
        return warn(
            join(all) + ": host-to-device bandwidth is lower than the card allows",
            "reseat the card in an x16 slot wired to the CPU (the board manual says which), "
            "check riser cables, and set the slot's PCIe generation to Auto in the firmware",
            details);
    }
    return ok("every GPU's link at its full width", details);
}

} // namespace cudaenv::doctor::checks
