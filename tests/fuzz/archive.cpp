// The archive entry filter and writer: tar bytes in (the filter is the same for every
// compression), read from memory. Properties: no crash; errors are one printable line; after an
// accepted archive, every path in the tree, followed the way the kernel follows links (realpath),
// stays inside the destination, no mode is setuid, setgid, sticky or world-writable, and every
// entry's recorded path is relative with no climb.
#include "extract_check.hpp"

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto in = fuzz::memory_file(data, size);
    auto dest = fuzz::fresh_dest();
    auto got = archive::extract(in, dest, archive::Compression::none, "", fuzz::small_limits());
    fuzz::check(got, "extract");
    if (got) {
        fuzz::check_extracted(*got, dest);
    }
    fuzz::remove_dest(dest);
    return 0;
}
