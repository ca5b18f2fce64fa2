// The update channel's manifests bundle (core/channel/bundle): what a network or mirror attacker
// controls. The first byte picks how the rest is used:
//   even: the rest is a whole bundle file, as fetched -- the envelope parser and the signature
//         check meet it (a signature can only verify by chance; nothing of the payload is read);
//   odd:  the rest is a payload, signed here with the harness's trusted key -- everything after a
//         verifying signature (schema, requires, expiry, files, their names) meets it.
// Properties: no crash or sanitizer report; errors are one printable line; an accepted bundle
// carries only manifest file names, and re-made from what it holds it opens to the same.
#include "core/channel/bundle.hpp"

#include "core/manifest/codec.hpp"
#include "core/sys/dynlib.hpp"
#include "fuzz.hpp"
#include "harness_key.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace cudaenv;
using namespace cudaenv::channel;

namespace {

using fuzz::harness_key;

const Trust& trust() {
    static const Trust t = [] {
        if (!sys::load(sys::k_crypto)) {
            fuzz::fail("libcrypto cannot be loaded");
        }
        Trust r;
        r.ring = KeyRing::of({*public_key_of(harness_key())});
        r.now = *parse_utc("2026-12-06T00:00:00Z");
        r.cudaenv_version = "0.1.0";
        return r;
    }();
    return t;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) {
        return 0;
    }
    std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    std::string bytes = rest;
    if (data[0] % 2 == 1) {
        std::string message = std::string(k_bundle_format) + "\n" + rest;
        auto sig = sign(harness_key(), message);
        fuzz::require(static_cast<bool>(sig), "signing failed");
        bytes = std::string(k_bundle_format) + "\nsignature " + trust().ring.keys[0].id() + " " +
                to_hex(sig->data(), sig->size()) + "\n\n" + rest;
    }
    auto b = open_bundle(bytes, trust(), "fuzz.bundle");
    fuzz::check(b, "open_bundle");
    if (!b) {
        return 0;
    }
    for (const auto& [name, text] : b->files) {
        fuzz::require(manifest::is_manifest_file_name(name),
                      "a bundle carried a file name outside "
                      "the manifests' layout",
                      name);
    }
    auto again = make_bundle(b->files, b->info, {harness_key()});
    if (!again) {
        fuzz::fail("an accepted bundle cannot be made again", again.error().full_message());
    }
    auto reopened = open_bundle(*again, trust(), "fuzz.bundle");
    if (!reopened) {
        fuzz::fail("a re-made bundle is refused", reopened.error().full_message());
    }
    fuzz::require(reopened->files == b->files && reopened->info.serial == b->info.serial,
                  "a re-made bundle holds something else");
    return 0;
}
