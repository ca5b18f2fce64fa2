// The xz path (NVIDIA's .tar.xz: cudaenv's own streaming liblzma decoder under the entry filter).
// The first input byte picks what the rest is: even, tar bytes this harness compresses with xz
// (so the filter behind a valid stream is reached); odd, raw bytes given to the decoder as they
// are (corrupt and hostile streams: truncation, concatenation, checks, a dictionary beyond the
// memory limit). Properties: those of every extraction (extract_check.hpp).
#include "extract_check.hpp"

#include <lzma.h>

#include <vector>

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::uint8_t* body = data + 1;
    std::size_t n = size - 1;
    std::vector<std::uint8_t> xz;
    if ((data[0] & 1u) == 0) {
        xz.resize(lzma_stream_buffer_bound(n));
        std::size_t out = 0;
        if (lzma_easy_buffer_encode(
                0, LZMA_CHECK_CRC64, nullptr, body, n, xz.data(), &out, xz.size()) != LZMA_OK) {
            fuzz::fail("xz could not compress the input");
        }
        xz.resize(out);
        body = xz.data();
        n = xz.size();
    }
    auto in = fuzz::memory_file(body, n);
    auto dest = fuzz::fresh_dest();
    auto got = archive::extract(in, dest, archive::Compression::xz, "", fuzz::small_limits());
    fuzz::check(got, "extract (xz)");
    if (got) {
        fuzz::check_extracted(*got, dest);
    }
    fuzz::remove_dest(dest);
    return 0;
}
