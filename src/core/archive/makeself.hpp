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
#include "extract.hpp"

#include <cstdint>
#include <filesystem>
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
    Compression compression = Compression::none; ///< from the payload's magic bytes
};

struct RunfileLimits {
    /// More header than this is no makeself header (NVIDIA's are about 20 KiB).
    std::uint64_t max_header_bytes = 1u << 20;
    /// A payload declared larger than this is refused before anything is read.
    std::uint64_t max_payload_bytes = std::uint64_t{16} << 30;
};

/// Reads and checks the header of the runfile at `path`. Errors, each naming the file: not a
/// makeself archive (no `#!` first line, no header-length or filesizes line: unsafe_archive, exit
/// 5); a header whose numbers disagree with the file -- more header lines than it has, filesizes
/// that add up to more or less than what follows the header, a size over the limit (exit 5);
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
