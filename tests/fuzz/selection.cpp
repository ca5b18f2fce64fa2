// Files cudaenv reads at every prompt and every shim call: .cuda-version, the requirement files
// that pin TensorFlow, and the machine's /etc/cudaenv/config (whose root, mirror and manifests must
// come out absolute, http(s) and free of control bytes, or be refused). Properties: no crash;
// errors are one printable line; a name taken from .cuda-version is plain version text (no NUL, no
// control byte, no separator, never
// "." or ".."), so it cannot select versions/ itself or a path outside it.
#include "core/activate/selection.hpp"

#include "core/activate/bridges.hpp"
#include "core/config.hpp"
#include "fuzz.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);

    auto cfg = parse_system_config(text, "/etc/cudaenv/config");
    fuzz::check(cfg, "config");
    if (cfg) {
        auto plain = [](const std::string& v) {
            for (char ch : v) {
                auto c = static_cast<unsigned char>(ch);
                if (c < 0x20 || c == 0x7f) {
                    return false;
                }
            }
            return !v.empty();
        };
        for (const auto* path : {&cfg->root, &cfg->manifests}) {
            if (*path) {
                fuzz::require(plain(**path) && (*path)->front() == '/',
                              "a config path that is relative or has control bytes",
                              **path);
            }
        }
        if (cfg->mirror) {
            fuzz::require(plain(*cfg->mirror) && (cfg->mirror->rfind("https://", 0) == 0 ||
                                                  cfg->mirror->rfind("http://", 0) == 0),
                          "a config mirror that is not http(s) or has control bytes",
                          *cfg->mirror);
        }
    }

    auto written = activate::parse_version_file(text, "'/p/.cuda-version'");
    fuzz::check(written, ".cuda-version");
    if (written) {
        const std::string& w = *written;
        fuzz::require(!w.empty() && w != "." && w != "..", "a name that is a directory", w);
        for (char ch : w) {
            auto c = static_cast<unsigned char>(ch);
            fuzz::require(c > 0x20 && c < 0x7f && c != '/' && c != '\\',
                          "a selected name with a separator or control byte",
                          w);
        }
    }

    for (std::string_view name : {"tensorflow", "torch", "jax"}) {
        std::size_t line = 0;
        if (auto pin = activate::parse_requirement_pin(text, name, &line)) {
            fuzz::require(!pin->str().empty(), "an empty pin");
            fuzz::require(line >= 1, "a pin without its line");
        }
    }

    // .cuda-version's target lines (env --for): compute capabilities in range, sorted, unique
    auto target = activate::parse_target(text, "'/p/.cuda-version'");
    fuzz::check(target, ".cuda-version target");
    if (target) {
        for (std::size_t i = 0; i < target->sms.size(); ++i) {
            fuzz::require(target->sms[i] >= 30 && target->sms[i] <= 199, "an sm out of range");
            fuzz::require(i == 0 || target->sms[i - 1] < target->sms[i], "sms not sorted/unique");
        }
    }
    return 0;
}
