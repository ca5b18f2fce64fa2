#include "cublas_index.hpp"

#include "../fs.hpp"
#include "../manifest/model.hpp"
#include "../manifest/nvidia_redist.hpp"

#include <algorithm>
#include <set>

namespace cudaenv::refresh {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

/// "13.8" of a version with at least two parts.
std::string line_of(const Version& v) {
    return std::to_string(v.major()) + "." + std::to_string(v.minor());
}

bool by_version(const std::string& a, const std::string& b) {
    auto va = Version::try_parse(a);
    auto vb = Version::try_parse(b);
    return va && vb ? Version::compare_numeric(*va, *vb) < 0 : a < b;
}

} // namespace

Result<BundledCublas> bundled_cublas(const fs::path& reference) {
    BundledCublas out;
    std::error_code ec;
    for (fs::directory_iterator it(reference, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (!name.starts_with("cuda-redistrib_") || !name.ends_with(".json")) {
            continue;
        }
        std::string version = name.substr(15, name.size() - 15 - 5);
        auto text = CUDAENV_TRY(read_text_file(it->path()));
        auto idx = CUDAENV_TRY(manifest::parse_redistrib(text, it->path().string()));
        if (const auto* c = idx.find("libcublas"); c && !c->version.empty()) {
            out[version] = c->version;
        }
    }
    if (ec) {
        return Error(ErrorCode::filesystem,
                     "cannot read the reference '" + reference.string() + "': " + ec.message());
    }
    return out;
}

Result<ojson> cublas_patch_from_index(std::string_view text,
                                      const std::string& label,
                                      const BundledCublas& bundled,
                                      const std::string& source) {
    std::string shown = "cublas/redist/redistrib_" + label + ".json";
    auto bad = [&](const std::string& what) {
        return Error(ErrorCode::integrity, "cuBLAS index '" + shown + "': " + what);
    };
    auto idx = CUDAENV_TRY(manifest::parse_redistrib(text, shown));
    const auto* lib = idx.find("libcublas");
    if (!lib || idx.components.size() != 1) {
        return bad("not a cuBLAS patch index (one component, libcublas)");
    }
    if (!idx.release_label.empty() && idx.release_label != label) {
        return bad("its release_label is '" + idx.release_label + "', its file name says " + label);
    }
    auto version = Version::try_parse(lib->version);
    if (!version || version->size() < 3 || idx.release_date.empty()) {
        return bad("no libcublas version or release_date");
    }
    if (lib->cuda_variants.size() != 1) {
        return bad("one cuda_variant expected (the archives of one CUDA major)");
    }
    // the toolkit line: the CUDA releases whose bundled libcublas shares the patch's major.minor
    std::set<std::string> lines;
    for (const auto& [cuda, cublas] : bundled) {
        auto c = Version::try_parse(cublas);
        auto v = Version::try_parse(cuda);
        if (c && v && c->size() >= 2 && v->size() >= 2 && line_of(*c) == line_of(*version)) {
            lines.insert(line_of(*v));
        }
    }
    if (lines.size() != 1) {
        return Error(ErrorCode::not_found,
                     "cuBLAS patch " + label + " (libcublas " + version->str() +
                         "): which CUDA release it replaces is not known: " +
                         (lines.empty() ? "no CUDA index in the reference bundles libcublas " +
                                              line_of(*version)
                                        : std::to_string(lines.size()) +
                                              " CUDA lines bundle libcublas " + line_of(*version)))
            .with_hint("add the CUDA index that bundles it first, or write the patch into "
                       "advisories.json by hand with its source; nothing was written");
    }
    const std::string line = *lines.begin();
    std::vector<std::string> releases;
    for (const auto& [cuda, cublas] : bundled) {
        if (auto v = Version::try_parse(cuda); v && v->size() >= 2 && line_of(*v) == line) {
            releases.push_back(cuda);
        }
    }
    std::sort(releases.begin(), releases.end(), by_version);
    std::string basis;
    for (const auto& r : releases) {
        basis += (basis.empty() ? "" : "; ") + r + ": " + bundled.at(r);
    }
    // the archives as NVIDIA writes them (relative_path, sha256, md5, size), from the raw JSON
    auto raw = ojson::parse(text, nullptr, false);
    ojson archives = ojson::object();
    std::vector<std::string> platforms;
    for (const auto& [platform, unused] : raw["libcublas"].items()) {
        auto found = lib->platforms.find(platform);
        if (found == lib->platforms.end()) {
            continue; // name, license, version, cuda_variant
        }
        const auto& variants = found->second;
        auto obj = raw["libcublas"][platform];
        ojson byvariant = ojson::object();
        for (const auto& [variant, art] : variants) {
            if (variant.empty()) {
                return bad("the " + platform + " archive is not nested by cuda_variant");
            }
            auto a = obj[variant];
            ojson entry;
            entry["relative_path"] = art.relative_path;
            entry["sha256"] = art.sha256;
            if (a.contains("md5") && a["md5"].is_string()) {
                entry["md5"] = a["md5"].get<std::string>();
            }
            if (a.contains("size") && a["size"].is_string()) {
                entry["size"] = a["size"].get<std::string>();
            }
            byvariant[variant] = entry;
        }
        archives[platform] = byvariant;
        platforms.push_back(platform);
    }
    if (archives.empty()) {
        return bad("no archive");
    }
    std::string listed;
    for (const auto& p : platforms) {
        listed += (listed.empty() ? "" : ", ") + p;
    }
    ojson e;
    e["release_label"] = label;
    e["version"] = version->str();
    e["release_date"] = idx.release_date;
    e["cuda_variant"] = lib->cuda_variants;
    e["index_url"] = std::string(manifest::k_nvidia_base) + "/" + shown;
    e["applies_to_cuda_line"] = line;
    e["applies_basis"] = "INFERRED from version numbering: the toolkit line whose bundled "
                         "libcublas shares this major.minor (bundled in saved CUDA indexes: " +
                         basis + ")";
    e["fixes"] = {{"bug",
                   "NOT FOUND (NVIDIA's index does not say what a patch fixes; see "
                   "https://docs.nvidia.com/cuda/cublas-patch-release-notes/)"},
                  {"source", nullptr}};
    e["archives"] = archives;
    e["platforms_note"] = "the index lists " + listed;
    e["source"] = source;
    return e;
}

} // namespace cudaenv::refresh
