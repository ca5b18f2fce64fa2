#include "extract.hpp"

#include "reader.hpp"

namespace cudaenv::archive {

using namespace detail;

std::optional<Compression> compression_for(const std::string& path) {
    auto ends = [&](std::string_view s) {
        return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
    };
    if (ends(".tar.xz")) {
        return Compression::xz;
    }
    if (ends(".tgz") || ends(".tar.gz")) {
        return Compression::gzip;
    }
    return std::nullopt;
}

namespace {

Result<Extracted> run(const fs::path& path,
                      Slice slice,
                      const fs::path& dest,
                      Compression compression,
                      const std::string& expected_top,
                      const MemberMap* map,
                      const Limits& limits) {
    // libcrypto too: every file's SHA-256 is computed as it is written
    CUDAENV_TRY(sys::load(sys::k_archive | sys::k_crypto));
    std::string name = archive_name(path, slice);
    RangeArchive in;
    if (auto why = in.open(path, slice, compression)) {
        return broken(name, *why);
    }
    Fd root = CUDAENV_TRY(open_destination(dest));
    auto out =
        CUDAENV_TRY(drain(in.reader, Target{name, expected_top, root.get(), limits, map}, dest));
    if (auto why = in.range.read_rest()) {
        return broken(name, *why);
    }
    return out;
}

} // namespace

Result<Extracted> extract(const fs::path& path,
                          const fs::path& dest,
                          Compression compression,
                          const std::string& expected_top,
                          const Limits& limits) {
    return run(path, Slice{}, dest, compression, expected_top, nullptr, limits);
}

Result<Extracted> extract_selected(const fs::path& file,
                                   Slice slice,
                                   const fs::path& dest,
                                   Compression compression,
                                   const MemberMap& map,
                                   const Limits& limits) {
    if (slice.length == 0) {
        return broken(archive_name(file, slice), "empty payload");
    }
    auto x = CUDAENV_TRY(run(file, slice, dest, compression, "payload", &map, limits));
    x.top.clear();
    return x;
}

} // namespace cudaenv::archive
