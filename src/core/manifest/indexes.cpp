#include "indexes.hpp"

#include "../fs.hpp"
#include "../sha256.hpp"
#include "../store/records.hpp"
#include "nvidia_redist.hpp"

#include <algorithm>

namespace cudaenv::manifest {

namespace fs = std::filesystem;

namespace {

fs::path trusted_dir(const fs::path& root) {
    return root / "indexes";
}

std::string file_of(const std::string& product, const std::string& version) {
    return product + "/redistrib_" + version + ".json";
}

fs::path record_path(const fs::path& root) {
    return trusted_dir(root) / "trusted.json";
}

Result<store::TrustedIndexes> read_record(const fs::path& root) {
    auto path = record_path(root);
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        return store::TrustedIndexes{};
    }
    auto text = CUDAENV_TRY(read_text_file(path));
    auto r = store::decode_trusted_indexes(text, "'" + path.string() + "'");
    if (!r) {
        return std::move(r).error().with_hint("remove it and install the unpinned releases again");
    }
    return r;
}

/// `rel` in its place in an ascending release list, replacing one of the same version.
template <typename Release> void put_release(std::vector<Release>& list, Release rel) {
    std::erase_if(list, [&](const Release& r) { return r.version == rel.version; });
    auto at = std::upper_bound(list.begin(), list.end(), rel, [](const auto& a, const auto& b) {
        return a.version < b.version;
    });
    list.insert(at, std::move(rel));
}

} // namespace

Status add_index(Catalog& cat,
                 const std::string& product,
                 const std::string& version,
                 const std::string& text,
                 const Artifact& index) {
    auto idx = CUDAENV_TRY(parse_redistrib(text, index.path));
    if (product == "cuda") {
        put_release(cat.cuda, CUDAENV_TRY(cuda_release_from_redist(idx, version, index)));
    } else {
        put_release(cat.cudnn, CUDAENV_TRY(cudnn_release_from_redist(idx, index)));
    }
    // what the index describes is no longer pinned-only
    std::erase_if(cat.pinned_indexes,
                  [&](const PinnedIndex& p) { return p.index.path == index.path; });
    return Ok{};
}

Result<Catalog> with_index(const Catalog& cat,
                           const std::string& product,
                           const std::string& version,
                           const std::string& text,
                           const Artifact& index) {
    Catalog copy = cat;
    CUDAENV_TRY(add_index(copy, product, version, text, index));
    return copy;
}

Result<std::vector<TrustedIndex>> load_trusted(const fs::path& root) {
    return CUDAENV_TRY(read_record(root)).indexes;
}

Result<Catalog> with_trusted(const Catalog& cat, const fs::path& root) {
    Catalog out = cat;
    for (const auto& t : CUDAENV_TRY(load_trusted(root))) {
        auto path = trusted_dir(root) / file_of(t.product, t.version);
        auto text = CUDAENV_TRY(read_text_file(path));
        if (sha256_hex(text) != t.sha256) {
            return Error(ErrorCode::integrity,
                         "the trusted index '" + path.string() +
                             "' no longer matches its recorded sha256 " + t.sha256);
        }
        Artifact a{redistrib_path(t.product, t.version), {}, t.sha256, text.size()};
        CUDAENV_TRY(add_index(out, t.product, t.version, text, a));
    }
    return out;
}

Status record_trusted(const fs::path& root,
                      const std::string& product,
                      const std::string& version,
                      const std::string& text) {
    auto record = CUDAENV_TRY(read_record(root));
    std::string sha = sha256_hex(text);
    auto same = [&](const TrustedIndex& t) { return t.product == product && t.version == version; };
    if (auto it = std::find_if(record.indexes.begin(), record.indexes.end(), same);
        it != record.indexes.end()) {
        if (it->sha256 == sha) {
            return Ok{};
        }
        return Error(ErrorCode::integrity,
                     "NVIDIA's index for " + product + " " + version + " now has sha256 " + sha +
                         ", but this root trusted " + it->sha256 + " for it before")
            .with_hint("an index must not change under an installed release; if NVIDIA really "
                       "republished it, remove its entry from " +
                       record_path(root).string());
    }
    CUDAENV_TRY(make_dirs(trusted_dir(root) / product));
    CUDAENV_TRY(write_file_atomic(trusted_dir(root) / file_of(product, version), text));
    record.indexes.push_back({product, version, sha});
    return write_file_atomic(record_path(root), store::encode(record));
}

} // namespace cudaenv::manifest
