// Probe: NVSwitch systems (HGX, DGX) need NVIDIA's fabric manager running, at the driver's own
// version, before any CUDA call works: without it cuInit answers 802 (system not ready). Only a
// machine with NVSwitches on its PCI bus is judged; one child at most (the fabric manager's
// --version), never one per GPU.
#include "../text.hpp"
#include "probes.hpp"

namespace cudaenv::doctor::checks {

namespace {

using detail::trim;

/// NVIDIA PCI devices of class 0x0680 (bridge, other): the NVSwitches.
std::vector<std::string> nvswitches(Host& h) {
    std::vector<std::string> out;
    const std::string base = "/sys/bus/pci/devices";
    for (const auto& dev : h.files().list(base)) {
        auto vendor = h.files().read(base + "/" + dev + "/vendor", 64);
        auto cls = h.files().read(base + "/" + dev + "/class", 64);
        if (vendor && trim(*vendor) == "0x10de" && cls && trim(*cls).rfind("0x0680", 0) == 0) {
            out.push_back(dev);
        }
    }
    return out;
}

/// Whether a process named `name` runs (/proc/<pid>/comm).
bool running(Host& h, std::string_view name) {
    for (const auto& pid : h.files().list("/proc")) {
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        if (auto comm = h.files().read("/proc/" + pid + "/comm", 64); comm && trim(*comm) == name) {
            return true;
        }
    }
    return false;
}

/// "Fabric Manager version is : 550.54.15" -> 550.54.15.
std::optional<std::string> fm_version(Host& h, const std::string& exe) {
    auto r = h.files().run({exe, "--version"});
    if (!r || r->status != 0) {
        return std::nullopt;
    }
    auto at = r->out.find("version is");
    if (at == std::string::npos) {
        return std::nullopt;
    }
    auto colon = r->out.find(':', at);
    if (colon == std::string::npos) {
        return std::nullopt;
    }
    auto v = trim(std::string_view(r->out).substr(colon + 1, 40));
    v = v.substr(0, v.find_first_of(" \n"));
    return v.empty() ? std::nullopt : std::optional<std::string>(v);
}

std::string install_fix(const std::string& driver) {
    std::string branch = driver.substr(0, driver.find('.'));
    return "install the fabric manager of the driver's exact version (NVIDIA's CUDA repository: "
           "sudo apt install nvidia-fabricmanager-" +
           branch + "=" + driver +
           "-1; RHEL: nvidia-fabric-manager), then sudo systemctl enable --now "
           "nvidia-fabricmanager";
}

} // namespace

Finding fabric(Host& h) {
    auto switches = nvswitches(h);
    if (switches.empty()) {
        return skip("no NVSwitch on the PCI bus: no fabric manager needed");
    }
    const auto& d = h.facts().driver();
    std::string driver = d.module_version.value_or(d.nvml_version.value_or(""));
    std::vector<std::string> details{std::to_string(switches.size()) + " NVSwitch" +
                                     (switches.size() == 1 ? "" : "es") + ": " + join(switches)};
    std::string exe = h.files().which("nv-fabricmanager").value_or("");
    if (exe.empty() && h.files().exists("/usr/bin/nv-fabricmanager")) {
        exe = "/usr/bin/nv-fabricmanager";
    }
    if (exe.empty()) {
        return fail("this NVSwitch system has no fabric manager installed: every CUDA call fails "
                    "with error 802 (system not ready)",
                    install_fix(driver.empty() ? "<driver version>" : driver),
                    details);
    }
    auto version = fm_version(h, exe);
    details.push_back("fabric manager: " + exe + " " + version.value_or("(version unknown)"));
    std::vector<Issue> issues;
    if (version && !driver.empty() && *version != driver) {
        issues.push_back({Status::fail,
                          "fabric manager " + *version + " and driver " + driver +
                              " differ: it must be the driver's exact version, or the fabric "
                              "stays down (CUDA error 802)",
                          install_fix(driver)});
    }
    if (!running(h, "nv-fabricmanager")) {
        issues.push_back({Status::fail,
                          "the fabric manager is installed but not running: every CUDA call "
                          "fails with error 802 (system not ready)",
                          "sudo systemctl enable --now nvidia-fabricmanager (its log: journalctl "
                          "-u nvidia-fabricmanager; /var/log/fabricmanager.log)"});
    }
    return verdict(std::move(issues),
                   ok("fabric manager " + version.value_or("") + " running for " +
                          std::to_string(switches.size()) + " NVSwitch" +
                          (switches.size() == 1 ? "" : "es") +
                          (driver.empty() ? "" : ", the driver's version"),
                      details));
}

} // namespace cudaenv::doctor::checks
