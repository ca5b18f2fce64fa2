// NVIDIA's .run installers are makeself archives: a shell script header, then a compressed tar.
// cudaenv never runs them: it reads the header as data (how many lines it is, the payload's
// declared sizes and checksums), checks every number against the file itself, and finds the
// payload's compression from its first bytes, never from the script's text. The payload then
// goes to the same safe extractor as the redistrib archives (issue 15; this is its first part).
//
// Header generations: makeself 2.1.x (NVIDIA's CUDA 10.x and 11.x runfiles) computes the payload
// offset with `offset=`head -n N "$0" | wc -c ...``; makeself 2.2 and later write `skip="N"`.
// Both give N header lines. `filesizes="A B ..."` lists the payload's parts (one for NVIDIA's).
#pragma once

#include "../error.hpp"
#include "../sha256.hpp"
#include "extract.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::archive {

struct RunfileHeader {
    std::uint64_t header_lines = 0;
    std::uint64_t payload_offset = 0; ///< bytes: where the compressed tar starts
    std::uint64_t payload_size = 0;   ///< the sum of filesizes, equal to what follows the header
    std::vector<std::uint64_t> filesizes;
    std::string makeself_version; ///< "2.1.5", "2.4.5"; empty when the header does not say
    std::string label;
    std::string md5;    ///< the header's own MD5 of the payload; empty when it has none
    std::string crc;    ///< its CRCsum (POSIX cksum), as written
    std::string sha256; ///< its SHA (makeself 2.4+); empty or all zeros when it has none
    /// The checksums makeself declares, one per part of `filesizes`; a field the header leaves
    /// out, or zeroes (makeself --nomd5, --nocrc, no --sha256), is empty here: nothing to check.
    std::vector<std::string> part_md5;
    std::vector<std::string> part_crc; ///< decimal, as cksum prints it
    std::vector<std::string> part_sha256;
    Compression compression = Compression::none; ///< from the payload's magic bytes
};

struct RunfileLimits {
    /// More header than this is no makeself header (NVIDIA's are about 20 KiB).
    std::uint64_t max_header_bytes = 1u << 20;
    /// A payload declared larger than this is refused before anything is read.
    std::uint64_t max_payload_bytes = std::uint64_t{16} << 30;
};

/// makeself's own checksums of a payload (MD5, CRCsum, SHA: one word per part), computed as the
/// payload streams by on its way to the extractor, so the file is read once. The hashing runs on
/// a thread of its own (the extractor's decoding keeps its core; a bounded queue of copies, 16
/// MiB at most, lies between them). Fields the header leaves out or zeroes are not checked (the
/// sha256 the manifests pin is, always, before).
class PayloadChecksums {
  public:
    explicit PayloadChecksums(const RunfileHeader& header);
    ~PayloadChecksums();
    PayloadChecksums(const PayloadChecksums&) = delete;
    PayloadChecksums& operator=(const PayloadChecksums&) = delete;

    /// The next bytes of the payload, in order (copied: the caller may reuse its buffer).
    void update(const void* data, std::size_t size);

    /// After the whole payload: an integrity error (exit 4) naming the field, the part and both
    /// values for the first checksum that does not match; a payload that was not all seen is one
    /// too. `where` names the file.
    Status verify(const std::string& where);

    /// True when the header declares any checksum.
    bool any() const;

  private:
    struct Hashing; ///< the sums and the thread that computes them
    std::unique_ptr<Hashing> m_hashing;
};

/// Reads and checks the header of the runfile at `path`. Errors, each naming the file: not a
/// makeself archive (no `#!` first line, no header-length or filesizes line: unsafe_archive, exit
/// 5); a header whose numbers disagree with the file -- more header lines than it has, filesizes
/// that add up to more or less than what follows the header (the file itself is complete: its
/// sha256 was checked), a size over the limit, checksum fields that are not one well-formed
/// word per part (exit 5);
/// a payload that is neither gzip, xz nor a plain tar (exit 5); unreadable (filesystem, exit 6).
/// `where` names the file in errors (its path when empty: a download's is only its hash).
Result<RunfileHeader> read_runfile_header(const std::filesystem::path& path,
                                          const RunfileLimits& limits = {},
                                          const std::string& where = {});

/// The same checks on a header's bytes (the file's first bytes, `file_size` in all): the part
/// fuzzed and unit-tested. `where` names the file in errors.
Result<RunfileHeader> parse_runfile_header(std::string_view head,
                                           std::uint64_t file_size,
                                           const std::string& where,
                                           const RunfileLimits& limits = {});

} // namespace cudaenv::archive
