// Selected extraction (a CUDA 11.x runfile's payload: builds/<component>/ taken, the rest read
// past): tar bytes behind a few bytes that are not the payload's (the first input byte says how
// many, 0-15), extracted from a Slice through a MemberMap that takes two components and renames
// their files, with a tap. Properties: those of every extraction (extract_check.hpp); bytes
// before the slice are never read; on success the tap saw exactly the slice, once.
#include "extract_check.hpp"

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    std::size_t skip = std::min<std::size_t>(data[0] & 15u, size - 1);
    auto in = fuzz::memory_file(data + 1, size - 1);
    auto dest = fuzz::fresh_dest();
    archive::MemberMap map = [](std::string_view name) -> std::optional<std::string> {
        for (std::string_view folder : {"builds/cuda_cudart/", "builds/libcublas/"}) {
            if (name.substr(0, folder.size()) == folder) {
                auto rest = name.substr(folder.size());
                if (rest.substr(0, 24) == "targets/x86_64-linux/lib") {
                    return "lib64" + std::string(rest.substr(24));
                }
                return std::string(rest);
            }
        }
        return std::nullopt;
    };
    std::uint64_t tapped = 0;
    archive::Slice slice{
        skip, size - 1 - skip, "fuzz.run", [&tapped](const void*, std::size_t n) { tapped += n; }};
    auto got = archive::extract_selected(
        in, slice, dest, archive::Compression::none, map, fuzz::small_limits());
    fuzz::check(got, "extract_selected");
    if (got) {
        fuzz::check_extracted(*got, dest);
        fuzz::require(tapped == size - 1 - skip, "the tap did not see the whole slice once");
    }
    fuzz::remove_dest(dest);
    return 0;
}
