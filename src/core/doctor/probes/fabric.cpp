// Probe: NVSwitch systems (HGX, DGX) need NVIDIA's fabric manager running, at the driver's own
// version, before any CUDA call works: without it cuInit answers 802 (system not ready). Only a
// machine with NVSwitches on its PCI bus is judged; one child at most (the fabric manager's
// --version), never one per GPU.
#include "../text.hpp"
#include "probes.hpp"

#include <algorithm>
#include <map>

namespace cudaenv::doctor::checks {

namespace {

using detail::trim;

constexpr std::string_view k_unit = "nvidia-fabricmanager.service";

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

/// The fabric manager's service as systemd reports it (`systemctl show`: one child, live, only on
/// an NVSwitch machine): LoadState, ActiveState, SubState, MainPID, Result. `show` is systemd's
/// computer-parsable form, a key=value line per property (systemctl(1), systemd 252), where
/// `status` is for people. None without systemd.
std::map<std::string, std::string> service_state(Host& h) {
    std::map<std::string, std::string> out;
    auto systemctl = h.files().which("systemctl");
    if (!systemctl) {
        return out;
    }
    auto r = h.files().run_live({*systemctl,
                                 "show",
                                 std::string(k_unit),
                                 "--property=LoadState,ActiveState,SubState,MainPID,Result"});
    if (!r || r->status != 0) {
        return out;
    }
    for (const auto& line : detail::lines_of(r->out)) {
        if (auto eq = line.find('='); eq != std::string::npos && eq > 0) {
            out.emplace(line.substr(0, eq), trim(std::string_view(line).substr(eq + 1)));
        }
    }
    return out;
}

/// The last path component of a program's name.
std::string_view base_name(std::string_view p) {
    auto slash = p.rfind('/');
    return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

/// The program a process runs: its executable (/proc/<pid>/exe), else its argv[0]
/// (/proc/<pid>/cmdline); empty when neither can be read.
std::string program_of(Host& h, const std::string& pid) {
    if (auto exe = h.files().read_link("/proc/" + pid + "/exe")) {
        return exe->substr(0, exe->find(" (deleted)"));
    }
    auto cmdline = h.files().read("/proc/" + pid + "/cmdline", 4096).value_or("");
    return cmdline.substr(0, cmdline.find('\0'));
}

/// A running process of the program `name`, as Linux shows it: /proc/<pid>/comm holds at most
/// 15 bytes (TASK_COMM_LEN), so nv-fabricmanager is "nv-fabricmanage" there; a cut name is
/// confirmed by the program the process runs. The first such pid, or empty.
std::string process_of(Host& h, std::string_view name) {
    constexpr std::size_t k_comm = 15;
    std::string_view cut = name.substr(0, std::min(name.size(), k_comm));
    for (const auto& pid : h.files().list("/proc")) {
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        auto comm = h.files().read("/proc/" + pid + "/comm", 64);
        if (comm && trim(*comm) == cut &&
            (name.size() <= k_comm || base_name(program_of(h, pid)) == name)) {
            return pid;
        }
    }
    return {};
}

/// What NVML says of the GPUs' NVLink fabric registration (Hopper on; older GPUs and drivers do
/// not report it).
struct FabricState {
    std::size_t reported = 0, completed = 0;
    std::vector<std::string> pending; ///< "GPU 0: in progress"
    std::vector<std::string> failed;  ///< "GPU 1: status 999"
};

FabricState fabric_state(Host& h) {
    FabricState f;
    const auto& gpus = h.facts().driver().gpus;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        const auto& g = gpus[i];
        if (!g.fabric_state) {
            continue;
        }
        ++f.reported;
        std::string who = "GPU " + std::to_string(i);
        if (*g.fabric_state == 3 && g.fabric_status.value_or(0) == 0) {
            ++f.completed;
        } else if (*g.fabric_state == 3) {
            f.failed.push_back(who + ": NVML status " + std::to_string(*g.fabric_status));
        } else {
            f.pending.push_back(who + (*g.fabric_state == 2 ? ": in progress" : ": not started"));
        }
    }
    return f;
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
    std::string count =
        std::to_string(switches.size()) + " NVSwitch" + (switches.size() == 1 ? "" : "es");
    std::vector<std::string> details{count + ": " + join(switches)};
    auto fabric = fabric_state(h);
    bool registered = fabric.reported > 0 && fabric.completed == d.gpus.size();
    if (fabric.reported > 0) {
        details.push_back("NVML fabric registration: " + std::to_string(fabric.completed) + " of " +
                          std::to_string(d.gpus.size()) + " GPUs completed");
    }
    auto unit = service_state(h);
    auto get = [&](const char* k) {
        auto it = unit.find(k);
        return it == unit.end() ? std::string() : it->second;
    };
    std::string pid;
    bool known_unit = !unit.empty() && get("LoadState") == "loaded";
    if (known_unit) {
        details.push_back(std::string(k_unit) + ": " + get("ActiveState") + " (" + get("SubState") +
                          "), MainPID " + get("MainPID") +
                          (get("Result").empty() ? "" : ", result " + get("Result")));
        if (get("ActiveState") == "active" && get("MainPID") != "0" && !get("MainPID").empty()) {
            pid = get("MainPID");
        }
    }
    if (pid.empty()) {
        pid = process_of(h, "nv-fabricmanager");
        if (!pid.empty()) {
            details.push_back("process " + pid + " runs nv-fabricmanager");
        }
    }
    std::string exe = h.files().which("nv-fabricmanager").value_or("");
    // where packages and NVIDIA's GPU Operator (its driver container's root) put it
    for (const char* p :
         {"/usr/bin/nv-fabricmanager", "/run/nvidia/driver/usr/bin/nv-fabricmanager"}) {
        if (exe.empty() && h.files().exists(p)) {
            exe = p;
        }
    }
    if (exe.empty() && !pid.empty()) {
        // the running one, wherever it is (Bottlerocket: /usr/libexec/nvidia/tesla/bin)
        exe = program_of(h, pid);
        if (exe.empty()) {
            exe = "nv-fabricmanager";
        }
    }
    if (exe.empty()) {
        if (registered) {
            // a VM given GPUs and NVSwitches whose fabric a service VM or the host manages
            return ok("NVLink fabric registered on all " + std::to_string(d.gpus.size()) +
                          " GPUs (NVML); the fabric manager runs outside this machine",
                      details);
        }
        return fail("this NVSwitch system has no fabric manager installed: every CUDA call fails "
                    "with error 802 (system not ready)",
                    install_fix(driver.empty() ? "<driver version>" : driver),
                    details);
    }
    auto version = h.files().exists(exe) ? fm_version(h, exe) : std::nullopt;
    details.push_back("fabric manager: " + exe + " " + version.value_or("(version unknown)"));
    std::vector<Issue> issues;
    if (version && !driver.empty() && *version != driver) {
        issues.push_back({Status::fail,
                          "fabric manager " + *version + " and driver " + driver +
                              " differ: it must be the driver's exact version, or the fabric "
                              "stays down (CUDA error 802)",
                          install_fix(driver)});
    }
    if (pid.empty() && !registered) {
        std::string how = known_unit ? std::string(k_unit) + " is " + get("ActiveState") + " (" +
                                           get("SubState") +
                                           (get("Result").empty() || get("Result") == "success"
                                                ? ""
                                                : ", result " + get("Result")) +
                                           ")"
                                     : "no nv-fabricmanager process runs";
        issues.push_back({Status::fail,
                          "the fabric manager is installed but not running (" + how +
                              "): every CUDA call fails with error 802 (system not ready)",
                          "sudo systemctl enable --now nvidia-fabricmanager (its log: journalctl "
                          "-u nvidia-fabricmanager; /var/log/fabricmanager.log)"});
    }
    if (!fabric.failed.empty()) {
        issues.push_back({Status::fail,
                          "NVLink fabric registration failed on " + join(fabric.failed) +
                              ": CUDA on those GPUs fails with error 802",
                          "read /var/log/fabricmanager.log, then restart the fabric manager "
                          "(sudo systemctl restart nvidia-fabricmanager); if it persists, reset "
                          "the GPUs and NVSwitches (reboot)"});
    }
    if (!fabric.pending.empty() && !pid.empty()) {
        issues.push_back({Status::warn,
                          "NVLink fabric registration not finished on " + join(fabric.pending) +
                              ": CUDA answers 802 (system not ready) until it is",
                          "wait a minute after the fabric manager starts; if it stays, read "
                          "/var/log/fabricmanager.log"});
    }
    return verdict(
        std::move(issues),
        ok("fabric manager " + version.value_or("") +
               (pid.empty() ? " (fabric registered by NVML)" : " running (PID " + pid + ")") +
               " for " + count + (driver.empty() ? "" : ", the driver's version"),
           details));
}

} // namespace cudaenv::doctor::checks
