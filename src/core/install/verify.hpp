// Is an installed version still what was installed? (docs/store.md, "Checking what is installed")
//
// A version's files are hard links to the store's objects, published read-only; the store
// entry's record lists every file with its size, mode and SHA-256. A version is checked against
// the records of the entries it was composed from, path by path, as compose_version lays them
// out (version_tree): every file still the store's object (the same inode), of the recorded size
// and mode, not modified since the record was written; every link pointing where it did; nothing
// added. `Depth::content` also re-hashes every file (each object once, however many versions
// share it). What the check finds is reported, never mended here: install repairs
// (install.hpp, Options::repair).
#pragma once

#include "../error.hpp"
#include "../store/root.hpp"
#include "../sys/platform.hpp"

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace cudaenv::install {

/// How much a check reads: metadata (lstat of every file and its store object: type, inode,
/// size, mode, modification time against the store record's), or content too (every object
/// re-hashed against its recorded SHA-256).
enum class Depth { metadata, content };

/// One thing of a version that is not as it was installed.
struct Damage {
    enum class Kind {
        modified, ///< content other than recorded (or, without re-hashing, written after install)
        size,     ///< size other than recorded
        missing,  ///< gone from the version (or its object from the store)
        mode,     ///< mode other than recorded: writable, or the execute bit changed
        replaced, ///< another file (not the store's object), or another kind of thing
        added,    ///< in the version, but not put there by cudaenv
        link,     ///< a link pointing elsewhere than it did
        store,    ///< the store entry itself: missing, its record damaged, another archive's
    };
    Kind kind = Kind::modified;
    std::string path;  ///< in the version ("lib64/libcudart_static.a"); the record for `store`
    std::string entry; ///< the store entry it comes from; empty: none (added, cudaenv's own)
    std::string what;  ///< one line: "content changed: sha256 1a2b..., recorded 3c4d..."
    /// The store's object is what changed, not only the version's path: every version that
    /// shares it has the same damage, and repairing it means extracting the entry again.
    bool in_store = false;
};

/// "modified", "size", ...: the names `verify --json` uses.
const char* to_string(Damage::Kind k);

struct VersionCheck {
    std::string version;
    std::filesystem::path prefix;
    std::filesystem::path root; ///< the root it lives in
    bool upstream = false;      ///< in an upstream (machine-wide) root: read-only here
    std::string profile;        ///< from its record; empty when the record is unreadable
    std::string platform;
    std::vector<Damage> damage; ///< in version path order (store-level ones first)
    /// Store entries whose records an older cudaenv wrote, without per-file SHA-256: their files
    /// are checked by type, inode, size and mode only.
    std::vector<std::string> unhashed;
    std::uint64_t files = 0;        ///< files checked
    std::uint64_t bytes_hashed = 0; ///< bytes read to re-hash (content); shared objects once

    bool intact() const { return damage.empty(); }

    /// The store entries whose own objects or records are damaged.
    std::set<std::string> damaged_entries() const;
};

/// The content hashes of one run, by the file's identity (device, inode): an object several
/// versions share is read once. Thread-safe.
class HashCache {
  public:
    /// The SHA-256 of the regular file at `path` (never through a link) and its size; computed
    /// once per identity.
    Result<std::pair<std::string, std::uint64_t>>
    hash(const std::filesystem::path& path, dev_t dev, ino_t ino, std::uint64_t& read_now);

  private:
    std::mutex m_mu;
    std::map<std::pair<dev_t, ino_t>, std::pair<std::string, std::uint64_t>> m_done;
};

/// Checks the installed version `name` of `root` (or of an upstream: where root.version_dir
/// finds it). `jobs` files are re-hashed at once (content). A version whose own record is
/// damaged is one `store` damage on that record. Errors: not_found (no such version).
Result<VersionCheck> check_version(const store::Root& root,
                                   const std::string& name,
                                   Depth depth,
                                   unsigned jobs = 1,
                                   HashCache* cache = nullptr);

/// The command that repairs a checked version: `cudaenv install --repair VERSION`, with its
/// recorded profile and platform where they are not the defaults (a version installed with
/// --compat keeps it by itself), `sudo` first for a version of an upstream root. The default
/// platform is the one `host` takes for the version's CUDA release (sys::platform_for); null:
/// this machine as uname and / say.
std::string repair_command(const VersionCheck& check, const sys::HostMachine* host = nullptr);

} // namespace cudaenv::install
