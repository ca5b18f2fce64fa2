#include "refresh.hpp"

#include "../fs.hpp"
#include "../manifest/nvidia_redist.hpp"
#include "../sha256.hpp"
#include "../version.hpp"
#include "cublas_index.hpp"
#include "psirt.hpp"

#include <algorithm>
#include <ctime>
#include <map>

namespace cudaenv::refresh {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

const char* Addition::kind_text() const {
    switch (kind) {
    case Kind::cuda_index:
        return "cuda-index";
    case Kind::cudnn_index:
        return "cudnn-index";
    case Kind::cublas_patch:
        return "cublas-patch";
    case Kind::bulletin:
        return "bulletin";
    case Kind::bulletin_revised:
        return "bulletin-revised";
    }
    return "?";
}

std::string advisories_text(const ojson& doc) {
    return doc.dump(1, ' ', true);
}

namespace {

constexpr const char* k_lists[] = {"driver_bulletins",
                                   "cuda_toolkit_bulletins",
                                   "container_toolkit_bulletins",
                                   "jetson_bulletins"};

bool digits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// The files `dir` holds named prefix<version>.json, by version; none when `dir` is missing.
Result<std::vector<std::pair<std::string, fs::path>>> indexes_in(const fs::path& dir) {
    std::vector<std::pair<std::string, fs::path>> out;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        return out;
    }
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (!name.starts_with("redistrib_") || !name.ends_with(".json")) {
            continue;
        }
        std::string v = name.substr(10, name.size() - 10 - 5);
        if (!Version::try_parse(v)) {
            continue;
        }
        out.emplace_back(v, it->path());
    }
    if (ec) {
        return Error(ErrorCode::filesystem, "cannot read '" + dir.string() + "': " + ec.message());
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return Version::compare_numeric(*Version::try_parse(a.first),
                                        *Version::try_parse(b.first)) < 0;
    });
    return out;
}

Error repin(const std::string& input,
            const std::string& what,
            const fs::path& ours,
            const std::string& theirs_text,
            const std::string& ours_text) {
    return Error(ErrorCode::integrity,
                 input + ": NVIDIA's index for " + what + " is not the reference's " +
                     ours.filename().string() + " (sha256 " + sha256_hex(ours_text) + " there, " +
                     sha256_hex(theirs_text) + " now)")
        .with_hint("a changed index is a repin: declare it in the manifests' repins.json and "
                   "replace the reference file by hand (docs/channel.md); nothing was written");
}

} // namespace

Result<ReferencePlan> plan_reference(const fs::path& reference, const Inputs& in) {
    ReferencePlan plan;
    fs::path adv_file = reference / "advisories.json";
    auto adv_text = CUDAENV_TRY(read_text_file(adv_file));
    ojson adv = ojson::parse(adv_text, nullptr, false);
    if (adv.is_discarded() || !adv.is_object()) {
        return Error(ErrorCode::integrity, "reference '" + adv_file.string() + "' is not JSON");
    }
    bool adv_changed = false;
    BundledCublas bundled = CUDAENV_TRY(bundled_cublas(reference));

    // NVIDIA's CUDA and cuDNN indexes, byte for byte
    for (const auto& [product, kind, label] :
         {std::tuple{"cuda", Addition::Kind::cuda_index, "CUDA"},
          std::tuple{"cudnn", Addition::Kind::cudnn_index, "cuDNN"}}) {
        if (in.nvidia.empty()) {
            break;
        }
        auto found = CUDAENV_TRY(indexes_in(in.nvidia / product / "redist"));
        for (const auto& [version, path] : found) {
            std::string input = std::string(product) + "/redist/" + path.filename().string();
            auto text = CUDAENV_TRY(read_text_file(path));
            auto idx = CUDAENV_TRY(manifest::parse_redistrib(text, input));
            if (idx.components.empty()) {
                return Error(ErrorCode::integrity, input + ": an index with no component");
            }
            std::string name = std::string(product) + "-redistrib_" + version + ".json";
            std::string what = std::string(label) + " " + version;
            std::error_code ec;
            if (fs::exists(reference / name, ec)) {
                auto ours = CUDAENV_TRY(read_text_file(reference / name));
                if (ours != text) {
                    return repin(input, what, reference / name, text, ours);
                }
                continue;
            }
            plan.copies.emplace_back(path, name);
            plan.added.push_back({kind, what, input, name});
            if (const auto* c = idx.find("libcublas"); c && kind == Addition::Kind::cuda_index) {
                bundled[version] = c->version;
            }
        }
    }

    // cuBLAS patch indexes
    if (!in.nvidia.empty()) {
        auto found = CUDAENV_TRY(indexes_in(in.nvidia / "cublas" / "redist"));
        ojson& patches = adv["cublas_patches"]["patches"];
        if (!found.empty() && !patches.is_array()) {
            return Error(ErrorCode::integrity,
                         "reference '" + adv_file.string() + "' has no cublas_patches.patches");
        }
        for (const auto& [label, path] : found) {
            std::string input = "cublas/redist/" + path.filename().string();
            std::string name = "cublas-redistrib_" + label + ".json";
            auto text = CUDAENV_TRY(read_text_file(path));
            auto entry = CUDAENV_TRY(cublas_patch_from_index(
                text,
                label,
                bundled,
                "NVIDIA's index " + std::string("compute/") + input + ", saved byte for byte as " +
                    name + " (sha256 " + sha256_hex(text) + ")"));
            const std::string wanted = label; // clang 14: a lambda cannot capture a binding
            auto known = std::find_if(patches.begin(), patches.end(), [&](const ojson& p) {
                return p.value("release_label", "") == wanted;
            });
            std::error_code ec;
            if (fs::exists(reference / name, ec)) {
                auto ours = CUDAENV_TRY(read_text_file(reference / name));
                if (ours != text) {
                    return repin(input, "cuBLAS patch " + label, reference / name, text, ours);
                }
            }
            if (known != patches.end()) {
                if (nlohmann::json(known->value("archives", ojson::object())) !=
                    nlohmann::json(entry["archives"])) {
                    return Error(ErrorCode::integrity,
                                 input + ": the archives of cuBLAS patch " + label +
                                     " are not the ones the reference's advisories.json records")
                        .with_hint("a changed index is a repin: declare it in the manifests' "
                                   "repins.json and change the reference by hand "
                                   "(docs/channel.md); nothing was written");
                }
                continue;
            }
            patches.push_back(entry);
            adv_changed = true;
            plan.copies.emplace_back(path, name);
            plan.added.push_back({Addition::Kind::cublas_patch,
                                  "cuBLAS patch " + label + " (libcublas " +
                                      entry["version"].get<std::string>() + ", for CUDA " +
                                      entry["applies_to_cuda_line"].get<std::string>() +
                                      ", inferred)",
                                  input,
                                  "advisories.json"});
        }
        std::stable_sort(patches.begin(), patches.end(), [](const ojson& a, const ojson& b) {
            auto va = Version::try_parse(a.value("version", ""));
            auto vb = Version::try_parse(b.value("version", ""));
            return va && vb && Version::compare_numeric(*va, *vb) < 0;
        });
    }

    // NVIDIA's bulletins
    if (!in.psirt.empty()) {
        std::string since;
        for (const char* list : k_lists) {
            for (const auto& b : adv.value(list, ojson::array())) {
                std::string d = b.value("initial_release_date", "");
                if (!d.empty() && (since.empty() || d < since)) {
                    since = d;
                }
            }
        }
        if (!since.empty()) {
            since = since.substr(0, 4) + "-01-01"; // the reference covers whole years
        }
        std::vector<fs::path> files;
        std::error_code ec;
        if (!fs::is_directory(in.psirt, ec)) {
            return Error(ErrorCode::usage, "'" + in.psirt.string() + "' is not a folder");
        }
        for (fs::directory_iterator y(in.psirt, ec), end; !ec && y != end; y.increment(ec)) {
            std::string year = y->path().filename().string();
            if (year.size() != 4 || !digits(year) || !y->is_directory()) {
                continue;
            }
            for (fs::directory_iterator b(y->path(), ec); !ec && b != end; b.increment(ec)) {
                std::string id = b->path().filename().string();
                fs::path csaf = b->path() / (id + ".json");
                if (digits(id) && fs::is_regular_file(csaf)) {
                    files.push_back(csaf);
                }
            }
        }
        if (ec) {
            return Error(ErrorCode::filesystem,
                         "cannot read '" + in.psirt.string() + "': " + ec.message());
        }
        std::sort(files.begin(), files.end());
        for (const auto& csaf : files) {
            std::string rel = fs::relative(csaf, in.psirt).string();
            auto text = CUDAENV_TRY(read_text_file(csaf));
            std::string source =
                "NVIDIA/product-security" +
                (in.psirt_source.empty() ? std::string() : " @ " + in.psirt_source) + ": " + rel +
                " (CSAF), converted by cudaenv __refresh";
            auto b = CUDAENV_TRY(bulletin_from_csaf(text, rel, source));
            ++plan.bulletins_seen;
            if (b.list.empty() ||
                (!since.empty() && b.entry.value("initial_release_date", "") < since)) {
                ++plan.bulletins_skipped;
                continue;
            }
            std::string what = "NVIDIA-" + b.id + " " + b.title;
            // known: the same, revised, or known in part (after the snapshot) and now whole
            bool done = false;
            for (const char* list : k_lists) {
                ojson& entries = adv[list];
                for (auto& e : entries) {
                    if (e.value("bulletin", "") != b.id) {
                        continue;
                    }
                    done = true;
                    if (b.entry["current_release_date"].get<std::string>() >
                        e.value("current_release_date", "")) {
                        e = b.entry;
                        adv_changed = true;
                        plan.added.push_back(
                            {Addition::Kind::bulletin_revised, what, rel, "advisories.json"});
                    }
                }
            }
            if (done) {
                continue;
            }
            if (auto partial = adv.find("driver_bulletins_after_snapshot");
                partial != adv.end() && partial->is_array()) {
                auto& p = *partial;
                p.erase(
                    std::remove_if(p.begin(),
                                   p.end(),
                                   [&](const ojson& e) { return e.value("bulletin", "") == b.id; }),
                    p.end());
            }
            ojson& entries = adv[b.list];
            if (!entries.is_array()) {
                entries = ojson::array();
            }
            entries.push_back(b.entry);
            std::stable_sort(entries.begin(), entries.end(), [](const ojson& x, const ojson& y) {
                return std::stoull(x.value("bulletin", "0")) <
                       std::stoull(y.value("bulletin", "0"));
            });
            adv_changed = true;
            plan.added.push_back({Addition::Kind::bulletin, what, rel, "advisories.json"});
        }
    }
    if (adv_changed) {
        plan.advisories = advisories_text(adv);
    }
    return plan;
}

Status write_reference(const fs::path& reference, const ReferencePlan& plan, const fs::path& out) {
    std::error_code ec;
    fs::copy(reference, out, fs::copy_options::recursive, ec);
    if (ec) {
        return Error(ErrorCode::filesystem,
                     "cannot copy the reference '" + reference.string() + "' to '" + out.string() +
                         "': " + ec.message());
    }
    std::string readme;
    for (const auto& [from, name] : plan.copies) {
        auto text = CUDAENV_TRY(read_text_file(from));
        CUDAENV_TRY(write_file_atomic(out / name, text));
        readme += "| `" + name + "` | " + std::to_string(text.size()) + " | " + sha256_hex(text) +
                  " | `" + from.string() + "` |\n";
    }
    if (!plan.advisories.empty()) {
        CUDAENV_TRY(write_file_atomic(out / "advisories.json", plan.advisories));
    }
    if (!readme.empty()) {
        std::time_t now = std::time(nullptr);
        char day[16];
        std::strftime(day, sizeof day, "%Y-%m-%d", std::gmtime(&now));
        std::string text;
        if (auto old = read_text_file(out / "README.md")) {
            text = *old;
        }
        text += "\n## Added by `cudaenv __refresh` on " + std::string(day) +
                "\n\nCopied byte for byte from the input folder.\n\n| File | Bytes | sha256 | "
                "Input |\n| --- | --- | --- | --- |\n" +
                readme;
        CUDAENV_TRY(write_file_atomic(out / "README.md", text));
    }
    return Ok{};
}

} // namespace cudaenv::refresh
