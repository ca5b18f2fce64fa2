// The records cudaenv keeps on disk, as types with one codec (docs/store.md):
//   store/<entry>/.cudaenv-complete.json     StoreRecord    schema cudaenv.store/1
//   versions/<platform>/<name>/.cudaenv-version.json  VersionRecord  schema cudaenv.version/1
//   state.json                               State          schema cudaenv.state/1 (state.hpp)
//   pins/<hash>.json                         PinRecord      schema cudaenv.pin/1
//   indexes/trusted.json                     TrustedIndexes schema cudaenv.trusted/1
//   <mirror>/.cudaenv-mirror.json            MirrorRecord   schema cudaenv.mirror/1
// Every reader checks the schema first: another schema (a newer cudaenv wrote it), a missing
// field, a field of the wrong type or text that is not JSON is an integrity error (exit 4) that
// names the file and the field, never a default that silently changes what cudaenv does.
#pragma once

#include "../error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::store {

inline constexpr const char* k_store_schema = "cudaenv.store/1";
inline constexpr const char* k_version_schema = "cudaenv.version/1";
inline constexpr const char* k_state_schema = "cudaenv.state/1";
inline constexpr const char* k_pin_schema = "cudaenv.pin/1";
inline constexpr const char* k_trusted_schema = "cudaenv.trusted/1";
inline constexpr const char* k_mirror_schema = "cudaenv.mirror/1";

/// One entry of an extracted archive, relative to its top directory.
struct FileRecord {
    enum class Type { dir, file, symlink };
    Type type = Type::file;
    std::string path;
    std::string target;     ///< symlinks
    std::uint64_t size = 0; ///< files (a hard link: its target's; 0 in records before sha256)
    bool executable = false;
    /// files: the SHA-256 of the content, computed as the extractor wrote it; empty in a record
    /// an older cudaenv wrote (sizes only): such an entry cannot be checked file by file.
    std::string sha256;
};

/// An extracted archive in store/: what it is, where it came from, and every file it holds.
struct StoreRecord {
    std::string component; ///< "cuda_cudart", "cudnn"
    std::string version;
    std::string sha256; ///< the archive's
    std::string source; ///< the URL it was downloaded from
    std::string top;    ///< the archive's top directory
    std::uint64_t bytes = 0;
    std::vector<FileRecord> files;

    /// Every file has its SHA-256 (the record was written by a cudaenv that hashes as it
    /// extracts). False for an older record: its files can be checked by size, mode and link only.
    bool hashed() const;
};

/// One store entry a version is composed from.
struct VersionComponent {
    std::string component;
    std::string version;
    std::string sha256;
    std::string store; ///< the entry's name in store/
    /// A patch release NVIDIA ships apart from the toolkit that this component comes from in
    /// place of the release's own: "cublas 13.4.1" (`libcublas` with `install --patch cublas`).
    /// Empty: the release's own. Written only when set; a record without it is the release's.
    std::string patch;
};

/// An installed version in versions/.
struct VersionRecord {
    std::string name; ///< "11.8.0+cudnn8.6.0.163"
    std::string cuda;
    std::string cudnn;      ///< empty: none
    std::string cudnn_cuda; ///< the cuDNN build's CUDA label ("11"); empty: none
    std::string profile;
    std::string platform;
    std::uint64_t files = 0;
    std::uint64_t bytes = 0;
    std::vector<VersionComponent> components;
};

/// What the machine looked like before a switch: enough for rollback to put it back.
struct Snapshot {
    std::string global = "system"; ///< the global choice then
    std::string link_kind =
        "absent"; ///< absent, ours, foreign_link, alternatives, directory, other
    std::string link_target;
    std::optional<std::string> conf;     ///< our ld.so.conf.d file's content; none: absent
    std::optional<std::string> moved_to; ///< a real directory at the link, moved aside here
};

/// state.json: the global choice and the journal of `global`.
struct State {
    std::optional<std::string> global;  ///< none: system
    std::optional<std::string> pending; ///< a switch that started and did not finish
    std::optional<Snapshot> previous;   ///< before the last switch (rollback's target)
};

// Text <-> record. `origin` names the file in errors
// ("'/root/versions/11.8/.cudaenv-version.json'").
/// pins/<hash>.json: a project `use` pinned, so that gc keeps what its .cuda-version selects.
/// cudaenv 0.1.0 wrote `{"schema": 1, "dir": ...}`, which is read as the same record.
struct PinRecord {
    std::string dir; ///< the project folder (absolute)
};

Result<PinRecord> decode_pin_record(std::string_view text, const std::string& origin);
std::string encode(const PinRecord& r);

/// An NVIDIA index trusted without a pin (--allow-unpinned); its file is
/// indexes/<product>/redistrib_<version>.json.
struct TrustedIndex {
    std::string product; ///< cuda, cudnn
    std::string version; ///< the file's: redistrib_<version>.json (letters, digits, ".", "_", "-")
    std::string sha256;
};

/// indexes/trusted.json: every index the root trusted without a pin, by "<product>/<version>".
/// Before the schema it was that object alone (`{"cuda/12.9.1": {"sha256": ...}}`), which is
/// read as the same record.
struct TrustedIndexes {
    std::vector<TrustedIndex> indexes; ///< sorted by product, then version; each once
};

Result<TrustedIndexes> decode_trusted_indexes(std::string_view text, const std::string& origin);
std::string encode(const TrustedIndexes& r);

/// One file of a mirror, relative to its base.
struct MirrorFile {
    std::string path; ///< "cuda/redist/redistrib_11.8.0.json"
    std::string sha256;
    std::uint64_t size = 0;
    std::string what; ///< "NVIDIA's CUDA 11.8.0 index"; may be empty
};

/// <mirror>/.cudaenv-mirror.json: what `cudaenv mirror` put there (the paths are checked by the
/// mirror itself, which knows which names are its own).
struct MirrorRecord {
    std::vector<MirrorFile> files;
};

Result<MirrorRecord> decode_mirror_record(std::string_view text, const std::string& origin);
std::string encode(const MirrorRecord& r);

Result<StoreRecord> decode_store_record(std::string_view text, const std::string& origin);
std::string encode(const StoreRecord& r);
Result<VersionRecord> decode_version_record(std::string_view text, const std::string& origin);
std::string encode(const VersionRecord& r);
Result<State> decode_state(std::string_view text, const std::string& origin);
std::string encode(const State& s);

/// A store entry's or a version's record, read from its directory.
Result<StoreRecord> read_store_record(const std::filesystem::path& entry_dir);
Result<VersionRecord> read_version_record(const std::filesystem::path& version_dir);

/// Written atomically (a temporary file renamed into place) into the directory.
Status write_store_record(const std::filesystem::path& entry_dir, const StoreRecord& r);
Status write_version_record(const std::filesystem::path& version_dir, const VersionRecord& r);

} // namespace cudaenv::store
