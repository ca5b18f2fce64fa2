// The dynamic loader's view of the machine, computed as the loader would and not asked of it:
// ld.so.conf and what it includes, the cache `ldconfig -p` prints (run through the config's
// ProcessRunner), the default folders, and so which file a SONAME resolves to and which copies
// it hides. Also which Debian package owns a file. Each is read once, on first use.
#pragma once

#include "../sys/ld_cache.hpp"
#include "files.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::doctor {

/// Where the dynamic loader would find a library, and what else it could have found.
struct LoaderPick {
    std::string soname;
    std::string path;                  ///< as the machine sees it; empty: not found
    std::string via;                   ///< "LD_LIBRARY_PATH", "ld.so.cache", "default directories"
    std::vector<std::string> shadowed; ///< other copies (other real files) it hides
    /// Copies in folders ld.so.conf lists that the cache does not know: ldconfig is out of date.
    std::vector<std::string> not_in_cache;
};

struct ConfEntry {
    std::string dir;  ///< a folder the loader configuration lists
    std::string file; ///< the conf file that lists it
};

using CacheEntry = sys::LdCacheEntry;

class Loader {
  public:
    /// Reads the machine through `files` for as long as it lives.
    explicit Loader(const Files& files);

    const std::vector<ConfEntry>& conf_dirs();
    const std::vector<CacheEntry>& ld_cache();
    const std::string& ld_cache_error(); ///< why the cache could not be read; empty if it was
    /// Starts `ldconfig -p` early (Answers::prefetch) for ld_cache() to take; nothing without
    /// answers or once the cache was read.
    void prefetch_ld_cache();
    LoaderPick pick(std::string_view soname);
    /// The machine's default library folders (after LD_LIBRARY_PATH and the cache).
    std::vector<std::string> default_lib_dirs() const;
    /// The Debian package that installed this file (its real file, so merged /usr names match),
    /// from dpkg's file lists; empty when none did.
    std::string package_owner(std::string_view machine_path);

  private:
    sys::Ldconfig ld_cache_command() const; ///< how `ldconfig -p` is run

    const Files& m_files;
    std::optional<std::vector<ConfEntry>> m_conf;
    std::optional<std::vector<CacheEntry>> m_ld_cache;
    std::string m_ld_cache_error;
    std::map<std::string, std::string, std::less<>> m_owners; ///< real file -> package
};

} // namespace cudaenv::doctor
