// A manifests folder: its files, the frameworks in it, and the Catalog they make (codec.hpp).
#include "../fs.hpp"
#include "announced.hpp"
#include "codec.hpp"
#include "codec_fields.hpp"
#include "cublas_patches.hpp"
#include "driver_indexes.hpp"
#include "nvidia_redist.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>

namespace cudaenv::manifest {

using nlohmann::json;
using ojson = nlohmann::ordered_json;
using namespace detail;

namespace {

Result<json> load_json_file(const std::filesystem::path& file) {
    auto text = read_text_file(file);
    if (!text) {
        return Error(ErrorCode::integrity, std::move(text).error().message);
    }
    return parse_json_text(*text, file.string());
}

/// The .json files directly in dir, sorted; a missing dir is empty.
std::vector<std::filesystem::path> json_files(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() == ".json") {
            out.push_back(it->path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

template <typename T, typename F>
Status parse_releases(const ManifestFiles& files,
                      const std::string& shown,
                      std::string_view sub,
                      std::vector<T>& out,
                      F parse) {
    std::string prefix = std::string(sub) + "/";
    for (auto it = files.lower_bound(prefix); it != files.end() && it->first.rfind(prefix, 0) == 0;
         ++it) {
        std::string file = shown + "/" + it->first;
        auto doc = CUDAENV_TRY(parse_json_text(it->second, file));
        auto rel = CUDAENV_TRY(parse(doc, file));
        std::string stem = it->first.substr(prefix.size(), it->first.size() - prefix.size() - 5);
        if (rel.version.str() != stem) {
            return Error(ErrorCode::integrity,
                         "manifest '" + file + "': holds version '" + rel.version.str() +
                             "' but is named '" + stem + ".json'");
        }
        out.push_back(std::move(rel));
    }
    std::sort(out.begin(), out.end(), [](const T& a, const T& b) { return a.version < b.version; });
    return Ok{};
}

bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '+' || c == '-';
}

} // namespace

bool is_manifest_file_name(std::string_view rel) {
    auto slash = rel.find('/');
    std::string_view name = rel;
    if (slash != std::string_view::npos) {
        std::string_view dir = rel.substr(0, slash);
        if (dir != "cuda" && dir != "cudnn" && dir != "frameworks") {
            return false;
        }
        name = rel.substr(slash + 1);
    }
    if (name.size() < 6 || name.size() > 128 || name.front() == '.' ||
        name.substr(name.size() - 5) != ".json" || name == "release.json") {
        return false;
    }
    return std::all_of(name.begin(), name.end(), name_char);
}

Result<ManifestFiles> read_manifest_dir(const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    ManifestFiles out;
    for (const char* sub : {"", "cuda", "cudnn", "frameworks"}) {
        fs::path d = *sub ? dir / sub : dir;
        std::error_code ec;
        if (!fs::is_directory(d, ec)) {
            continue;
        }
        for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
            std::string rel = *sub ? std::string(sub) + "/" + it->path().filename().string()
                                   : it->path().filename().string();
            if (!is_manifest_file_name(rel) || !it->is_regular_file(ec)) {
                continue;
            }
            auto text = read_text_file(it->path());
            if (!text) {
                return Error(ErrorCode::integrity, std::move(text).error().message);
            }
            out.emplace(rel, std::move(*text));
        }
        if (ec) {
            return Error(ErrorCode::integrity, "cannot list '" + d.string() + "': " + ec.message());
        }
    }
    return out;
}

namespace {

/// Whether a framework file can be passed over when only `name` is wanted, from its first bytes:
/// the codec writes "name" and "aliases" before the releases, so a file whose stem is not the
/// name and whose whole aliases list is in its head without the name is another framework's.
/// Anything else (a hand-written file, a long head) is parsed.
bool surely_other_framework(const std::filesystem::path& file, std::string_view name) {
    if (file.stem() == name) {
        return false;
    }
    std::ifstream in(file, std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    auto key = head.find("\"aliases\"");
    auto open = key == std::string::npos ? key : head.find('[', key);
    auto close = open == std::string::npos ? open : head.find(']', open);
    auto name_key = head.find("\"name\"");
    if (close == std::string::npos || name_key == std::string::npos || name_key > key) {
        return false;
    }
    std::string quoted = "\"" + std::string(name) + "\"";
    auto name_end = head.find(',', name_key);
    return head.substr(open, close - open).find(quoted) == std::string::npos &&
           head.substr(name_key, name_end == std::string::npos ? 0 : name_end - name_key)
                   .find(quoted) == std::string::npos;
}

} // namespace

Result<std::vector<Framework>> load_frameworks(const std::filesystem::path& dir,
                                               std::string_view only) {
    std::vector<Framework> out;
    for (const auto& file : json_files(dir / "frameworks")) {
        // the files load_catalog reads, no others: the shim and the CLI see one set
        if (!is_manifest_file_name("frameworks/" + file.filename().string())) {
            continue;
        }
        if (!only.empty() && surely_other_framework(file, only)) {
            continue; // the shim asks for one framework: PyTorch's and JAX's tables are large
        }
        auto doc = CUDAENV_TRY(load_json_file(file));
        out.push_back(CUDAENV_TRY(parse_framework(doc, file.string())));
    }
    return out;
}

Result<Catalog> parse_catalog(const ManifestFiles& files, const std::string& shown) {
    Catalog c;
    CUDAENV_TRY(parse_releases(files, shown, "cuda", c.cuda, parse_cuda_release));
    CUDAENV_TRY(parse_releases(files, shown, "cudnn", c.cudnn, parse_cudnn_release));
    for (auto it = files.lower_bound("frameworks/");
         it != files.end() && it->first.rfind("frameworks/", 0) == 0;
         ++it) {
        std::string file = shown + "/" + it->first;
        auto doc = CUDAENV_TRY(parse_json_text(it->second, file));
        c.frameworks.push_back(CUDAENV_TRY(parse_framework(doc, file)));
    }
    if (c.cuda.empty()) {
        return Error(ErrorCode::integrity,
                     "manifest directory '" + shown + "' has no CUDA releases (cuda/*.json)");
    }
    auto top = [&](const char* name, bool needed) -> Result<std::optional<json>> {
        auto it = files.find(name);
        if (it == files.end()) {
            if (needed) {
                return Error(ErrorCode::integrity,
                             "manifest '" + shown + "/" + name + "': missing");
            }
            return std::optional<json>();
        }
        return std::optional<json>(CUDAENV_TRY(parse_json_text(it->second, shown + "/" + name)));
    };
    if (auto doc = CUDAENV_TRY(top("indexes.json", false))) {
        c.pinned_indexes = CUDAENV_TRY(parse_indexes(*doc, shown + "/indexes.json"));
    }
    if (auto doc = CUDAENV_TRY(top("gpus.json", false))) {
        c.gpus = CUDAENV_TRY(parse_gpus(*doc, shown + "/gpus.json"));
    }
    if (auto doc = CUDAENV_TRY(top(k_cublas_file, false))) {
        c.cublas_patches =
            CUDAENV_TRY(parse_cublas_patches(*doc, shown + "/" + std::string(k_cublas_file)));
    }
    if (auto doc = CUDAENV_TRY(top(k_announced_file, false))) {
        c.announced =
            CUDAENV_TRY(parse_announced(*doc, shown + "/" + std::string(k_announced_file)));
    }
    if (auto doc = CUDAENV_TRY(top(k_driver_indexes_file, false))) {
        c.driver_indexes = CUDAENV_TRY(
            parse_driver_indexes(*doc, shown + "/" + std::string(k_driver_indexes_file)));
    }
    auto profiles = CUDAENV_TRY(top("profiles.json", true));
    c.profiles = CUDAENV_TRY(parse_profiles(*profiles, shown + "/profiles.json"));
    auto rules = CUDAENV_TRY(top("rules.json", true));
    c.rules = CUDAENV_TRY(parse_rules(*rules, shown + "/rules.json"));
    return c;
}

Result<Catalog> load_catalog(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
        return Error(ErrorCode::integrity, "manifest directory '" + dir.string() + "' not found")
            .with_hint("set CUDAENV_MANIFESTS or --manifests to a directory of cudaenv manifests");
    }
    return parse_catalog(CUDAENV_TRY(read_manifest_dir(dir)), dir.string());
}

} // namespace cudaenv::manifest
