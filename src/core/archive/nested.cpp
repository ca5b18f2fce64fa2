// A runfile nested in a runfile's payload (CUDA 10.x: run_files/cuda-linux.*.run): its header
// read as data from the outer tar's member, its payload through the same reader and filter.
#include "extract.hpp"
#include "makeself.hpp"
#include "reader.hpp"

#include <algorithm>
#include <cstring>

namespace cudaenv::archive {

using namespace detail;

namespace {

/// The bytes of an outer archive's current member from `skip` on: first what was already read
/// (`head`), then the rest of the member's data.
struct MemberBytes {
    struct archive* outer = nullptr;
    std::string head;
    std::size_t pos = 0;

    ssize_t read(void* buf, std::size_t n) {
        if (pos < head.size()) {
            std::size_t k = std::min(n, head.size() - pos);
            std::memcpy(buf, head.data() + pos, k);
            pos += k;
            return static_cast<ssize_t>(k);
        }
        la_ssize_t got = sys::archive().read_data(outer, buf, n);
        if (got < 0) {
            errno = EIO;
            return -1;
        }
        return static_cast<ssize_t>(got);
    }
};

} // namespace

Result<Extracted> extract_nested(const fs::path& file,
                                 Slice slice,
                                 const fs::path& dest,
                                 Compression compression,
                                 const std::function<bool(std::string_view)>& pick,
                                 const MemberMap& map,
                                 const Limits& limits) {
    CUDAENV_TRY(sys::load(sys::k_archive | sys::k_crypto)); // every file is hashed as written
    std::string name = archive_name(file, slice);
    if (slice.length == 0) {
        return broken(name, "empty payload");
    }
    RangeArchive outer;
    if (auto why = outer.open(file, slice, compression)) {
        return broken(name, *why);
    }
    bool checked_format = false;
    while (true) {
        struct archive_entry* e = CUDAENV_TRY(outer.reader.next(name, checked_format));
        if (!e) {
            return Error(ErrorCode::unsafe_archive,
                         "the payload of '" + name + "' holds no installer cudaenv looks for")
                .with_hint("nothing was installed; the file or the mirror serving it is bad");
        }
        const char* raw = sys::archive().entry_pathname(e);
        std::string_view member = raw ? raw : "";
        while (member.size() >= 2 && member.substr(0, 2) == "./") {
            member.remove_prefix(2);
        }
        if (!pick(member)) {
            continue;
        }
        std::string inner_name = printable(std::string(member));
        if (sys::archive().entry_filetype(e) != AE_IFREG || sys::archive().entry_hardlink(e)) {
            return unsafe(name, inner_name, "the nested installer is not a regular file");
        }
        std::int64_t size = sys::archive().entry_size(e);
        if (size <= 0) {
            return broken(name, "'" + inner_name + "' is empty");
        }
        // its header as data, as for the outer runfile
        RunfileLimits rl;
        MemberBytes bytes{outer.reader.ra.a, std::string(), 0};
        bytes.head.resize(static_cast<std::size_t>(
            std::min<std::uint64_t>(static_cast<std::uint64_t>(size), rl.max_header_bytes + 512)));
        std::size_t got = 0;
        while (got < bytes.head.size()) {
            la_ssize_t n = sys::archive().read_data(
                outer.reader.ra.a, bytes.head.data() + got, bytes.head.size() - got);
            if (n < 0) {
                return broken(name, "'" + inner_name + "': " + outer.reader.reason());
            }
            if (n == 0) {
                break;
            }
            got += static_cast<std::size_t>(n);
        }
        bytes.head.resize(got);
        auto header = CUDAENV_TRY(parse_runfile_header(
            bytes.head, static_cast<std::uint64_t>(size), name + ": " + inner_name, rl));
        if (header.payload_offset > bytes.head.size()) {
            return unsafe(name, inner_name, "its header is longer than cudaenv reads");
        }
        bytes.pos = static_cast<std::size_t>(header.payload_offset);
        // the nested installer's own checksums, as for the outer one
        PayloadChecksums sums(header);
        auto read_inner = [&bytes, &sums](void* buf, std::size_t n) {
            ssize_t k = bytes.read(buf, n);
            if (k > 0) {
                sums.update(buf, static_cast<std::size_t>(k));
            }
            return k;
        };
        Reader inner;
        if (auto why = inner.open(read_inner, header.compression)) {
            return broken(name, inner_name + ": " + *why);
        }
        Fd root = CUDAENV_TRY(open_destination(dest));
        auto out = CUDAENV_TRY(drain(
            inner, Target{name + ": " + inner_name, "payload", root.get(), limits, &map}, dest));
        out.top.clear();
        for (std::vector<char> buf(sums.any() ? std::size_t{1} << 16 : 0); !buf.empty();) {
            ssize_t n = read_inner(buf.data(), buf.size());
            if (n < 0) {
                return broken(name, "'" + inner_name + "': " + outer.reader.reason());
            }
            if (n == 0) {
                break;
            }
        }
        CUDAENV_TRY(sums.verify(name + ": " + inner_name));
        if (auto why = outer.range.read_rest()) {
            return broken(name, *why);
        }
        return out;
    }
}

} // namespace cudaenv::archive
