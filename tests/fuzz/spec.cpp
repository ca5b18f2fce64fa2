// What users and manifests write by hand: SPECs, versions and the relative paths URLs are built
// from. Properties: no crash; errors are one printable line; a parsed version prints to text that
// parses to the same version; join_url accepts only a path that stays under the base, with no
// encoded or literal climb.
#include "core/spec.hpp"

#include "core/manifest/codec.hpp"
#include "core/version.hpp"
#include "fuzz.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);

    auto spec = parse_spec(text, {"tf", "tensorflow", "torch"});
    fuzz::check(spec, "spec");
    if (spec) {
        fuzz::require(spec->cuda || spec->cudnn || spec->framework_version ||
                          !spec->framework.empty(),
                      "a SPEC accepted that asks for nothing",
                      text);
    }

    auto v = Version::parse(text);
    fuzz::check(v, "version");
    if (v) {
        auto again = Version::parse(v->str());
        fuzz::require(
            again && again->str() == v->str(), "a version does not print to itself", v->str());
        fuzz::require(
            Version::compare_numeric(*v, *again) == 0, "a version differs from its text", v->str());
    }

    const std::string base = "https://mirror.example/nvidia";
    auto url = manifest::join_url(base, text, "fuzz");
    fuzz::check(url, "join_url");
    if (url) {
        fuzz::require(manifest::is_safe_relative_path(text), "join_url took an unsafe path", text);
        fuzz::require(*url == base + "/" + std::string(text), "join_url changed the path", *url);
        std::string_view rel(*url);
        rel.remove_prefix(base.size());
        fuzz::require(rel.find("/../") == std::string_view::npos && !rel.ends_with("/..") &&
                          rel.find('%') == std::string_view::npos &&
                          rel.find('\\') == std::string_view::npos,
                      "a climb survived join_url",
                      rel);
    }
    if (manifest::is_safe_https_url(text)) {
        fuzz::require(text.starts_with("https://"), "a URL that is not https was accepted", text);
    }
    return 0;
}
