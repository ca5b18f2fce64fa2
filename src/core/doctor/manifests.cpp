// What the manifests say, loaded once per doctor run.
#include "manifests.hpp"

#include "../manifest/codec.hpp"
#include "../manifest/driver_indexes.hpp"
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

const manifest::CudaRelease* Manifests::cuda_release_for(const Version& v) {
    std::string key = v.str();
    auto it = m_releases.find(key);
    if (it == m_releases.end()) {
        // the release the toolkit says it is (12.6.1 is 12.6.1, not 12.6.3); a patch the
        // manifests do not hold is judged as the newest one before it; a version that names only
        // its minor (from nvcc or libcudart) as the minor's first release: its driver minimum is
        // the lowest any of them asks, so the doctor asserts no more than it knows
        Version mm = v.truncated(std::min<std::size_t>(2, v.size()));
        if (v.size() > 2 && v[2] >= 1000) {
            // a build date, not a patch: real version.json files say "11.8.20220929" and
            // "12.6.20241114" (a 12.6.3 runfile's tree) as well as "12.6.1"
            return cuda_release_for(mm);
        }
        std::optional<Version> best_v;
        std::error_code ec;
        for (fs::directory_iterator d(m_dir / "cuda", ec), end; !ec && d != end; d.increment(ec)) {
            auto stem = d->path().stem().string();
            auto c = Version::try_parse(stem);
            if (!c || d->path().extension() != ".json" || !mm.is_prefix_of(*c)) {
                continue;
            }
            bool better = v.size() > 2
                              ? Version::compare_numeric(*c, v) <= 0 && (!best_v || *best_v < *c)
                              : !best_v || *c < *best_v;
            if (better) {
                best_v = c;
            }
        }
        if (!best_v && v.size() > 2) {
            return cuda_release_for(mm); // older than every patch we hold: the minor's first
        }
        std::optional<manifest::CudaRelease> best;
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

const Result<manifest::Advisories>& Manifests::advisories() {
    if (!m_advisories) {
        m_advisories = manifest::load_advisories(m_dir);
    }
    return *m_advisories;
}

const std::vector<manifest::Framework>& Manifests::frameworks() {
    if (!m_frameworks) {
        auto f = manifest::load_frameworks(m_dir);
        m_frameworks = f ? std::move(*f) : std::vector<manifest::Framework>{};
    }
    return *m_frameworks;
}

const std::vector<manifest::DriverIndex>& Manifests::driver_indexes() {
    if (!m_driver_indexes) {
        auto d = manifest::load_driver_indexes(m_dir);
        m_driver_indexes = d ? std::move(*d) : std::vector<manifest::DriverIndex>{};
    }
    return *m_driver_indexes;
}

} // namespace cudaenv::doctor
