// What the Host's source files share (host.cpp: files, environment, children; host_machine.cpp:
// PCI, driver, toolkit, container; host_loader.cpp: the loader's view; host_manifests.cpp: what
// the manifests say): the facts computed once, and small text helpers. Not for probes.
#pragma once

#include "host.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::doctor {

struct Host::Cache {
    std::optional<std::vector<PciGpu>> pci;
    std::optional<DriverFacts> driver;
    std::optional<Toolkit> toolkit;
    std::optional<bool> wsl;
    std::optional<std::string> container;
    std::optional<std::vector<ConfEntry>> conf;
    std::optional<std::vector<CacheEntry>> ld_cache;
    std::string ld_cache_error;
    std::map<std::string, LibraryAnswer, std::less<>> answers;
    std::map<std::string, std::optional<manifest::CudaRelease>, std::less<>> releases;
    std::optional<std::optional<manifest::Rules>> rules;
    std::optional<std::vector<manifest::Gpu>> gpus;
    std::optional<manifest::GpuSupport> gpu_support;
    std::optional<std::vector<manifest::Framework>> frameworks;
    std::map<std::string, std::string, std::less<>> owners; ///< real file -> package
};

namespace detail {

inline std::string trim(std::string_view s) {
    auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) {
        return {};
    }
    auto e = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(b, e - b + 1));
}

inline std::vector<std::string> lines_of(std::string_view text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        out.emplace_back(text.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

inline std::string join_machine(std::string_view dir, std::string_view name) {
    std::string out(dir);
    while (out.size() > 1 && out.back() == '/') {
        out.pop_back();
    }
    if (out != "/") {
        out += '/';
    }
    out += name;
    return out;
}

} // namespace detail

} // namespace cudaenv::doctor
