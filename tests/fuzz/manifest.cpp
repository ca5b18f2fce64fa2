// The manifest codec: any bytes as one of cudaenv's manifest documents (the first byte picks
// which). Properties: no crash or sanitizer report; errors are one printable line; whatever is
// accepted encodes to a document the codec accepts again and that encodes to the same bytes.
#include "core/manifest/advisories.hpp"
#include "core/manifest/codec.hpp"
#include "core/manifest/cublas_patches.hpp"
#include "fuzz.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

using namespace cudaenv;
using namespace cudaenv::manifest;

namespace {

template <typename Parse, typename Encode>
void round_trip(const nlohmann::json& doc, Parse parse, Encode encode) {
    auto first = parse(doc, "fuzz.json");
    fuzz::check(first, "parse");
    if (!first) {
        return;
    }
    std::string once = encode(*first).dump();
    auto again = parse(nlohmann::json::parse(once), "fuzz.json");
    if (!again) {
        fuzz::fail("an accepted document re-encodes to one the codec refuses",
                   again.error().full_message() + " in " + once);
    }
    fuzz::require(encode(*again).dump() == once, "encoding is not stable", once);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) {
        return 0;
    }
    std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    auto doc = parse_json_text(text, "fuzz.json");
    fuzz::check(doc, "json");
    if (!doc) {
        return 0;
    }
    auto enc = [](const auto& v) { return to_json(v); };
    switch (data[0] % 9) {
    case 0:
        round_trip(*doc, parse_cuda_release, enc);
        break;
    case 1:
        round_trip(*doc, parse_cudnn_release, enc);
        break;
    case 2:
        round_trip(*doc, parse_framework, enc);
        break;
    case 3:
        round_trip(*doc, parse_gpus, gpus_to_json);
        break;
    case 4:
        round_trip(*doc, parse_profiles, profiles_to_json);
        break;
    case 5:
        round_trip(*doc, parse_rules, enc);
        break;
    case 6:
        round_trip(*doc, parse_indexes, indexes_to_json);
        break;
    case 7:
        round_trip(*doc, parse_advisories, advisories_to_json);
        break;
    default:
        round_trip(*doc, parse_cublas_patches, cublas_patches_to_json);
        break;
    }
    return 0;
}
