// The dynamic section of an ELF shared object, read as data with pread (a 1 GB libtorch_cuda.so
// costs a few small reads): what it NEEDS, its SONAME, and where it tells the loader to look
// (DT_RPATH, searched before LD_LIBRARY_PATH, or DT_RUNPATH, searched after it; ld.so(8)).
// 64-bit little-endian objects only (x86_64, aarch64); anything else, or a malformed one, is none.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::sys {

struct ElfDynamic {
    std::string soname;
    std::vector<std::string> needed;
    std::vector<std::string> rpath;   ///< DT_RPATH, split at ':' ($ORIGIN not expanded)
    std::vector<std::string> runpath; ///< DT_RUNPATH, likewise
};

std::optional<ElfDynamic> read_elf_dynamic(const std::filesystem::path& file);

/// The same from bytes in memory (the fuzz target's way in).
std::optional<ElfDynamic> parse_elf_dynamic(std::string_view bytes);

/// "$ORIGIN/../../nvidia/cudnn/lib" with the object's folder for $ORIGIN / ${ORIGIN}.
std::string expand_origin(const std::string& entry, const std::string& origin_dir);

} // namespace cudaenv::sys
