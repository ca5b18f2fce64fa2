#include "gpus.hpp"

#include "../config.hpp"
#include "../manifest/gpu_support.hpp"
#include "../text.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace cudaenv::sys {

namespace fs = std::filesystem;

namespace {

std::string first_line(const fs::path& p, std::size_t cap = 4096) {
    std::ifstream in(p);
    if (!in) {
        return {};
    }
    std::string text(cap, '\0');
    in.read(text.data(), static_cast<std::streamsize>(cap));
    text.resize(static_cast<std::size_t>(in.gcount()));
    auto nl = text.find('\n');
    text = text.substr(0, nl);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
        text.pop_back();
    }
    return text;
}

} // namespace

MachineGpus read_machine_gpus(const fs::path& sysroot) {
    MachineGpus m;
    std::error_code ec;
    fs::path base = under_sysroot(sysroot, "/sys/bus/pci/devices");
    for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
        const auto& dir = it->path();
        if (first_line(dir / "vendor") != "0x10de" ||
            first_line(dir / "class").rfind("0x03", 0) != 0) {
            continue;
        }
        PciGpuIds g;
        g.address = dir.filename().string();
        g.device = manifest::normalize_pci_id(first_line(dir / "device"));
        auto sv = manifest::normalize_pci_id(first_line(dir / "subsystem_vendor"));
        auto sd = manifest::normalize_pci_id(first_line(dir / "subsystem_device"));
        if (!sv.empty() && !sd.empty()) {
            g.subsystem = sv + ":" + sd;
        }
        m.gpus.push_back(std::move(g));
    }
    std::sort(m.gpus.begin(), m.gpus.end(), [](const auto& a, const auto& b) {
        return a.address < b.address;
    });
    if (auto v = parse_driver_version(
            first_line(under_sysroot(sysroot, "/proc/driver/nvidia/version")))) {
        m.driver = Version::try_parse(*v);
    }
    return m;
}

std::optional<std::string> parse_driver_version(std::string_view text) {
    // NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023
    // NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build ...
    auto line = text.substr(0, text.find('\n'));
    auto at = line.find("Kernel Module");
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    for (auto word : words(line.substr(at), " ")) {
        if (word.find('.') != std::string_view::npos &&
            std::isdigit(static_cast<unsigned char>(word[0])) && Version::try_parse(word)) {
            return std::string(word);
        }
    }
    return std::nullopt;
}

} // namespace cudaenv::sys
