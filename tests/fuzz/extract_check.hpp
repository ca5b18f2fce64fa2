// Shared by the extraction targets (archive, selected, nested, xz): the input handed to the
// extractor from memory (a memfd: no disk write per input), a scratch destination on tmpfs when
// there is one, and the properties every extracted tree must keep.
#pragma once

#include "core/archive/extract.hpp"
#include "fuzz.hpp"

#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace cudaenv::fuzz {

/// A private scratch folder, made once: under /dev/shm when the machine has it.
inline const std::filesystem::path& scratch() {
    static const std::filesystem::path dir = [] {
        std::error_code ec;
        std::filesystem::path base =
            std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
                ? std::filesystem::path("/dev/shm")
                : std::filesystem::temp_directory_path();
        std::string tmpl = (base / "cudaenv-fuzz-XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) {
            fail("cannot create a scratch directory");
        }
        return std::filesystem::path(tmpl);
    }();
    return dir;
}

/// The bytes as a file the extractor opens by path, held in memory: /proc/self/fd/N of a memfd
/// rewritten for each input.
inline std::filesystem::path memory_file(const void* data, std::size_t size) {
    static const int fd = [] {
        int f = ::memfd_create("cudaenv-fuzz-input", MFD_CLOEXEC);
        if (f < 0) {
            fail("memfd_create failed");
        }
        return f;
    }();
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
        fail("cannot write the input to its memfd");
    }
    return "/proc/self/fd/" + std::to_string(fd);
}

/// An empty private destination for the next input.
inline std::filesystem::path fresh_dest() {
    auto dest = scratch() / "out";
    std::error_code ec;
    std::filesystem::remove_all(dest, ec);
    std::filesystem::create_directory(dest, ec);
    ::chmod(dest.c_str(), 0700);
    return dest;
}

/// Caps small enough that one input stays fast.
inline archive::Limits small_limits() {
    archive::Limits limits;
    limits.max_total_bytes = 16 << 20;
    limits.max_entry_bytes = 8 << 20;
    limits.max_entries = 4096;
    return limits;
}

/// Every path in the tree, followed the way the kernel follows links (realpath), stays inside
/// `dest`; no mode is setuid, setgid, sticky or world-writable.
inline void check_tree(const std::filesystem::path& dest) {
    char real_dest[PATH_MAX];
    require(::realpath(dest.c_str(), real_dest) != nullptr, "the destination vanished");
    std::string inside = std::string(real_dest) + "/";
    std::error_code ec;
    for (std::filesystem::recursive_directory_iterator it(dest, ec), end; !ec && it != end;
         it.increment(ec)) {
        struct stat st {};

        require(::lstat(it->path().c_str(), &st) == 0, "an entry vanished");
        require(S_ISLNK(st.st_mode) || (st.st_mode & (S_ISUID | S_ISGID | S_ISVTX | S_IWOTH)) == 0,
                "a special or world-writable mode",
                it->path().string());
        char real[PATH_MAX];
        if (::realpath(it->path().c_str(), real) != nullptr) {
            require(std::string(real).starts_with(inside) || std::string(real) == real_dest,
                    "a path resolves outside the version",
                    it->path().string() + " -> " + real);
        }
    }
}

/// An accepted extraction: every recorded path relative with no climb, the tree inside.
inline void check_extracted(const archive::Extracted& got, const std::filesystem::path& dest) {
    for (const auto& e : got.entries) {
        require(!e.path.empty() && e.path[0] != '/' && e.path != ".." &&
                    !e.path.starts_with("../") && e.path.find("/../") == std::string::npos &&
                    !e.path.ends_with("/.."),
                "an entry path with a climb",
                e.path);
    }
    check_tree(dest);
}

/// Whatever the archive held, the tree can be removed (no folder without write permission).
inline void remove_dest(const std::filesystem::path& dest) {
    std::error_code ec;
    std::filesystem::remove_all(dest, ec);
    require(!ec, "the extracted tree cannot be removed", ec.message());
}

} // namespace cudaenv::fuzz
