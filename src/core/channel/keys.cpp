#include "keys.hpp"

#include "../fs.hpp"

#include <algorithm>

namespace cudaenv::channel {

namespace {

/// packaging/keys/*.pub, as text (a unit test keeps the two the same).
constexpr const char* k_shipped[] = {
    "cudaenv-ed25519-public ff7bb0950387d5020ad2087c8a260b2ec57e81bdbb0d6a7300c6c685c6a31d88 "
    "cudaenv release key 2026",
};

} // namespace

std::vector<PublicKey> shipped_keys() {
    std::vector<PublicKey> out;
    for (const char* text : k_shipped) {
        auto k = parse_public_key(text, "built in");
        if (k) { // a malformed built-in key is a build defect the unit test catches
            out.push_back(std::move(*k));
        }
    }
    return out;
}

Result<std::vector<PublicKey>> site_keys(const std::filesystem::path& sysroot) {
    namespace fs = std::filesystem;
    fs::path dir = sysroot / k_site_keys_dir;
    std::vector<fs::path> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() == ".pub") {
            files.push_back(it->path());
        }
    }
    if (ec && ec != std::errc::no_such_file_or_directory) {
        return Error(ErrorCode::usage,
                     "cannot read the site's keys in '" + printable(dir.string()) +
                         "': " + ec.message());
    }
    std::sort(files.begin(), files.end());
    std::vector<PublicKey> out;
    for (const auto& f : files) {
        auto text = read_text_file(f);
        if (!text) {
            return Error(ErrorCode::usage, std::move(text).error().message);
        }
        if (text->size() > 4096) {
            return Error(ErrorCode::usage,
                         "key file '" + printable(f.string()) + "': not a key (too long)");
        }
        out.push_back(CUDAENV_TRY(parse_public_key(*text, f.string())));
    }
    return out;
}

Result<std::vector<PublicKey>> trusted_keys(const std::filesystem::path& sysroot) {
    auto keys = shipped_keys();
    for (auto& k : CUDAENV_TRY(site_keys(sysroot))) {
        keys.push_back(std::move(k));
    }
    return keys;
}

} // namespace cudaenv::channel
