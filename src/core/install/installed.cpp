// The installed versions' records: kept apart from install.cpp so that code which only reads them
// (selection, the shim executable) does not link libcurl and libarchive.
#include "../store/records.hpp"
#include "install.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>

namespace cudaenv::install {

namespace fs = std::filesystem;

std::vector<InstalledVersion> list_installed(const store::Root& root, bool include_damaged) {
    std::vector<InstalledVersion> out;
    std::map<std::string, fs::path> winner; // name -> the prefix every command uses
    auto dirs = root.version_dirs();        // the search order: this root, then its upstreams
    std::vector<std::pair<std::string, std::size_t>> found; // (name, which dir)
    for (std::size_t i = 0; i < dirs.size(); ++i) {
        for (const auto& name : store::installed_versions_in(dirs[i])) {
            found.emplace_back(name, i);
        }
    }
    std::stable_sort(found.begin(), found.end());
    for (const auto& [name, i] : found) {
        InstalledVersion v;
        v.name = name;
        v.prefix = dirs[i] / name;
        v.root = i == 0 ? root.dir : root.upstreams[i - 1];
        v.upstream = i > 0;
        if (auto [it, first] = winner.emplace(name, v.prefix); !first) {
            v.shadowed_by = it->second;
        }
        auto rec = store::read_version_record(v.prefix);
        if (!rec) {
            if (include_damaged) {
                v.problem = rec.error().full_message();
                out.push_back(std::move(v));
            }
            continue;
        }
        v.cuda = rec->cuda;
        v.cudnn = rec->cudnn;
        v.profile = rec->profile;
        v.platform = rec->platform;
        v.bytes = rec->bytes;
        out.push_back(std::move(v));
    }
    return out;
}

std::vector<std::string> versions_having(const store::Root& root,
                                         const std::filesystem::path& relative) {
    std::vector<std::string> out;
    for (const auto& name : store::installed_versions(root)) {
        auto path = root.version_dir(name) / relative;
        bool tool = relative.parent_path() == "bin";
        if (::access(path.c_str(), tool ? X_OK : F_OK) == 0) {
            out.push_back(name);
        }
    }
    return out;
}

} // namespace cudaenv::install
