// A runfile's header, as read from a downloaded .run (issue 15). Properties: no crash; errors are
// one printable line; an accepted header places the payload inside the file, exactly filling it,
// with the sizes it declared adding up to it, and its compression is one the extractor takes.
#include "core/archive/makeself.hpp"
#include "fuzz.hpp"

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    // the file as given, and the same bytes claimed to be part of a larger file
    for (std::uint64_t file_size : {std::uint64_t{size}, std::uint64_t{size} + 4096}) {
        archive::RunfileLimits limits;
        limits.max_header_bytes = 32768;
        limits.max_payload_bytes = std::uint64_t{1} << 40;
        auto h = archive::parse_runfile_header(text, file_size, "fuzz.run", limits);
        if (!h) {
            fuzz::require_printable_error(h.error());
            continue;
        }
        fuzz::require(h->payload_offset <= size && h->payload_offset <= limits.max_header_bytes,
                      "a payload offset beyond the header",
                      text);
        fuzz::require(h->payload_offset + h->payload_size == file_size,
                      "a payload that does not fill the file",
                      text);
        fuzz::require(std::accumulate(h->filesizes.begin(), h->filesizes.end(), std::uint64_t{0}) ==
                          h->payload_size,
                      "declared sizes that do not add up",
                      text);
    }
    return 0;
}
