// What the manifests say, loaded once per doctor run.
#include "manifests.hpp"

#include "../manifest/codec.hpp"
#include "../manifest/gpu_support.hpp"

#include <nlohmann/json.hpp>

#include <ctime>
#include <fstream>

namespace cudaenv::doctor {

namespace fs = std::filesystem;

Manifests::Manifests(fs::path dir, std::optional<std::string> today)
    : m_dir(std::move(dir)), m_today(std::move(today)) {}

std::string Manifests::today() const {
    if (m_today && m_today->size() == 10) {
        return *m_today;
    }
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
}

const manifest::CudaRelease* Manifests::cuda_release_for(const Version& mm) {
    std::string key = mm.str();
    auto it = m_releases.find(key);
    if (it == m_releases.end()) {
        std::optional<manifest::CudaRelease> best;
        std::optional<Version> best_v;
        std::error_code ec;
        for (fs::directory_iterator d(m_dir / "cuda", ec), end; !ec && d != end; d.increment(ec)) {
            auto stem = d->path().stem().string();
            auto v = Version::try_parse(stem);
            if (!v || d->path().extension() != ".json" || !mm.is_prefix_of(*v) ||
                (best_v && *v < *best_v)) {
                continue;
            }
            best_v = v;
        }
        if (best_v) {
            auto path = m_dir / "cuda" / (best_v->str() + ".json");
            std::ifstream in(path);
            std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
            if (auto doc = manifest::parse_json_text(text, path.string())) {
                if (auto r = manifest::parse_cuda_release(*doc, path.string())) {
                    best = std::move(*r);
                }
            }
        }
        it = m_releases.emplace(key, std::move(best)).first;
    }
    return it->second ? &*it->second : nullptr;
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

const manifest::Rules* Manifests::rules() {
    if (!m_rules) {
        m_rules = load_manifest<manifest::Rules>(m_dir, "rules.json", manifest::parse_rules);
    }
    return *m_rules ? &**m_rules : nullptr;
}

const std::vector<manifest::Gpu>& Manifests::gpu_table() {
    if (!m_gpus) {
        m_gpus = load_manifest<std::vector<manifest::Gpu>>(m_dir, "gpus.json", manifest::parse_gpus)
                     .value_or(std::vector<manifest::Gpu>{});
    }
    return *m_gpus;
}

const manifest::GpuSupport& Manifests::gpu_support() {
    if (!m_gpu_support) {
        auto s = manifest::load_gpu_support(m_dir);
        m_gpu_support = s ? std::move(*s) : manifest::GpuSupport{};
    }
    return *m_gpu_support;
}

const std::vector<manifest::Framework>& Manifests::frameworks() {
    if (!m_frameworks) {
        auto f = manifest::load_frameworks(m_dir);
        m_frameworks = f ? std::move(*f) : std::vector<manifest::Framework>{};
    }
    return *m_frameworks;
}

} // namespace cudaenv::doctor
