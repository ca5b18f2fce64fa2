// The installed versions' records: kept apart from install.cpp so that code which only reads them
// (selection, the shim executable) does not link libcurl and libarchive.
#include "../store/records.hpp"
#include "install.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace cudaenv::install {

namespace fs = std::filesystem;

std::vector<InstalledVersion> list_installed(const store::Root& root, bool include_damaged) {
    std::vector<InstalledVersion> out;
    std::map<std::string, fs::path> winner; // name -> the prefix every command uses
    // the search order: this root, then its upstreams; this host's platform only
    std::vector<store::PlacedVersion> found;
    for (auto& p : store::placed_versions(root)) {
        if (p.this_host) {
            found.push_back(std::move(p));
        }
    }
    std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
        return std::tie(a.name, a.layer) < std::tie(b.name, b.layer);
    });
    for (const auto& p : found) {
        auto i = p.layer;
        InstalledVersion v;
        v.name = p.name;
        v.prefix = p.dir;
        v.root = i == 0 ? root.dir : root.upstreams[i - 1];
        v.upstream = i > 0;
        if (auto [it, first] = winner.emplace(p.name, v.prefix); !first) {
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
        for (const auto& c : rec->components) {
            if (c.component == "libcublas" && c.patch.starts_with("cublas ")) {
                v.cublas_patch = c.patch.substr(7);
                v.cublas_version = c.version;
            }
        }
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
