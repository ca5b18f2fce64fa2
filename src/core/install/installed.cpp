// The installed versions' records: kept apart from install.cpp so that code which only reads them
// (selection, the shim executable) does not link libcurl and libarchive.
#include "../store/records.hpp"
#include "install.hpp"

#include <unistd.h>

namespace cudaenv::install {

std::vector<InstalledVersion> list_installed(const store::Root& root, bool include_damaged) {
    std::vector<InstalledVersion> out;
    for (const auto& name : store::installed_versions(root)) {
        InstalledVersion v;
        v.name = name;
        v.prefix = root.version_dir(name);
        auto up = root.upstream_of(name);
        v.root = up ? *up : root.dir;
        v.upstream = up.has_value();
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
