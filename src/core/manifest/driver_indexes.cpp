#include "driver_indexes.hpp"

#include "../fs.hpp"
#include "codec_fields.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace cudaenv::manifest {

using nlohmann::json;
using ojson = nlohmann::ordered_json;
using detail::Reader;

const Version& compat_per_driver_from() {
    static const Version v = *Version::try_parse("13.4");
    return v;
}

Result<std::vector<DriverIndex>> parse_driver_indexes(const json& doc, std::string_view origin) {
    Reader rd(origin);
    CUDAENV_TRY(rd.header(doc, k_driver_indexes_kind));
    const json* list = CUDAENV_TRY(rd.array(doc, "drivers"));
    std::vector<DriverIndex> out;
    std::set<std::string> seen;
    for (const auto& e : *list) {
        if (!e.is_object()) {
            return rd.error("each of 'drivers' must be an object");
        }
        DriverIndex d;
        d.driver = CUDAENV_TRY(rd.version(e, "driver"));
        std::string where = "driver " + d.driver.str();
        if (d.driver.size() < 2) {
            return rd.error(where + ": 'driver' must be a full driver version");
        }
        if (!seen.insert(d.driver.str()).second) {
            return rd.error(where + ": listed twice");
        }
        d.release_date = rd.opt_string(e, "release_date");
        d.index = CUDAENV_TRY(rd.string(e, "index"));
        if (!is_safe_relative_path(d.index)) {
            return rd.error(where + ": unsafe or malformed index path '" + d.index + "'");
        }
        d.source = CUDAENV_TRY(rd.string(e, "source"));
        const json* compat = CUDAENV_TRY(rd.object(e, "cuda_compat"));
        d.compat_cuda = CUDAENV_TRY(rd.version(*compat, "cuda"));
        if (d.compat_cuda.size() != 2) {
            return rd.error(where + ": 'cuda_compat.cuda' must be a CUDA minor (major.minor)");
        }
        const json* platforms = CUDAENV_TRY(rd.object(*compat, "platforms"));
        if (platforms->empty()) {
            return rd.error(where + ": 'cuda_compat.platforms' is empty");
        }
        for (const auto& [platform, a] : platforms->items()) {
            if (!is_platform(platform)) {
                return rd.error(where + ": unknown platform '" + platform + "'");
            }
            auto art = CUDAENV_TRY(rd.artifact(a, where + " cuda_compat " + platform, true));
            if (art.path.empty()) {
                return rd.error(where + " cuda_compat " + platform + ": missing path");
            }
            d.compat.emplace(platform, std::move(art));
        }
        out.push_back(std::move(d));
    }
    std::sort(
        out.begin(), out.end(), [](const auto& a, const auto& b) { return a.driver < b.driver; });
    return out;
}

ojson driver_indexes_to_json(const std::vector<DriverIndex>& indexes) {
    ojson j{{"schema", std::string(k_schema)}, {"kind", k_driver_indexes_kind}};
    ojson list = ojson::array();
    for (const auto& d : indexes) {
        ojson platforms = ojson::object();
        for (const auto& [platform, a] : d.compat) {
            ojson one{{"path", a.path}, {"sha256", a.sha256}};
            if (a.size) {
                one["size"] = *a.size;
            }
            platforms[platform] = std::move(one);
        }
        list.push_back(
            ojson{{"driver", d.driver.str()},
                  {"release_date", d.release_date},
                  {"index", d.index},
                  {"cuda_compat", ojson{{"cuda", d.compat_cuda.str()}, {"platforms", platforms}}},
                  {"source", d.source}});
    }
    j["drivers"] = std::move(list);
    return j;
}

std::vector<const DriverIndex*> driver_compat_any(const std::vector<DriverIndex>& indexes,
                                                  const CudaRelease& release) {
    std::vector<const DriverIndex*> out;
    if (release.version.size() < 2) {
        return out;
    }
    Version line = release.version.truncated(2);
    for (const auto& d : indexes) {
        if (d.compat_cuda == line) {
            out.push_back(&d);
        }
    }
    return out;
}

const DriverIndex* driver_compat_for(const std::vector<DriverIndex>& indexes,
                                     const CudaRelease& release,
                                     std::string_view platform) {
    if (release.source != CudaSource::redist || release.component("cuda_compat") ||
        Version::compare_numeric(release.version, compat_per_driver_from()) < 0) {
        return nullptr;
    }
    auto all = driver_compat_any(indexes, release);
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
        if ((*it)->compat.find(platform) != (*it)->compat.end()) {
            return *it; // the newest driver of the line: its compat libraries are the newest
        }
    }
    return nullptr;
}

Result<std::vector<DriverIndex>> load_driver_indexes(const std::filesystem::path& dir) {
    auto file = dir / k_driver_indexes_file;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
        return std::vector<DriverIndex>{};
    }
    auto text = CUDAENV_TRY(read_text_file(file));
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded()) {
        return Error(ErrorCode::integrity, "manifest '" + file.string() + "': not JSON");
    }
    return parse_driver_indexes(doc, file.string());
}

} // namespace cudaenv::manifest
