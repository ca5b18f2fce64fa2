#include "generate.hpp"

#include "../fs.hpp"
#include "../sha256.hpp"
#include "announced.hpp"
#include "codec.hpp"
#include "cublas_patches.hpp"
#include "driver_indexes.hpp"
#include "generate_advisories.hpp"
#include "generate_cublas.hpp"
#include "generate_cuda_supplement.hpp"
#include "generate_cudnn_excerpts.hpp"
#include "generate_frameworks.hpp"
#include "gpu_support.hpp"
#include "nvidia_redist.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace cudaenv::manifest {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// CUDA releases older than this have no redistrib file and are described by runfiles.
const Version k_first_redist_cuda = *Version::try_parse("11.4.2");
/// cuDNN releases older than this are not carried: 7.x covers every TensorFlow row from 1.13.
const Version k_first_cudnn = *Version::try_parse("7");

Error gen_error(const std::string& what) {
    return Error(ErrorCode::integrity, "generating manifests: " + what);
}

std::string str(const json& obj, const char* key) {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// "580.65.06 (CUDA 13.0 GA, Table 3)" -> 580.65.06
std::optional<Version> leading_version(const std::string& s) {
    auto end = s.find_first_not_of("0123456789.");
    std::string head = s.substr(0, end);
    while (!head.empty() && head.back() == '.') {
        head.pop_back();
    }
    return Version::try_parse(head);
}

/// NVIDIA's platform keys from Spack's (Linux-aarch64 is the SBSA runfile).
std::string platform_from_spack(const std::string& key) {
    if (key == "Linux-x86_64") {
        return "linux-x86_64";
    }
    if (key == "Linux-aarch64") {
        return "linux-sbsa";
    }
    return {};
}

bool wanted_platform(std::string_view p) {
    return std::find(std::begin(k_platforms), std::end(k_platforms), p) != std::end(k_platforms);
}

/// Splits a facts URL into a path under the download base, or keeps it absolute.
void set_location(Artifact& a, const std::string& url) {
    std::string base = std::string(k_nvidia_base) + "/";
    if (url.rfind(base, 0) == 0) {
        a.path = url.substr(base.size());
    } else {
        a.url = url;
    }
}

std::optional<std::uint64_t> size_of(const json& obj) {
    auto it = obj.find("size");
    if (it == obj.end()) {
        return std::nullopt;
    }
    if (it->is_number_unsigned()) {
        return it->get<std::uint64_t>();
    }
    if (it->is_string()) {
        if (auto v = Version::try_parse(it->get<std::string>()); v && v->size() == 1) {
            return std::stoull(it->get<std::string>());
        }
    }
    return std::nullopt;
}

struct Facts {
    json doc;
    /// CUDA version -> Table 3 / bundled driver facts
    std::map<Version, json> min_driver;
    /// "11" -> 450.80.02
    std::map<unsigned, Version> compat_floor;
    /// registry sha256 of redistrib files: "cuda"/"cudnn" -> version -> sha256
    std::map<std::string, std::map<std::string, std::string>> registry;
    /// CUDA major.minor -> the driver branch its release notes name (from 13.4, where Table 3
    /// no longer has a row per release), with the source
    std::map<Version, std::pair<unsigned, std::string>> driver_branch;
};

/// cudaenv-supplement.json beside facts.json (our own facts for releases after facts.json,
/// each with its source): Table 3 rows, driver branches, host compilers and SM lists by
/// major.minor. Absent: nothing is added.
Status apply_supplement(const fs::path& file, Facts& f) {
    std::error_code ec;
    if (!fs::exists(file, ec)) {
        return Ok{};
    }
    auto text = CUDAENV_TRY(read_text_file(file));
    json sup = json::parse(text, nullptr, false);
    if (sup.is_discarded() || !sup.is_object()) {
        return gen_error("'" + file.string() + "' is not a JSON object");
    }
    for (const auto& row : sup.value("table3", json::array())) {
        auto v = Version::try_parse(str(row, "cuda"));
        if (!v || !Version::try_parse(str(row, "linux_min_driver")) || str(row, "source").empty()) {
            return gen_error("supplement table3 row '" + row.dump() + "' is incomplete");
        }
        auto& target = f.min_driver[*v];
        for (const char* key : {"table3_label", "linux_min_driver", "source"}) {
            target[key] = row[key];
        }
        target["cuda"] = v->str();
    }
    for (const auto& row : sup.value("driver_branches", json::array())) {
        auto v = Version::try_parse(str(row, "cuda"));
        if (!v || !row.contains("branch") || !row["branch"].is_number_unsigned()) {
            return gen_error("supplement driver_branches row '" + row.dump() + "' is incomplete");
        }
        f.driver_branch[*v] = {row["branch"].get<unsigned>(), str(row, "source")};
    }
    for (const auto& row : sup.value("host_compilers", json::array())) {
        std::string mm = str(row, "cuda");
        f.doc["nvcc_host_gcc_max"][mm] =
            json{{"gcc_max", str(row, "gcc_max")},
                 {"clang_max", str(row, "clang_max")},
                 {"basis", "cudaenv-supplement.json: " + str(row, "source")}};
    }
    auto& per_cuda = f.doc["cuda_sm_support"]["per_cuda"];
    for (const auto& row : sup.value("sm_support", json::array())) {
        std::string same = str(row, "same_as");
        if (!per_cuda.contains(same)) {
            return gen_error("supplement sm_support: no SM list for CUDA '" + same + "'");
        }
        per_cuda[str(row, "cuda")] = per_cuda[same];
    }
    return Ok{};
}

Result<Facts> load_facts(const fs::path& file) {
    auto text = read_text_file(file);
    if (!text) {
        return std::move(text).error();
    }
    Facts f;
    f.doc = json::parse(*text, nullptr, false);
    if (f.doc.is_discarded() || !f.doc.is_object()) {
        return gen_error("'" + file.string() + "' is not a JSON object");
    }
    for (const char* key : {"tensorflow",
                            "cuda_min_driver",
                            "cuda_minor_version_compatibility",
                            "cuda_runfile_installers",
                            "cuda_sm_support",
                            "nvcc_host_gcc_max",
                            "gpus_detail",
                            "cudnn_releases",
                            "redist_manifest_sha256"}) {
        if (!f.doc.contains(key)) {
            return gen_error("facts.json has no '" + std::string(key) + "' section");
        }
    }
    for (const auto& row : f.doc["cuda_min_driver"]) {
        if (auto v = Version::try_parse(str(row, "cuda"))) {
            f.min_driver[*v] = row;
        }
    }
    for (const auto& [key, row] : f.doc["cuda_minor_version_compatibility"].items()) {
        auto major = leading_version(key);
        if (!major || !row.is_object()) {
            continue;
        }
        std::string floor = str(row, "linux_min");
        if (floor.empty()) {
            floor = str(row, "first_release_linux_min");
        }
        if (auto v = leading_version(floor)) {
            f.compat_floor[major->major()] = *v;
        }
    }
    const auto& reg = f.doc["redist_manifest_sha256"]["registry"];
    for (const char* kind : {"cuda", "cudnn"}) {
        if (!reg.contains(kind)) {
            continue;
        }
        for (const auto& [ver, entry] : reg[kind].items()) {
            // Key the registry by the file name's version (the URL's redistrib_<v>.json).
            std::string url = str(entry, "url");
            auto pos = url.rfind("redistrib_");
            if (pos == std::string::npos) {
                continue;
            }
            std::string v = url.substr(pos + 10);
            v = v.substr(0, v.size() - 5);
            f.registry[kind][v] = str(entry, "sha256");
        }
    }
    CUDAENV_TRY(apply_supplement(file.parent_path() / "cudaenv-supplement.json", f));
    return f;
}

/// Minimum driver for full support: Table 3's row for the release, else the row of the nearest
/// earlier release of the same major.minor (Table 3 rows cover their updates), else the driver
/// bundled with the release.
void apply_driver(const Facts& f, CudaRelease& r) {
    auto it = f.min_driver.find(r.version);
    if (it != f.min_driver.end()) {
        if (auto v = Version::try_parse(str(it->second, "linux_min_driver"))) {
            r.driver_min = v;
            r.driver_min_source = "table3";
            r.driver_min_basis = str(it->second, "source");
        }
    }
    if (!r.driver_min) {
        for (auto rit = f.min_driver.rbegin(); rit != f.min_driver.rend(); ++rit) {
            if (rit->first < r.version && rit->first.truncated(2) == r.version.truncated(2)) {
                if (auto v = Version::try_parse(str(rit->second, "linux_min_driver"))) {
                    r.driver_min = v;
                    r.driver_min_source = "table3:" + rit->first.str();
                    r.driver_min_basis = str(rit->second, "source");
                    break;
                }
            }
        }
    }
    // From 13.4 the release notes name a driver branch instead of a row per release: the
    // minimum is that branch's first driver, written as the branch number (615 <= 615.x.y).
    if (!r.driver_min) {
        if (auto b = f.driver_branch.find(r.version.truncated(2)); b != f.driver_branch.end()) {
            r.driver_min = Version::try_parse(std::to_string(b->second.first));
            r.driver_min_source = "branch:R" + std::to_string(b->second.first);
            r.driver_min_basis = b->second.second;
        }
    }
    if (!r.driver_min && it != f.min_driver.end()) {
        for (const char* key : {"bundled_linux_driver_manifest", "bundled_linux_driver_runfile"}) {
            if (auto v = Version::try_parse(str(it->second, key))) {
                r.driver_min = v;
                r.driver_min_source = "bundled";
                break;
            }
        }
    }
    if (auto c = f.compat_floor.find(r.version.major()); c != f.compat_floor.end()) {
        r.driver_compat_min = c->second;
    }
}

std::optional<unsigned> sm_number(const std::string& s) {
    if (s.rfind("sm_", 0) != 0) {
        return std::nullopt;
    }
    auto v = Version::try_parse(s.substr(3));
    if (!v || v->size() != 1) {
        return std::nullopt;
    }
    return v->major();
}

/// Host-compiler limits that differ between patch releases of one minor. Each is from the
/// notes facts.json keeps with the table (nvcc_host_compiler_notes), which cite NVIDIA's
/// release notes through Spack's and nixpkgs' tables; the real nvcc 11.8 and 13.0 headers
/// (crt/host_config.h: `__GNUC__ > 11`, `__clang_major__ >= 15`; `> 15`, `>= 21`) agree with
/// the table rows for those releases.
struct CompilerPatch {
    const char* from;
    const char* to;
    bool clang;
    const char* max;
    const char* source;
};

constexpr CompilerPatch k_compiler_patches[] = {
    {"11.4.1",
     "11.5.2",
     false,
     "11",
     "NVIDIA added GCC 11 in 11.4.1 (Spack: gcc@11: conflicts only with cuda@:11.4.0)"},
    {"12.2.0", "12.2.1", true, "15", "12.2.1 maxed out at Clang 15 (nixpkgs note)"},
    {"12.2.2", "12.2.2", true, "16", "12.2.2 added Clang 16 (nixpkgs note)"},
};

void apply_sm_and_compilers(const Facts& f, CudaRelease& r) {
    std::string mm = r.version.truncated(2).str();
    const auto& sm = f.doc["cuda_sm_support"]["per_cuda"];
    if (auto it = sm.find(mm); it != sm.end()) {
        auto lo = sm_number(str(*it, "min_sm"));
        auto hi = sm_number(str(*it, "max_sm"));
        if (lo && hi) {
            SmRange range{*lo, *hi, {}};
            for (const auto& a : it->value("real_archs", json::array())) {
                if (auto n = sm_number(a.get<std::string>())) {
                    range.archs.push_back(*n);
                }
            }
            r.sm = range;
        }
    }
    const auto& cc = f.doc["nvcc_host_gcc_max"];
    if (auto it = cc.find(mm); it != cc.end()) {
        r.gcc_max = Version::try_parse(str(*it, "gcc_max"));
        r.clang_max = Version::try_parse(str(*it, "clang_max"));
        r.host_compilers_source = "facts.json nvcc_host_gcc_max[" + mm + "]: " + str(*it, "basis");
    }
    // NVIDIA changes the limits in patch releases, which the per-minor table cannot say.
    for (const auto& p : k_compiler_patches) {
        auto from = *Version::try_parse(p.from);
        auto to = *Version::try_parse(p.to);
        if (Version::compare_numeric(r.version, from) >= 0 &&
            Version::compare_numeric(r.version, to) <= 0) {
            (p.clang ? r.clang_max : r.gcc_max) = Version::try_parse(p.max);
            r.host_compilers_source += std::string("; ") + (p.clang ? "clang" : "gcc") + " " +
                                       p.max + " for " + p.from + "-" + p.to + ": " + p.source;
        }
    }
}

Status check_registry(const Facts& f,
                      const char* kind,
                      const std::string& file_version,
                      const std::string& sha,
                      GenerateReport& report) {
    auto k = f.registry.find(kind);
    if (k == f.registry.end()) {
        return Ok{};
    }
    auto it = k->second.find(file_version);
    if (it == k->second.end()) {
        return Ok{};
    }
    if (it->second != sha) {
        return gen_error(std::string(kind) + " redistrib_" + file_version + ".json has sha256 " +
                         sha + " but the registry pins " + it->second);
    }
    ++report.registry_checked;
    return Ok{};
}

Result<std::vector<CudaRelease>>
cuda_redist_releases(const fs::path& ref, const Facts& f, GenerateReport& report) {
    std::vector<CudaRelease> out;
    for (const auto& entry : fs::directory_iterator(ref)) {
        std::string name = entry.path().filename().string();
        if (name.rfind("cuda-redistrib_", 0) != 0 || entry.path().extension() != ".json") {
            continue;
        }
        std::string ver = name.substr(15, name.size() - 15 - 5);
        auto text = CUDAENV_TRY(read_text_file(entry.path()));
        auto idx = CUDAENV_TRY(parse_redistrib(text, entry.path().string()));
        Artifact red;
        red.path = redistrib_path("cuda", ver);
        red.sha256 = sha256_hex(text);
        red.size = text.size();
        CUDAENV_TRY(check_registry(f, "cuda", ver, red.sha256, report));
        auto r = CUDAENV_TRY(cuda_release_from_redist(idx, ver, red));
        apply_driver(f, r);
        apply_sm_and_compilers(f, r);
        out.push_back(std::move(r));
        ++report.cuda_redist;
    }
    return out;
}

std::vector<CudaRelease> cuda_runfile_releases(const Facts& f, GenerateReport& report) {
    std::vector<CudaRelease> out;
    for (const auto& [ver, entry] : f.doc["cuda_runfile_installers"]["versions"].items()) {
        auto v = Version::try_parse(ver);
        if (!v || v->size() != 3 || !(*v < k_first_redist_cuda)) {
            continue;
        }
        CudaRelease r;
        r.version = *v;
        r.source = CudaSource::runfile;
        const json runfiles = entry.value("runfiles", json::object());
        for (const auto& [key, run] : runfiles.items()) {
            std::string platform = platform_from_spack(key);
            if (platform.empty() || !is_sha256_hex(str(run, "sha256"))) {
                continue;
            }
            Artifact a;
            set_location(a, str(run, "url"));
            a.sha256 = str(run, "sha256");
            r.runfiles.emplace(platform, std::move(a));
        }
        if (r.runfiles.empty()) {
            continue;
        }
        if (auto it = f.min_driver.find(r.version); it != f.min_driver.end()) {
            r.release_date = str(it->second, "release_date");
        }
        apply_driver(f, r);
        apply_sm_and_compilers(f, r);
        out.push_back(std::move(r));
        ++report.cuda_runfile;
    }
    return out;
}

/// cuDNN builds from NVIDIA's own index files for this release, merged.
Status cudnn_from_redistrib(const fs::path& ref,
                            const Facts& f,
                            const json& release,
                            CudnnRelease& r,
                            GenerateReport& report) {
    std::map<std::string, CudnnBuild> builds; // by cuda label
    for (const auto& m : release["manifests"]) {
        std::string file = m.get<std::string>();
        auto path = ref / file;
        auto text = CUDAENV_TRY(read_text_file(path));
        auto idx = CUDAENV_TRY(parse_redistrib(text, path.string()));
        std::string ver = file.substr(16, file.size() - 16 - 5); // cudnn-redistrib_<v>.json
        Artifact red;
        red.path = redistrib_path("cudnn", ver);
        red.sha256 = sha256_hex(text);
        red.size = text.size();
        CUDAENV_TRY(check_registry(f, "cudnn", ver, red.sha256, report));
        r.redistrib.push_back(red);
        auto one = CUDAENV_TRY(cudnn_release_from_redist(idx, red));
        if (one.version != r.version) {
            return gen_error(file + " is cuDNN " + one.version.str() + ", expected " +
                             r.version.str());
        }
        if (r.release_date.empty()) {
            r.release_date = one.release_date;
        }
        // Several index files for one release (8.9.7.29) merge; they must agree.
        for (auto& ob : one.builds) {
            auto& b = builds[ob.cuda];
            b.cuda = ob.cuda;
            b.cuda_major = ob.cuda_major;
            for (auto& [platform, art] : ob.platforms) {
                if (auto old = b.platforms.find(platform);
                    old != b.platforms.end() && old->second.sha256 != art.sha256) {
                    return gen_error(file + ": two different archives for cuDNN " +
                                     r.version.str() + " cuda" + ob.cuda + " " + platform);
                }
                b.platforms[platform] = art;
            }
            for (auto& [name, plats] : ob.extras) {
                for (auto& [platform, art] : plats) {
                    b.extras[name][platform] = art;
                }
            }
        }
    }
    for (auto& [label, b] : builds) {
        r.builds.push_back(std::move(b));
    }
    return Ok{};
}

/// The CUDA range each build supports. The release's recorded ranges (facts.json
/// `nixpkgs_supported_cuda_ranges`, from NVIDIA's support matrices; linux-x86_64 rows, one per
/// CUDA major) win; otherwise a label with a minor is the newest it supports: from CUDA 11 on
/// back to x.0 (cuDNN 8.1.1's "11.2" build is for 11.0-11.2), before 11 that minor only (the
/// sonames carry it). A label without a minor ("11") covers the whole major.
void apply_cudnn_ranges(const json& release, CudnnRelease& r) {
    std::map<unsigned, std::vector<std::pair<Version, Version>>> known;
    if (release.contains("nixpkgs_supported_cuda_ranges")) {
        for (const auto& row : release["nixpkgs_supported_cuda_ranges"]) {
            auto lo = Version::try_parse(str(row, "cuda_min"));
            auto hi = Version::try_parse(str(row, "cuda_max"));
            if (str(row, "platform") == "linux-x86_64" && lo && hi && lo->major() == hi->major()) {
                known[lo->major()].emplace_back(*lo, *hi);
            }
        }
    }
    for (auto& b : r.builds) {
        auto label = *Version::try_parse(b.cuda);
        auto it = known.find(b.cuda_major);
        const std::pair<Version, Version>* range = nullptr;
        if (it != known.end()) {
            for (const auto& p : it->second) {
                // a range that holds the label, else the only range of that major
                if (label.size() < 2 ||
                    (Version::compare_numeric(label.truncated(2), p.first) >= 0 &&
                     Version::compare_numeric(label.truncated(2), p.second) <= 0)) {
                    range = range ? nullptr : &p;
                }
            }
            if (!range && it->second.size() == 1 && label.size() < 2) {
                range = &it->second.front();
            }
        }
        if (range) {
            b.cuda_min = range->first;
            b.cuda_max = range->second;
        } else if (label.size() >= 2) {
            b.cuda_max = label.truncated(2);
            b.cuda_min = b.cuda_major >= 11
                             ? Version::try_parse(std::to_string(b.cuda_major) + ".0")
                             : b.cuda_max;
        }
    }
}

void cudnn_from_facts(const json& release, CudnnRelease& r) {
    for (const auto& b : release["builds"]) {
        CudnnBuild build;
        build.cuda = str(b, "cuda");
        auto cv = Version::try_parse(build.cuda);
        if (!cv) {
            continue;
        }
        build.cuda_major = cv->major();
        for (const auto& [platform, p] : b["platforms"].items()) {
            if (!wanted_platform(platform) || !is_sha256_hex(str(p, "sha256"))) {
                continue;
            }
            Artifact a;
            if (std::string url = str(p, "url"); !url.empty()) {
                set_location(a, url);
            }
            a.sha256 = str(p, "sha256");
            a.size = size_of(p);
            build.platforms.emplace(platform, std::move(a));
        }
        if (!build.platforms.empty()) {
            r.builds.push_back(std::move(build));
        }
    }
}

/// NVIDIA's cuDNN index files in the reference that no facts release names (releases newer than
/// facts.json, 9.27.0): each is a release of its own, the version its `cudnn` component says.
Result<json> releases_from_unlisted_indexes(const fs::path& ref, const Facts& f) {
    std::set<std::string> listed;
    for (const auto& release : f.doc["cudnn_releases"]["releases"]) {
        for (const auto& m : release.value("manifests", json::array())) {
            if (m.is_string()) {
                listed.insert(m.get<std::string>());
            }
        }
    }
    std::map<Version, json> found;
    for (const auto& entry : fs::directory_iterator(ref)) {
        std::string name = entry.path().filename().string();
        if (name.rfind("cudnn-redistrib_", 0) != 0 || entry.path().extension() != ".json" ||
            listed.count(name)) {
            continue;
        }
        auto text = CUDAENV_TRY(read_text_file(entry.path()));
        auto idx = CUDAENV_TRY(parse_redistrib(text, entry.path().string()));
        const auto* c = idx.find("cudnn");
        auto v = c ? Version::try_parse(c->version) : std::nullopt;
        if (!v) {
            return gen_error(name + " has no readable cudnn version");
        }
        auto& release = found[*v];
        release["version"] = v->str();
        release["release_date"] = idx.release_date;
        release["manifests"].push_back(name);
    }
    json out = json::array();
    for (auto& [v, release] : found) {
        out.push_back(std::move(release));
    }
    return out;
}

Result<std::vector<CudnnRelease>>
cudnn_releases(const fs::path& ref, const Facts& f, GenerateReport& report) {
    std::vector<CudnnRelease> out;
    json all = f.doc["cudnn_releases"]["releases"];
    for (auto& extra : CUDAENV_TRY(releases_from_unlisted_indexes(ref, f))) {
        all.push_back(std::move(extra));
    }
    for (const auto& release : all) {
        auto v = Version::try_parse(str(release, "version"));
        if (!v || *v < k_first_cudnn) {
            continue;
        }
        CudnnRelease r;
        r.version = *v;
        r.major = v->major();
        r.release_date = str(release, "release_date");
        if (release.contains("manifests")) {
            CUDAENV_TRY(cudnn_from_redistrib(ref, f, release, r, report));
        } else {
            cudnn_from_facts(release, r);
        }
        if (r.builds.empty()) {
            continue;
        }
        // Archives named *-archive.tar.xz hold <name>/{include,lib}; the older .tgz files hold
        // cuda/{include,lib64}.
        r.layout = CudnnLayout::redist;
        for (const auto& b : r.builds) {
            for (const auto& [p, a] : b.platforms) {
                std::string loc = a.path.empty() ? a.url : a.path;
                if (loc.size() >= 4 && loc.compare(loc.size() - 4, 4, ".tgz") == 0) {
                    r.layout = CudnnLayout::tarball;
                }
            }
        }
        std::sort(r.builds.begin(), r.builds.end(), [](const auto& a, const auto& b) {
            return *Version::try_parse(a.cuda) > *Version::try_parse(b.cuda);
        });
        apply_cudnn_ranges(release, r);
        out.push_back(std::move(r));
        ++report.cudnn;
    }
    return out;
}

Result<Framework> tensorflow(const Facts& f, GenerateReport& report) {
    Framework tf;
    tf.name = "tensorflow";
    tf.aliases = {"tf"};
    tf.packages = {"tensorflow", "tensorflow-gpu", "tf-nightly"};
    tf.cuda_rule = CompatRule::same_major_min_minor;
    tf.cudnn_rule = CompatRule::same_major_min_minor;
    for (const auto& row : f.doc["tensorflow"]) {
        FrameworkRelease r;
        auto series = Version::try_parse(str(row, "tf"));
        auto tested = Version::try_parse(str(row, "tf_version"));
        auto cuda = Version::try_parse(str(row, "cuda"));
        auto cudnn = Version::try_parse(str(row, "cudnn"));
        if (!series || !tested || !cuda || !cudnn) {
            return gen_error("tensorflow row '" + row.dump() + "' is incomplete");
        }
        r.series = *series;
        r.tested = *tested;
        r.cuda = *cuda;
        r.cudnn = *cudnn;
        r.package = str(row, "package");
        r.python = str(row, "python");
        r.compiler = str(row, "compiler");
        r.build_tools = str(row, "build_tools");
        tf.releases.push_back(std::move(r));
        ++report.framework_rows;
    }
    std::sort(tf.releases.begin(), tf.releases.end(), [](const auto& a, const auto& b) {
        return a.series > b.series;
    });
    return tf;
}

/// A GPU's minimum driver: the first CUDA major.minor whose real architectures include its SM,
/// then Table 3's Linux minimum for that minor's first release that is not a release candidate.
/// A GPU cannot be older than the first CUDA that compiles for it, and NVIDIA ships each new
/// architecture's first driver with that CUDA (H100: CUDA 11.8, 520.61.05, the driver NVIDIA AI
/// Enterprise 2.3 announced H100 support with). An SM the table's first CUDA already has predates
/// the table: no minimum rather than a wrong one.
void apply_min_driver(const Facts& f, Gpu& g) {
    if (g.name.rfind("Jetson", 0) == 0) {
        return; // L4T: the driver comes with JetPack
    }
    std::vector<Version> minors;
    const auto& per_cuda = f.doc["cuda_sm_support"]["per_cuda"];
    for (const auto& [key, row] : per_cuda.items()) {
        if (auto v = Version::try_parse(key)) {
            minors.push_back(*v);
        }
    }
    std::sort(minors.begin(), minors.end());
    for (std::size_t i = 0; i < minors.size(); ++i) {
        bool has = false;
        for (const auto& a : per_cuda[minors[i].str()].value("real_archs", json::array())) {
            has = has || sm_number(a.get<std::string>()) == g.compute_capability;
        }
        if (!has) {
            continue;
        }
        if (i == 0) {
            return;
        }
        for (const auto& [v, row] : f.min_driver) { // ascending
            if (v.truncated(2) != minors[i] ||
                str(row, "table3_label").find("RC") != std::string::npos) {
                continue;
            }
            if (auto d = Version::try_parse(str(row, "linux_min_driver"))) {
                g.min_driver = d;
                g.min_driver_basis = "CUDA " + minors[i].str() + " is the first with sm_" +
                                     std::to_string(g.compute_capability) +
                                     "; Table 3: " + str(row, "table3_label") + " needs " +
                                     d->str();
                return;
            }
        }
        return;
    }
}

std::vector<Gpu> gpus(const Facts& f, GenerateReport& report) {
    std::vector<Gpu> out;
    for (const auto& g : f.doc["gpus_detail"]) {
        auto cc = Version::try_parse(str(g, "compute_capability"));
        if (!cc || cc->size() != 2) {
            continue;
        }
        Gpu gpu{str(g, "name"), cc->major() * 10 + cc->minor(), str(g, "architecture"), {}, {}};
        apply_min_driver(f, gpu);
        out.push_back(std::move(gpu));
        ++report.gpus;
    }
    return out;
}

/// Splits a tab-separated table with a header line into rows of named fields.
std::vector<std::map<std::string, std::string>> read_tsv(const std::string& text) {
    std::vector<std::map<std::string, std::string>> rows;
    std::vector<std::string> header;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos) {
            end = text.size();
        }
        std::string line = text.substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        if (line.empty()) {
            continue;
        }
        std::vector<std::string> cells;
        std::size_t start = 0;
        while (true) {
            std::size_t tab = line.find('\t', start);
            cells.push_back(line.substr(start, tab == std::string::npos ? tab : tab - start));
            if (tab == std::string::npos) {
                break;
            }
            start = tab + 1;
        }
        if (header.empty()) {
            header = cells;
            continue;
        }
        std::map<std::string, std::string> row;
        for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) {
            row[header[i]] = cells[i];
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

/// "520.56.06*@2022-10-12" or "520.56.06*" -> 520.56.06 (the star marks a tag released after
/// higher-numbered ones).
std::optional<Version> listed_driver(std::string s) {
    s = s.substr(0, s.find('@'));
    if (!s.empty() && s.back() == '*') {
        s.pop_back();
    }
    return Version::try_parse(s);
}

/// One row of the open kernel modules' GPU tables as a listing.
Result<GpuListing> listing_of(std::map<std::string, std::string>& row,
                              const std::string& id_column,
                              const std::string& newest_column) {
    GpuListing g;
    std::string id = row[id_column];
    std::vector<std::string> parts;
    for (std::size_t start = 0; start <= id.size();) {
        std::size_t sp = id.find(' ', start);
        parts.push_back(id.substr(start, sp == std::string::npos ? sp : sp - start));
        start = sp == std::string::npos ? id.size() + 1 : sp + 1;
    }
    g.device = normalize_pci_id(parts[0]);
    if (g.device.empty() || (parts.size() != 1 && parts.size() != 3)) {
        return gen_error("GPU table: PCI id '" + id + "' is not 'DEVICE' or 'DEVICE VENDOR SUB'");
    }
    if (parts.size() == 3) {
        g.subsystem = normalize_pci_id(parts[1]) + ":" + normalize_pci_id(parts[2]);
        if (g.subsystem.size() != 9) {
            return gen_error("GPU table: PCI id '" + id + "' has a bad subsystem");
        }
    }
    g.name = row["product_names"].substr(0, row["product_names"].find(';'));
    const std::string& tags = row["first_per_branch_mainline_tags"];
    for (std::size_t start = 0; start < tags.size();) {
        std::size_t comma = tags.find(',', start);
        std::string one = tags.substr(start, comma == std::string::npos ? comma : comma - start);
        start = comma == std::string::npos ? tags.size() : comma + 1;
        auto v = Version::try_parse(one.substr(one.find(':') + 1));
        if (!v || one.rfind("R" + std::to_string(v->major()) + ":", 0) != 0) {
            return gen_error("GPU table: " + id + ": branch entry '" + one +
                             "' is not Rnnn:version");
        }
        g.first_per_branch[v->major()] = *v;
    }
    if (g.first_per_branch.empty()) {
        return gen_error("GPU table: " + id + " lists no branch");
    }
    // the lowest tag that lists it, when no mainline entry is that tag (520.56.06 for H100 PCIe)
    if (auto low = listed_driver(row["lowest_version_listing@date"])) {
        auto same = g.first_per_branch.find(low->major());
        bool mainline = same != g.first_per_branch.end() && same->second == *low;
        if (!mainline && Version::compare_numeric(*low, g.first_per_branch.begin()->second) <= 0 &&
            (same == g.first_per_branch.end() ||
             Version::compare_numeric(*low, same->second) < 0)) {
            g.off_mainline = *low;
        }
    }
    auto last = listed_driver(row["last_tag_listed"]);
    if (!last) {
        return gen_error("GPU table: " + id + " has no last_tag_listed");
    }
    g.last_listed = *last;
    g.listed_in_newest = row[newest_column] != "NO";
    return g;
}

bool same_listing(const GpuListing& a, const GpuListing& b) {
    return a.first_per_branch == b.first_per_branch && a.off_mainline == b.off_mainline &&
           a.last_listed == b.last_listed && a.listed_in_newest == b.listed_in_newest;
}

/// "Long Term Support Branch, EOL June 2026, ..." -> {kind, "2026-06"}
std::optional<DriverBranchLife> branch_life(const std::string& key, const std::string& text) {
    static const char* months[] = {"January",
                                   "February",
                                   "March",
                                   "April",
                                   "May",
                                   "June",
                                   "July",
                                   "August",
                                   "September",
                                   "October",
                                   "November",
                                   "December"};
    auto branch = Version::try_parse(key.size() > 1 && key[0] == 'R' ? key.substr(1) : "");
    auto eol = text.find("EOL ");
    if (!branch || eol == std::string::npos) {
        return std::nullopt;
    }
    DriverBranchLife life;
    life.branch = branch->major();
    life.kind = text.substr(0, text.find(','));
    std::string rest = text.substr(eol + 4);
    for (int m = 0; m < 12; ++m) {
        std::string name = months[m];
        if (rest.rfind(name + " ", 0) == 0 && rest.size() >= name.size() + 5) {
            std::string year = rest.substr(name.size() + 1, 4);
            life.end_of_life = year + "-" + (m < 9 ? "0" : "") + std::to_string(m + 1);
            return life;
        }
    }
    return std::nullopt;
}

/// Whether a product name is of a family `prefix` names: the name itself, or the name followed
/// by a space or a dash ("NVIDIA H20" covers "NVIDIA H20-3e", not "NVIDIA H200").
bool of_family(const std::string& name, const std::string& prefix) {
    return name == prefix || (name.size() > prefix.size() && name.rfind(prefix, 0) == 0 &&
                              (name[prefix.size()] == ' ' || name[prefix.size()] == '-'));
}

/// The supplement's `forward_compat` section: the data-center product families NVIDIA supports
/// CUDA forward compatibility on, by name. Marks the listings of those families.
Status mark_forward_compat(const fs::path& ref, GpuSupport& s) {
    std::error_code ec;
    fs::path file = ref / "cudaenv-supplement.json";
    if (!fs::exists(file, ec)) {
        return Ok{};
    }
    json sup = json::parse(CUDAENV_TRY(read_text_file(file)), nullptr, false);
    auto fc = sup.is_object() ? sup.find("forward_compat") : sup.end();
    if (!sup.is_object() || fc == sup.end()) {
        return Ok{};
    }
    auto families = fc->find("data_center_families");
    if (str(*fc, "source").empty() || families == fc->end() || !families->is_array()) {
        return gen_error("supplement forward_compat needs 'source' and 'data_center_families'");
    }
    s.forward_compat_source = "cudaenv-supplement.json: " + str(*fc, "source");
    for (auto& g : s.listings) {
        g.forward_compat = std::any_of(families->begin(), families->end(), [&](const json& f) {
            return f.is_string() && of_family(g.name, f.get<std::string>());
        });
    }
    return Ok{};
}

/// gpus/ in the reference: the open kernel modules' "Compatible GPUs" at every tag, by device
/// and by subsystem, and NVIDIA's architecture matrix with the branches' end of life.
Result<std::optional<GpuSupport>> gpu_support(const fs::path& ref, GenerateReport& report) {
    std::error_code ec;
    fs::path dir = ref / "gpus";
    if (!fs::is_directory(dir, ec)) {
        return std::optional<GpuSupport>{};
    }
    GpuSupport s;
    s.listings_source = "NVIDIA/open-gpu-kernel-modules README 'Compatible GPUs' at every tag "
                        "(reference gpus/gpu-first-driver*.tsv): the first mainline driver of each "
                        "branch that lists the GPU";
    auto devices = read_tsv(CUDAENV_TRY(read_text_file(dir / "gpu-first-driver.tsv")));
    auto subsystems =
        read_tsv(CUDAENV_TRY(read_text_file(dir / "gpu-first-driver-by-subsystem.tsv")));
    std::string newest_column;
    if (!devices.empty()) {
        for (const auto& [key, value] : devices.front()) {
            if (key.rfind("listed_in_newest_", 0) == 0) {
                newest_column = key;
                s.newest_driver = Version::try_parse(key.substr(17));
            }
        }
    }
    if (!s.newest_driver) {
        return gen_error("gpus/gpu-first-driver.tsv has no listed_in_newest_<driver> column");
    }
    std::map<std::string, GpuListing> by_device;
    for (auto& row : devices) {
        auto g = CUDAENV_TRY(listing_of(row, "pci_device_id", newest_column));
        by_device[g.device] = g;
        s.listings.push_back(std::move(g));
    }
    for (auto& row : subsystems) {
        if (row["first_per_branch_mainline_tags"].empty()) {
            continue; // named by off-mainline tags only (2 rows): the device's row answers
        }
        auto g = CUDAENV_TRY(listing_of(row, "pci_full_id", newest_column));
        auto dev = by_device.find(g.device);
        if (dev == by_device.end()) {
            return gen_error("GPU table: subsystem row of " + g.device + " has no device row");
        }
        // a subsystem that the device's own row already describes adds nothing
        if (!g.subsystem.empty() && !same_listing(g, dev->second)) {
            s.listings.push_back(std::move(g));
        }
    }
    std::sort(s.listings.begin(), s.listings.end(), [](const auto& a, const auto& b) {
        return std::tie(a.device, a.subsystem) < std::tie(b.device, b.subsystem);
    });
    report.gpu_listings = s.listings.size();
    CUDAENV_TRY(mark_forward_compat(ref, s));

    auto text = CUDAENV_TRY(read_text_file(dir / "arch-last-driver.json"));
    json arch = json::parse(text, nullptr, false);
    if (arch.is_discarded() || !arch.is_object()) {
        return gen_error("gpus/arch-last-driver.json is not a JSON object");
    }
    s.architectures_source = str(arch, "source");
    for (const auto& row : arch.value("rows", json::array())) {
        ArchitectureSupport a;
        a.architecture = str(row, "architecture");
        for (const auto& cc : row.value("cc", json::array())) {
            auto v = Version::try_parse(cc.get<std::string>());
            if (v && v->size() == 2) {
                a.compute_capabilities.push_back(v->major() * 10 + v->minor());
            }
        }
        std::string last = str(row, "last_driver");
        if (auto b = Version::try_parse(last.size() > 1 && last[0] == 'R' ? last.substr(1) : "")) {
            a.last_branch = b->major();
        }
        a.last_toolkit = str(row, "last_toolkit");
        s.architectures.push_back(std::move(a));
    }
    const auto& life = arch.value("driver_branch_lifecycle", json::object());
    s.branches_source = str(life, "source");
    for (const auto& [key, value] : life.items()) {
        if (!value.is_string() || key == "source") {
            continue;
        }
        auto b = branch_life(key, value.get<std::string>());
        if (!b) {
            return gen_error("gpus/arch-last-driver.json: branch " + key +
                             " has no 'EOL Month YYYY'");
        }
        s.branches.push_back(std::move(*b));
    }
    std::sort(s.branches.begin(), s.branches.end(), [](const auto& a, const auto& b) {
        return a.branch < b.branch;
    });
    return std::optional<GpuSupport>{std::move(s)};
}

Rules rules(const Facts& f) {
    Rules r;
    for (const auto& [major, spec] : f.doc["cudnn_releases"]["sublibraries"].items()) {
        auto m = Version::try_parse(major);
        if (!m) {
            continue;
        }
        for (const auto& lib : spec.value("libs", json::array())) {
            r.cudnn_sublibraries[m->major()].push_back(lib.get<std::string>());
        }
        r.cudnn_version_header[m->major()] = str(spec, "version_header");
    }
    return r;
}

std::string render(const nlohmann::ordered_json& j) {
    return j.dump(2) + "\n";
}

/// Writes `files` (name -> content) into dir and removes other *.json files there.
Status sync_dir(const fs::path& dir, const std::map<std::string, std::string>& files) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        return Error(ErrorCode::filesystem,
                     "cannot create '" + dir.string() + "': " + ec.message());
    }
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() == ".json" && !files.count(entry.path().filename().string())) {
            fs::remove(entry.path(), ec);
        }
    }
    for (const auto& [name, content] : files) {
        auto existing = read_text_file(dir / name);
        if (existing && *existing == content) {
            continue; // unchanged: leave the file alone
        }
        CUDAENV_TRY(write_file_atomic(dir / name, content));
    }
    return Ok{};
}

} // namespace

Result<GenerateReport> generate_manifests(const fs::path& ref, const fs::path& out) {
    GenerateReport report;
    std::error_code ec;
    if (!fs::is_directory(ref, ec)) {
        return gen_error("reference directory '" + ref.string() + "' not found");
    }
    auto facts = CUDAENV_TRY(load_facts(ref / "facts.json"));

    auto cuda = CUDAENV_TRY(cuda_redist_releases(ref, facts, report));
    for (auto& r : cuda_runfile_releases(facts, report)) {
        cuda.push_back(std::move(r));
    }
    std::sort(cuda.begin(), cuda.end(), [](const auto& a, const auto& b) {
        return a.version < b.version;
    });
    std::map<std::string, std::string> cuda_files;
    for (const auto& r : cuda) {
        cuda_files[r.version.str() + ".json"] = render(to_json(r));
    }
    auto cudnn = CUDAENV_TRY(cudnn_releases(ref, facts, report));
    // releases known from the opening of NVIDIA's index pages alone (generate_cudnn_excerpts)
    report.cudnn_in_part = CUDAENV_TRY(apply_cudnn_excerpts(ref, cudnn));
    report.cudnn = cudnn.size();
    std::map<std::string, std::string> cudnn_files;
    for (const auto& r : cudnn) {
        cudnn_files[r.version.str() + ".json"] = render(to_json(r));
    }
    auto tf = CUDAENV_TRY(tensorflow(facts, report));
    // Releases the registry pins by their index alone (the index is not in the reference):
    // first-class, fetched and verified at install time.
    std::vector<PinnedIndex> pinned;
    for (const auto& [kind, entries] : facts.registry) {
        for (const auto& [ver, sha] : entries) {
            auto v = Version::try_parse(ver);
            std::string path = redistrib_path(kind, ver);
            bool described = false;
            // already described in full: the same index, or the release itself
            if (kind == "cuda") {
                described = std::any_of(cuda.begin(), cuda.end(), [&](const CudaRelease& r) {
                    return (r.redistrib && r.redistrib->path == path) || (v && r.version == *v);
                });
            } else {
                described = std::any_of(cudnn.begin(), cudnn.end(), [&](const CudnnRelease& r) {
                    return std::any_of(r.redistrib.begin(),
                                       r.redistrib.end(),
                                       [&](const Artifact& a) { return a.path == path; }) ||
                           (v && v->is_prefix_of(r.version));
                });
            }
            if (v && !described && is_sha256_hex(sha)) {
                PinnedIndex p{kind, *v, Artifact{path, {}, sha, std::nullopt}, std::nullopt};
                if (kind == "cuda" && v->size() == 3) {
                    // what the facts say of the release, so it resolves like any other
                    CudaRelease r;
                    r.version = *v;
                    r.source = CudaSource::index;
                    r.redistrib = p.index;
                    if (auto it = facts.min_driver.find(*v); it != facts.min_driver.end()) {
                        r.release_date = str(it->second, "release_date");
                    }
                    apply_driver(facts, r);
                    apply_sm_and_compilers(facts, r);
                    p.release = std::move(r);
                }
                pinned.push_back(std::move(p));
            }
        }
    }
    std::sort(pinned.begin(), pinned.end(), [](const auto& a, const auto& b) {
        return a.product != b.product ? a.product < b.product : a.version < b.version;
    });
    report.index_pinned = pinned.size();
    if (auto text = read_text_file(out / "profiles.json")) {
        auto doc = CUDAENV_TRY(parse_json_text(*text, (out / "profiles.json").string()));
        auto profiles = CUDAENV_TRY(parse_profiles(doc, "profiles.json"));
        std::map<std::string, std::vector<std::string>> unplaced; // component -> releases
        for (const auto& r : cuda) {
            for (const auto& comp : r.components) {
                bool named = false;
                for (const auto& p : profiles) {
                    named =
                        named ||
                        std::find(p.components.begin(), p.components.end(), comp.name) !=
                            p.components.end() ||
                        std::find(p.exclude.begin(), p.exclude.end(), comp.name) != p.exclude.end();
                }
                if (!named) {
                    unplaced[comp.name].push_back(r.version.str());
                }
            }
        }
        for (const auto& [name, releases] : unplaced) {
            std::string list;
            for (const auto& v : releases) {
                list += (list.empty() ? "" : ", ") + v;
            }
            report.unplaced.push_back(name + " (CUDA " + list + ")");
        }
    }

    CUDAENV_TRY(sync_dir(out / "cuda", cuda_files));
    CUDAENV_TRY(sync_dir(out / "cudnn", cudnn_files));
    std::map<std::string, std::string> framework_files{{"tensorflow.json", render(to_json(tf))}};
    for (const auto& fw : CUDAENV_TRY(python_frameworks(ref, report))) {
        framework_files[fw.name + ".json"] = render(to_json(fw));
    }
    CUDAENV_TRY(sync_dir(out / "frameworks", framework_files));
    std::map<std::string, std::string> top{{"gpus.json", render(gpus_to_json(gpus(facts, report)))},
                                           {"rules.json", render(to_json(rules(facts)))},
                                           {"indexes.json", render(indexes_to_json(pinned))}};
    if (auto support = CUDAENV_TRY(gpu_support(ref, report))) {
        top["gpu-support.json"] = render(gpu_support_to_json(*support));
    }
    if (auto advisories = CUDAENV_TRY(generate_advisories(ref, report))) {
        top[k_advisories_file] = render(advisories_to_json(*advisories));
    }
    if (auto patches = CUDAENV_TRY(cublas_patches_from_reference(ref, report))) {
        top[k_cublas_file] = render(cublas_patches_to_json(*patches));
    }
    auto supplement = CUDAENV_TRY(cuda_supplement_from_reference(ref, cuda, report));
    if (supplement.announced) {
        top[k_announced_file] = render(announced_to_json(*supplement.announced));
    }
    if (supplement.driver_indexes) {
        top[k_driver_indexes_file] = render(driver_indexes_to_json(*supplement.driver_indexes));
    }
    for (const auto& [name, content] : top) {
        auto existing = read_text_file(out / name);
        if (!existing || *existing != content) {
            CUDAENV_TRY(write_file_atomic(out / name, content));
        }
    }
    return report;
}

} // namespace cudaenv::manifest
