// The archive entry filter and writer: tar bytes in (the filter is the same for every
// compression). Properties: no crash; errors are one printable line; after an accepted archive,
// every path in the tree, followed the way the kernel follows links (realpath), stays inside the
// destination, no mode is setuid, setgid, sticky or world-writable, and every entry's recorded path
// is relative with no climb.
#include "core/archive/extract.hpp"
#include "fuzz.hpp"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

using namespace cudaenv;
namespace fs = std::filesystem;

namespace {

const fs::path& scratch() {
    static const fs::path dir = [] {
        std::string tmpl = (fs::temp_directory_path() / "cudaenv-fuzz-XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) {
            fuzz::fail("cannot create a scratch directory");
        }
        return fs::path(tmpl);
    }();
    return dir;
}

void check_tree(const fs::path& dest) {
    char real_dest[PATH_MAX];
    fuzz::require(::realpath(dest.c_str(), real_dest) != nullptr, "the destination vanished");
    std::string inside = std::string(real_dest) + "/";
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dest, ec), end; !ec && it != end; it.increment(ec)) {
        struct stat st {};

        fuzz::require(::lstat(it->path().c_str(), &st) == 0, "an entry vanished");
        fuzz::require(S_ISLNK(st.st_mode) ||
                          (st.st_mode & (S_ISUID | S_ISGID | S_ISVTX | S_IWOTH)) == 0,
                      "a special or world-writable mode",
                      it->path().string());
        char real[PATH_MAX];
        if (::realpath(it->path().c_str(), real) != nullptr) {
            fuzz::require(std::string(real).starts_with(inside) || std::string(real) == real_dest,
                          "a path resolves outside the version",
                          it->path().string() + " -> " + real);
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fs::path in = scratch() / "in.tar";
    fs::path dest = scratch() / "out";
    {
        std::ofstream f(in, std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    std::error_code ec;
    fs::remove_all(dest, ec);
    fs::create_directory(dest, ec);
    ::chmod(dest.c_str(), 0700);
    archive::Limits limits;
    limits.max_total_bytes = 16 << 20;
    limits.max_entry_bytes = 8 << 20;
    limits.max_entries = 4096;
    auto got = archive::extract(in, dest, archive::Compression::none, "", limits);
    fuzz::check(got, "extract");
    if (got) {
        for (const auto& e : got->entries) {
            fuzz::require(!e.path.empty() && e.path[0] != '/' && e.path != ".." &&
                              !e.path.starts_with("../") &&
                              e.path.find("/../") == std::string::npos && !e.path.ends_with("/.."),
                          "an entry path with a climb",
                          e.path);
        }
        check_tree(dest);
    }
    // Whatever the archive held, it can be removed (no directory without write permission).
    fs::remove_all(dest, ec);
    fuzz::require(!ec, "the extracted tree cannot be removed", ec.message());
    return 0;
}
