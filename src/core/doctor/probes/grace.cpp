// Probe: Grace superchips (GH200, GB200, GB300): the GPU's memory as NUMA nodes of its own (nodes
// with memory and no CPUs), and the kernel settings NVIDIA's Grace guides ask for where the
// machine's files say them: 64K pages (Grace Performance Tuning Guide, "Operating System
// Settings": "The recommended default value for the page size is 64K",
// https://docs.nvidia.com/grace-perf-tuning-guide/os-settings.html), automatic NUMA balancing off
// and init_on_alloc=0 (Grace CPU Benchmarking Guide, "Platform Configuration",
// https://nvidia.github.io/grace-cpu-benchmarking-guide/platform/index.html). Runs only on an Arm
// server whose GPU memory is a NUMA node or whose GPU the catalogue names a Grace superchip.
#include "../../manifest/gpu_support.hpp"
#include "probes.hpp"

#include <cctype>

namespace cudaenv::doctor::checks {

namespace {

std::string trimmed(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
        s.pop_back();
    }
    std::size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) {
        ++i;
    }
    return s.substr(i);
}

/// "Node 1 MemTotal:       100663296 kB" -> 100663296; 0 when absent.
unsigned long long mem_total_kb(std::string_view meminfo) {
    auto at = meminfo.find("MemTotal:");
    if (at == std::string_view::npos) {
        return 0;
    }
    unsigned long long kb = 0;
    for (std::size_t i = at + 9; i < meminfo.size(); ++i) {
        char c = meminfo[i];
        if (c >= '0' && c <= '9') {
            kb = kb * 10 + static_cast<unsigned long long>(c - '0');
        } else if (c != ' ' && c != '\t') {
            break;
        }
    }
    return kb;
}

/// NUMA nodes that hold memory and no CPU: on a Grace superchip, the GPU's memory
/// ("node1 (95 GiB)").
std::vector<std::string> cpuless_memory_nodes(Host& h) {
    std::vector<std::string> out;
    const std::string dir = "/sys/devices/system/node";
    for (const auto& name : h.files().list(dir)) {
        if (name.size() < 5 || name.rfind("node", 0) != 0 ||
            !std::isdigit(static_cast<unsigned char>(name[4]))) {
            continue;
        }
        auto cpus = h.files().read(dir + "/" + name + "/cpulist", 4096);
        auto mem = h.files().read(dir + "/" + name + "/meminfo", 16384);
        if (!cpus || !mem || !trimmed(*cpus).empty()) {
            continue;
        }
        auto kb = mem_total_kb(*mem);
        if (kb > 0) {
            out.push_back(name + " (" + std::to_string(kb / (1024 * 1024)) + " GiB)");
        }
    }
    return out;
}

bool has_word(std::string_view cmdline, std::string_view word) {
    std::size_t start = 0;
    while (start < cmdline.size()) {
        auto end = cmdline.find_first_of(" \t\n", start);
        if (end == std::string_view::npos) {
            end = cmdline.size();
        }
        if (cmdline.substr(start, end - start) == word) {
            return true;
        }
        start = end + 1;
    }
    return false;
}

} // namespace

Finding grace(Host& h) {
    const auto& machine = h.files().machine();
    if (machine.kind != sys::HostKind::arm_server) {
        return skip("not a Grace system (an Arm server with NVIDIA GPUs)");
    }
    std::vector<std::string> details;
    std::vector<std::string> superchips;
    for (const auto& g : h.facts().pci_gpus()) {
        if (const auto* l = h.manifests().gpu_support().find(
                manifest::normalize_pci_id(g.device_id), g.subsystem)) {
            for (const char* chip : {"GH200", "GB200", "GB300"}) {
                if (l->name.find(chip) != std::string::npos) {
                    superchips.push_back(g.address + ": " + l->name);
                    break;
                }
            }
        }
    }
    auto nodes = cpuless_memory_nodes(h);
    if (superchips.empty() && nodes.empty()) {
        return skip("not a Grace superchip: no NUMA node holds memory without CPUs and no GPU is "
                    "a GH200, GB200 or GB300");
    }
    for (const auto& s : superchips) {
        details.push_back("superchip GPU " + s);
    }
    details.push_back(nodes.empty() ? "no CPU-less NUMA node with memory: the GPU's memory is "
                                      "not onlined as a NUMA node"
                                    : "GPU memory as NUMA nodes without CPUs: " + join(nodes));
    std::vector<Issue> issues;
    std::vector<std::string> good;
    // the page size the kernel was built with: a PMD-sized transparent huge page is 2 MiB with
    // 4K pages and 512 MiB with 64K pages
    if (auto pmd = h.files().read("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", 64)) {
        std::string v = trimmed(*pmd);
        if (v == "2097152") {
            details.push_back("page size: 4K (hpage_pmd_size 2097152)");
            issues.push_back({Status::warn,
                              "the kernel runs 4K pages; NVIDIA recommends 64K pages on Grace",
                              "install and boot a 64K-page kernel (CONFIG_ARM64_64K_PAGES=y; "
                              "Ubuntu's -nvidia-64k flavour)"});
        } else if (v == "536870912") {
            details.push_back("page size: 64K (hpage_pmd_size 536870912)");
            good.push_back("64K pages");
        } else {
            details.push_back("page size not recognised (hpage_pmd_size " + v + ")");
        }
    } else {
        details.push_back("page size not checked: no /sys/kernel/mm/transparent_hugepage");
    }
    if (auto nb = h.files().read("/proc/sys/kernel/numa_balancing", 64)) {
        std::string v = trimmed(*nb);
        details.push_back("kernel.numa_balancing = " + v);
        if (v != "0") {
            issues.push_back({Status::warn,
                              "automatic NUMA balancing is on (kernel.numa_balancing = " + v +
                                  "): it migrates pages between the CPU's and the GPU's memory",
                              "boot with numa_balancing=disable (GRUB_CMDLINE_LINUX, then "
                              "update-grub), or now: sudo sysctl -w kernel.numa_balancing=0"});
        } else {
            good.push_back("NUMA balancing off");
        }
    }
    auto cmdline = h.files().read("/proc/cmdline", 8192).value_or("");
    auto kernel = trimmed(h.files().read("/proc/sys/kernel/osrelease", 256).value_or(""));
    if (has_word(cmdline, "init_on_alloc=0")) {
        good.push_back("init_on_alloc=0");
    } else {
        std::string config = "/boot/config-" + kernel;
        auto text = kernel.empty() ? std::nullopt : h.files().read(config);
        bool default_on =
            text && text->find("\nCONFIG_INIT_ON_ALLOC_DEFAULT_ON=y") != std::string::npos;
        if (has_word(cmdline, "init_on_alloc=1") || default_on) {
            issues.push_back(
                {Status::warn,
                 std::string("the kernel zeroes every page it allocates (") +
                     (has_word(cmdline, "init_on_alloc=1")
                          ? "init_on_alloc=1 on the command line"
                          : config + ": CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y") +
                     "): NVIDIA's Grace guide boots with init_on_alloc=0",
                 "add init_on_alloc=0 to the kernel command line (GRUB_CMDLINE_LINUX, then "
                 "update-grub; it gives up a hardening default for allocation speed)"});
        } else {
            details.push_back("init_on_alloc not checked: neither /proc/cmdline nor " + config +
                              " says it");
        }
    }
    std::string what = superchips.empty()
                           ? "Grace: the GPU's memory in " + std::to_string(nodes.size()) +
                                 " NUMA node" + (nodes.size() == 1 ? "" : "s")
                           : "Grace superchip";
    return verdict(std::move(issues),
                   ok(what + (good.empty() ? std::string() : "; " + join(good)), details));
}

} // namespace cudaenv::doctor::checks
