// What the manifests say, loaded once per doctor run.
#include "../activate/machine.hpp"
#include "../activate/selection.hpp"
#include "../manifest/codec.hpp"
#include "../manifest/gpu_support.hpp"
#include "../store/records.hpp"
#include "host_internal.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

namespace cudaenv::doctor {

namespace fs = std::filesystem;
using detail::join_machine;
using detail::lines_of;
using detail::trim;

// -- manifests ----------------------------------------------------------------------------------

const manifest::CudaRelease* Host::cuda_release_for(const Version& mm) {
    std::string key = mm.str();
    auto it = m_cache->releases.find(key);
    if (it == m_cache->releases.end()) {
        std::optional<manifest::CudaRelease> best;
        std::optional<Version> best_v;
        std::error_code ec;
        for (fs::directory_iterator d(m_config.manifests / "cuda", ec), end; !ec && d != end;
             d.increment(ec)) {
            auto stem = d->path().stem().string();
            auto v = Version::try_parse(stem);
            if (!v || d->path().extension() != ".json" || !mm.is_prefix_of(*v) ||
                (best_v && *v < *best_v)) {
                continue;
            }
            best_v = v;
        }
        if (best_v) {
            auto path = m_config.manifests / "cuda" / (best_v->str() + ".json");
            std::ifstream in(path);
            std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
            if (auto doc = manifest::parse_json_text(text, path.string())) {
                if (auto r = manifest::parse_cuda_release(*doc, path.string())) {
                    best = std::move(*r);
                }
            }
        }
        it = m_cache->releases.emplace(key, std::move(best)).first;
    }
    return it->second ? &*it->second : nullptr;
}

const manifest::CudaRelease* Host::cuda_release() {
    const auto& t = toolkit();
    if (!t.cuda) {
        return nullptr;
    }
    return cuda_release_for(t.cuda->truncated(std::min<std::size_t>(2, t.cuda->size())));
}

namespace {

std::optional<nlohmann::json> load_json(const fs::path& p) {
    std::ifstream in(p);
    if (!in) {
        return std::nullopt;
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto doc = manifest::parse_json_text(text, p.string());
    if (!doc) {
        return std::nullopt;
    }
    return std::move(*doc);
}

} // namespace

namespace {

/// One manifest file parsed by `parse`; none when it is missing or invalid (the probes that need
/// it then say the manifests do not know).
template <typename T, typename Parse>
std::optional<T> load_manifest(const fs::path& dir, const char* name, Parse parse) {
    if (auto doc = load_json(dir / name)) {
        if (auto parsed = parse(*doc, name)) {
            return std::move(*parsed);
        }
    }
    return std::nullopt;
}

} // namespace

const manifest::Rules* Host::rules() {
    if (!m_cache->rules) {
        m_cache->rules =
            load_manifest<manifest::Rules>(m_config.manifests, "rules.json", manifest::parse_rules);
    }
    return *m_cache->rules ? &**m_cache->rules : nullptr;
}

const std::vector<manifest::Gpu>& Host::gpu_table() {
    if (!m_cache->gpus) {
        m_cache->gpus = load_manifest<std::vector<manifest::Gpu>>(
                            m_config.manifests, "gpus.json", manifest::parse_gpus)
                            .value_or(std::vector<manifest::Gpu>{});
    }
    return *m_cache->gpus;
}

const manifest::GpuSupport& Host::gpu_support() {
    if (!m_cache->gpu_support) {
        auto s = manifest::load_gpu_support(m_config.manifests);
        m_cache->gpu_support = s ? std::move(*s) : manifest::GpuSupport{};
    }
    return *m_cache->gpu_support;
}

const std::vector<manifest::Framework>& Host::frameworks() {
    if (!m_cache->frameworks) {
        auto f = manifest::load_frameworks(m_config.manifests);
        m_cache->frameworks = f ? std::move(*f) : std::vector<manifest::Framework>{};
    }
    return *m_cache->frameworks;
}

} // namespace cudaenv::doctor
