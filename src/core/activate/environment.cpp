#include "environment.hpp"

#include "compat.hpp"

#include <algorithm>
#include <vector>

namespace cudaenv::activate {

namespace fs = std::filesystem;

std::vector<std::string> split_path_list(const std::string& list) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos <= list.size()) {
        auto end = list.find(':', pos);
        std::string item =
            list.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        pos = end == std::string::npos ? list.size() + 1 : end + 1;
        if (!item.empty()) {
            out.push_back(std::move(item));
        }
    }
    return out;
}

namespace {

/// `first` entries, then `list` without empty entries, duplicates or entries under any of `drop`.
std::string prepend(const std::vector<std::string>& first,
                    const std::string& list,
                    const std::vector<std::string>& drop) {
    std::vector<std::string> out = first;
    for (const auto& item : split_path_list(list)) {
        bool dropped = std::any_of(
            drop.begin(), drop.end(), [&](const std::string& d) { return item.rfind(d, 0) == 0; });
        if (!dropped && std::find(out.begin(), out.end(), item) == out.end()) {
            out.push_back(item);
        }
    }
    std::string joined;
    for (const auto& s : out) {
        joined += (joined.empty() ? "" : ":") + s;
    }
    return joined;
}

} // namespace

std::map<std::string, std::string>
version_environment(const fs::path& prefix,
                    const std::vector<fs::path>& versions_dirs,
                    const std::map<std::string, std::string>& env) {
    auto get = [&](const char* k) {
        auto it = env.find(k);
        return it == env.end() ? std::string() : it->second;
    };
    std::vector<std::string> drop;
    for (const auto& d : versions_dirs) {
        drop.push_back(d.string() + "/");
    }
    std::vector<std::string> libs{(prefix / "lib64").string()};
    std::error_code ec;
    if (fs::is_directory(prefix / "extras" / "CUPTI" / "lib64", ec)) {
        libs.push_back((prefix / "extras" / "CUPTI" / "lib64").string());
    }
    return {{"CUDA_HOME", prefix.string()},
            {"CUDA_PATH", prefix.string()},
            {"PATH", prepend({(prefix / "bin").string()}, get("PATH"), drop)},
            {"LD_LIBRARY_PATH", prepend(libs, get("LD_LIBRARY_PATH"), drop)}};
}

std::map<std::string, std::string>
version_environment(const fs::path& prefix,
                    const std::vector<fs::path>& versions_dirs,
                    const std::map<std::string, std::string>& env,
                    const fs::path& sysroot) {
    auto vars = version_environment(prefix, versions_dirs, env);
    if (auto compat = compat_state(prefix, sysroot); compat.use()) {
        vars["LD_LIBRARY_PATH"] = compat.dir.string() + ":" + vars["LD_LIBRARY_PATH"];
    }
    if (auto orin = compat_orin_dir(prefix, sysroot)) { // an Orin's CUDA 13 driver: first
        vars["LD_LIBRARY_PATH"] = orin->string() + ":" + vars["LD_LIBRARY_PATH"];
    }
    return vars;
}

} // namespace cudaenv::activate
