// The loader cache as ldconfig prints it (`ldconfig -p`), and running ldconfig for a machine
// (with -r for a sysroot): the machine switch checks its cache through it, the doctor reads the
// loader's view from it. Every run goes through a ProcessRunner, so unit tests play ldconfig.
#pragma once

#include "../error.hpp"
#include "process.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::sys {

/// One line of `ldconfig -p`: "\tlibcudart.so.12 (libc6,x86-64) => /usr/.../libcudart.so.12".
struct LdCacheEntry {
    std::string soname;
    std::string flags; ///< "libc6,x86-64", "libc6,x86-64, OS ABI: Linux 3.2.0"
    std::string path;
};

/// The entries of `ldconfig -p` output for this machine's word size (flags naming x86-64 or
/// AArch64), in the cache's order (the loader takes the first of each SONAME). The header line,
/// 32-bit compat entries and lines of another shape are skipped. The one parser of it.
std::vector<LdCacheEntry> parse_ld_cache(std::string_view text);

/// Which ldconfig runs, for which machine, and how.
struct Ldconfig {
    std::filesystem::path path;          ///< absolute; empty: /sbin/ldconfig or /usr/sbin/ldconfig
    std::filesystem::path sysroot = "/"; ///< not "/": run with -r
    std::chrono::seconds timeout{120};   ///< a run longer than this is killed: an error
    const ProcessRunner* processes = nullptr; ///< null: for real (real_processes())
};

/// Runs ldconfig with `extra` arguments, capturing its output. An error when it cannot be started
/// or does not finish in time; a failing ldconfig is a result.
Result<ProcessResult> run_ldconfig(const Ldconfig& ldconfig, const std::vector<std::string>& extra);

/// `ldconfig -p`: the loader cache under the sysroot, as ldconfig prints it. An error when it
/// fails (with the first line it printed on stderr).
Result<std::string> print_ld_cache(const Ldconfig& ldconfig);

} // namespace cudaenv::sys
