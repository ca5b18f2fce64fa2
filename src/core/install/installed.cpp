// The installed versions' records: kept apart from install.cpp so that code which only reads them
// (selection, the shim executable) does not link libcurl and libarchive.
#include "../fs.hpp"
#include "install.hpp"

#include <nlohmann/json.hpp>

namespace cudaenv::install {

namespace {

nlohmann::json read_record(const std::filesystem::path& p) {
    auto text = read_text_file(p);
    if (!text) {
        return nlohmann::json();
    }
    auto j = nlohmann::json::parse(*text, nullptr, false);
    return j.is_object() ? j : nlohmann::json();
}

} // namespace

std::vector<InstalledVersion> list_installed(const store::Root& root) {
    std::vector<InstalledVersion> out;
    for (const auto& name : store::installed_versions(root)) {
        auto rec_json = read_record(root.versions() / name / store::k_version_record);
        if (rec_json.is_null()) {
            continue;
        }
        const nlohmann::json* rec = &rec_json;
        InstalledVersion v;
        v.name = name;
        v.cuda = rec->value("cuda", "");
        v.cudnn = rec->value("cudnn", "");
        v.profile = rec->value("profile", "");
        v.platform = rec->value("platform", "");
        v.bytes = rec->value("bytes", std::uint64_t{0});
        v.prefix = root.versions() / name;
        out.push_back(std::move(v));
    }
    return out;
}

} // namespace cudaenv::install
