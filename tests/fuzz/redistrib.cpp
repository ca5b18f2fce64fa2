// NVIDIA's redistrib index parser and the releases made from an index. Properties: no crash;
// errors are one printable line; a release made from any index holds only safe relative paths and
// sha256 digests, and is a document the manifest codec accepts.
#include "core/manifest/codec.hpp"
#include "core/manifest/model.hpp"
#include "core/manifest/nvidia_redist.hpp"
#include "fuzz.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>

using namespace cudaenv;
using namespace cudaenv::manifest;

namespace {

void require_safe(const Artifact& a) {
    if (!a.path.empty()) {
        fuzz::require(is_safe_relative_path(a.path), "an unsafe path reached the model", a.path);
    }
    fuzz::require(
        a.sha256.empty() || is_sha256_hex(a.sha256), "a digest that is not sha256 hex", a.sha256);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto idx = parse_redistrib(text, "redistrib_fuzz.json");
    fuzz::check(idx, "index");
    if (!idx) {
        return 0;
    }
    Artifact self{"cuda/redist/redistrib_12.4.1.json", "", std::string(64, 'a'), size};
    auto cuda = cuda_release_from_redist(*idx, "12.4.1", self);
    fuzz::check(cuda, "cuda release");
    if (cuda) {
        for (const auto& c : cuda->components) {
            for (const auto& [platform, a] : c.platforms) {
                require_safe(a);
            }
        }
        auto again = parse_cuda_release(nlohmann::json::parse(to_json(*cuda).dump()), "made.json");
        if (!again) {
            fuzz::fail("a release made from an index is refused by the codec",
                       again.error().full_message());
        }
    }
    auto cudnn = cudnn_release_from_redist(*idx, self);
    fuzz::check(cudnn, "cudnn release");
    if (cudnn) {
        for (const auto& b : cudnn->builds) {
            for (const auto& [platform, a] : b.platforms) {
                require_safe(a);
            }
        }
        auto again =
            parse_cudnn_release(nlohmann::json::parse(to_json(*cudnn).dump()), "made.json");
        if (!again) {
            fuzz::fail("a cuDNN release made from an index is refused by the codec",
                       again.error().full_message());
        }
    }
    return 0;
}
