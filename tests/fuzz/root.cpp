// The channel's root metadata and key files (core/channel/trust, core/channel/signing): what a
// channel or a mirror serves as <channel>/root/<N>.root, and what an administrator puts in
// /etc/cudaenv/keys. The first byte picks how the rest is used:
//   0: a whole root metadata file, as fetched: read as the next version of the harness's trusted
//      root (the envelope, the old keys' signatures) and as a first root (its own signatures);
//   1: a payload signed here with the harness's root key: everything after a verifying signature
//      of the trusted root (the strict reader, the schema, key ids, roles, thresholds) meets it;
//   2: a key file's text (cudaenv-ed25519-public <hex> [comment]).
// Properties: no crash or sanitizer report; errors are one printable line; an accepted root is
// the next version, its thresholds within its roles, every key's id its own; made again from what
// it holds and signed by the same key, it opens to the same keys and thresholds.
#include "core/channel/envelope.hpp"
#include "core/channel/sets.hpp"
#include "core/channel/trust.hpp"
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

const RootMetadata& trusted() {
    static const RootMetadata r = [] {
        if (!sys::load(sys::k_crypto)) {
            fuzz::fail("libcrypto cannot be loaded");
        }
        RootMetadata t;
        t.version = 1;
        t.root.keys.push_back(*public_key_of(harness_key()));
        t.bundle = t.root;
        t.anchor = "0123456789abcdef";
        return t;
    }();
    return r;
}

std::time_t now() {
    return *parse_utc("2026-12-07T00:00:00Z");
}

void check_accepted(const RootMetadata& r) {
    fuzz::require(r.version == 2, "an accepted root is not the next version");
    for (const auto* role : {&r.root, &r.bundle}) {
        fuzz::require(role->threshold >= 1 && role->threshold <= role->keys.size(),
                      "a role's threshold is outside its keys");
    }
    auto again = make_root(r, {harness_key()});
    if (!again) {
        fuzz::fail("an accepted root cannot be made again", again.error().full_message());
    }
    auto reopened = open_root(*again, trusted(), "fuzz.root", now());
    if (!reopened) {
        fuzz::fail("a re-made root is refused", reopened.error().full_message());
    }
    auto same = [](const Role& a, const Role& b) {
        if (a.threshold != b.threshold || a.keys.size() != b.keys.size()) {
            return false;
        }
        for (std::size_t i = 0; i < a.keys.size(); ++i) {
            if (a.keys[i].raw != b.keys[i].raw) {
                return false;
            }
        }
        return true;
    };
    fuzz::require(same(reopened->root, r.root) && same(reopened->bundle, r.bundle),
                  "a re-made root holds other keys");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) {
        return 0;
    }
    trusted();
    std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 3) {
    case 0: {
        auto next = open_root(rest, trusted(), "fuzz.root", now());
        fuzz::check(next, "open_root");
        if (next) {
            check_accepted(*next);
        }
        fuzz::check(open_first_root(rest, "fuzz.root"), "open_first_root");
        break;
    }
    case 1: {
        EnvelopeKind kind{
            k_root_format, "cudaenv-root/", "root metadata", "root metadata", k_max_root_bytes, ""};
        auto bytes = seal(kind, rest, {harness_key()});
        if (!bytes) {
            return 0; // too large to seal is not a case
        }
        auto next = open_root(*bytes, trusted(), "fuzz.root", now());
        fuzz::check(next, "open_root");
        if (next) {
            check_accepted(*next);
        }
        break;
    }
    default: {
        auto key = parse_public_key(rest, "fuzz.pub");
        fuzz::check(key, "parse_public_key");
        if (key) {
            auto text = format_public_key(*key);
            auto again = parse_public_key(text, "fuzz.pub");
            fuzz::require(again && again->raw == key->raw, "a key file does not read back");
        }
        break;
    }
    }
    return 0;
}
