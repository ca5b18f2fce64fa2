// A runfile nested in a payload (CUDA 10.0: run_files/cuda-linux.*.run inside the outer tar):
// the outer tar's bytes in, from memory; the first member named *.run is read as a makeself
// archive from the stream (its header parsed as data, its own checksums checked) and every
// member of its payload is taken. Properties: those of every extraction (extract_check.hpp);
// on success the tap saw the whole outer payload, once (the rest read after the inner one).
#include "extract_check.hpp"

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto in = fuzz::memory_file(data, size);
    auto dest = fuzz::fresh_dest();
    auto pick = [](std::string_view name) {
        return name.size() > 4 && name.substr(name.size() - 4) == ".run";
    };
    archive::MemberMap all = [](std::string_view name) -> std::optional<std::string> {
        return std::string(name);
    };
    std::uint64_t tapped = 0;
    auto got = archive::extract_nested(
        in,
        archive::Slice{0, size, "fuzz.run", [&tapped](const void*, std::size_t n) { tapped += n; }},
        dest,
        archive::Compression::none,
        pick,
        all,
        fuzz::small_limits());
    fuzz::check(got, "extract_nested");
    if (got) {
        fuzz::check_extracted(*got, dest);
        fuzz::require(tapped == size, "the tap did not see the whole outer payload once");
    }
    fuzz::remove_dest(dest);
    return 0;
}
