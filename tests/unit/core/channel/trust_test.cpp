// The channel's root of trust (channel/trust.hpp), the strict reader every signed document goes
// through (channel/strict_json.hpp), thresholds in the envelope's signature check, and the rule
// for changed pins (channel/diff.hpp).
#include "core/channel/bundle.hpp"
#include "core/channel/diff.hpp"
#include "core/channel/envelope.hpp"
#include "core/channel/strict_json.hpp"
#include "core/channel/trust.hpp"
#include "core/fs.hpp"
#include "core/manifest/model.hpp"
#include "core/sys/dynlib.hpp"
#include "core/version.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

using namespace cudaenv;
using namespace cudaenv::channel;
namespace fs = std::filesystem;

namespace {

SecretKey key(std::uint8_t n) {
    SecretKey k;
    for (std::size_t i = 0; i < k.seed.size(); ++i) {
        k.seed[i] = static_cast<std::uint8_t>(n * 31 + i);
    }
    k.comment = "key " + std::to_string(n);
    return k;
}

PublicKey pub(std::uint8_t n) {
    return *public_key_of(key(n));
}

RootMetadata root(std::uint64_t version,
                  std::vector<std::uint8_t> root_keys,
                  unsigned root_threshold,
                  std::vector<std::uint8_t> bundle_keys,
                  unsigned bundle_threshold = 1) {
    RootMetadata r;
    r.version = version;
    r.created = "2026-12-01T00:00:00Z";
    r.expires = "2027-12-01T00:00:00Z";
    for (auto k : root_keys) {
        r.root.keys.push_back(pub(k));
    }
    r.root.threshold = root_threshold;
    for (auto k : bundle_keys) {
        r.bundle.keys.push_back(pub(k));
    }
    r.bundle.threshold = bundle_threshold;
    return r;
}

std::string signed_by(const RootMetadata& r, std::vector<std::uint8_t> keys) {
    std::vector<SecretKey> secrets;
    for (auto k : keys) {
        secrets.push_back(key(k));
    }
    auto bytes = make_root(r, secrets);
    EXPECT_TRUE(bytes) << bytes.error().full_message();
    return bytes ? *bytes : "";
}

constexpr EnvelopeKind k_root_kind_for_tests{
    "cudaenv-root/1", "cudaenv-root/", "root metadata", "root metadata", 64 << 10, ""};

std::time_t now() {
    return *parse_utc("2026-12-07T00:00:00Z");
}

std::string message_of(const Error& e) {
    return e.message;
}

} // namespace

TEST(StrictJson, DepthDuplicatesAndTrailingBytesAreRefused) {
    EXPECT_TRUE(parse_strict(R"({"a": [1, {"b": 2}]})", {3}, "doc"));
    auto deep = parse_strict(R"({"a": [1, {"b": [2]}]})", {3}, "doc");
    ASSERT_FALSE(deep);
    EXPECT_EQ(deep.error().code, ErrorCode::integrity);
    EXPECT_EQ(deep.error().message, "doc: nested deeper than 3 levels");
    // two million levels: refused at the limit, not parsed
    std::string huge = std::string(2'000'000, '[') + std::string(2'000'000, ']');
    EXPECT_FALSE(parse_strict(huge, {8}, "doc"));
    auto twice = parse_strict(R"({"a": 1, "b": {"c": 1, "c": 2}})", {8}, "doc");
    ASSERT_FALSE(twice);
    EXPECT_NE(twice.error().message.find("the key 'c' is given twice"), std::string::npos);
    // the same key in two different objects is fine
    EXPECT_TRUE(parse_strict(R"({"a": {"c": 1}, "b": {"c": 2}})", {8}, "doc"));
    EXPECT_FALSE(parse_strict(R"({"a": 1} {"b": 2})", {8}, "doc"));
    EXPECT_FALSE(parse_strict("", {8}, "doc"));
    auto doc = *parse_strict(R"({"a": 1, "z": 2})", {8}, "doc");
    EXPECT_TRUE(check_fields(doc, {"a", "z"}, "doc", "it"));
    auto extra = check_fields(doc, {"a"}, "doc", "it");
    ASSERT_FALSE(extra);
    EXPECT_NE(extra.error().message.find("it has the field 'z'"), std::string::npos);
}

TEST(KeyRing, AThresholdCountsEachKeyOnce) {
    ASSERT_TRUE(sys::load(sys::k_crypto));
    KeyRing ring;
    ring.keys = {pub(1), pub(2)};
    ring.threshold = 2;
    ring.from = "the test root";
    EnvelopeKind kind = k_root_kind_for_tests;
    auto one = *seal(kind, "{}", {key(1)});
    auto env = *split_envelope(one, kind, "x");
    auto r = check_signatures(env, kind, ring, "x");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("signed by 1 of the 2 keys the test root requires"),
              std::string::npos);
    // the same key's signature twice is still one key
    auto twice = *seal(kind, "{}", {key(1), key(1)});
    EXPECT_FALSE(check_signatures(*split_envelope(twice, kind, "x"), kind, ring, "x"));
    auto both = *seal(kind, "{}", {key(2), key(1)});
    auto ok = check_signatures(*split_envelope(both, kind, "x"), kind, ring, "x");
    ASSERT_TRUE(ok) << ok.error().full_message();
    EXPECT_EQ(ok->size(), 2u);
    // a site key is enough alone; a revoked one is named as such
    KeyRing site;
    site.site = {pub(3)};
    site.revoked = {pub(4)};
    EXPECT_TRUE(
        check_signatures(*split_envelope(*seal(kind, "{}", {key(3)}), kind, "x"), kind, site, "x"));
    auto revoked =
        check_signatures(*split_envelope(*seal(kind, "{}", {key(4)}), kind, "x"), kind, site, "x");
    ASSERT_FALSE(revoked);
    EXPECT_NE(revoked.error().message.find("no longer trusts (revoked)"), std::string::npos);
}

TEST(RootMetadata, EachVersionNeedsTheOldKeysAndItsOwn) {
    ASSERT_TRUE(sys::load(sys::k_crypto));
    auto first = open_first_root(signed_by(root(1, {1}, 1, {2}), {1}), "channel.root");
    ASSERT_TRUE(first) << first.error().full_message();
    EXPECT_EQ(first->anchor.size(), 16u);
    // rotation: root keys 1 -> {1, 3} with a threshold of 2
    auto next = root(2, {1, 3}, 2, {4});
    auto v2 = open_root(signed_by(next, {1, 3}), *first, "2.root", now());
    ASSERT_TRUE(v2) << v2.error().full_message();
    EXPECT_EQ(v2->anchor, first->anchor);
    EXPECT_EQ(v2->bundle.keys.at(0).raw, pub(4).raw);
    // the old keys alone, the new keys alone, one of two: each refused
    EXPECT_FALSE(open_root(signed_by(next, {1}), *first, "2.root", now()));
    EXPECT_FALSE(open_root(signed_by(next, {3}), *first, "2.root", now()));
    // version 3 needs two of {1, 3}; key 1 alone is not enough any more
    auto v3 = root(3, {3, 5}, 1, {4});
    auto only_one = open_root(signed_by(v3, {1, 5}), *v2, "3.root", now());
    ASSERT_FALSE(only_one);
    EXPECT_NE(message_of(only_one.error()).find("signed by 1 of the 2 keys"), std::string::npos);
    EXPECT_TRUE(open_root(signed_by(v3, {1, 3, 5}), *v2, "3.root", now()));
    // a version that is not the next one
    auto skip = open_root(signed_by(root(4, {1, 3}, 2, {4}), {1, 3}), *v2, "3.root", now());
    ASSERT_FALSE(skip);
    EXPECT_NE(message_of(skip.error()).find("is version 4 where version 3 was asked for"),
              std::string::npos);
    // a key this machine revoked counts for neither role
    auto revoked = open_root(signed_by(next, {1, 3}), *first, "2.root", now(), {pub(3)});
    EXPECT_FALSE(revoked);
    // made in the future
    auto future = next;
    future.created = "2027-06-01T00:00:00Z";
    future.expires = "2027-12-01T00:00:00Z";
    auto f = open_root(signed_by(future, {1, 3}), *first, "2.root", now());
    ASSERT_FALSE(f);
    EXPECT_NE(message_of(f.error()).find("made in the future"), std::string::npos);
}

TEST(RootMetadata, WhatASignerCannotMakeIsRefusedWhenForged) {
    ASSERT_TRUE(sys::load(sys::k_crypto));
    auto first = *open_first_root(signed_by(root(1, {1}, 1, {2}), {1}), "channel.root");
    auto forged = [&](const std::string& payload) {
        return open_root(*seal(k_root_kind_for_tests, payload, {key(1)}), first, "2.root", now());
    };
    std::string id1 = pub(1).id(), hex1 = to_hex(pub(1).raw.data(), pub(1).raw.size());
    auto doc = [&](const std::string& keys,
                   const std::string& roles,
                   const std::string& more = "") {
        return R"({"schema": "cudaenv.root/1", "version": 2, "created": "2026-12-01T00:00:00Z", )"
               R"("expires": "2027-12-01T00:00:00Z", "keys": )" +
               keys + R"(, "roles": )" + roles + more + "}";
    };
    std::string keys = R"({")" + id1 + R"(": {"public": ")" + hex1 + R"("}})";
    std::string roles = R"({"root": {"keys": [")" + id1 +
                        R"("], "threshold": 1}, "bundle": {"keys": [")" + id1 +
                        R"("], "threshold": 1}})";
    ASSERT_TRUE(forged(doc(keys, roles))) << forged(doc(keys, roles)).error().full_message();
    // a key filed under another key's id
    std::string wrong_id = R"({"0000000000000000": {"public": ")" + hex1 + R"("}})";
    EXPECT_FALSE(forged(doc(wrong_id, roles)));
    // a threshold above the role's keys, or none
    auto bad_threshold = roles;
    bad_threshold.replace(bad_threshold.find("\"threshold\": 1"), 14, "\"threshold\": 2");
    EXPECT_FALSE(forged(doc(keys, bad_threshold)));
    bad_threshold.replace(bad_threshold.find("\"threshold\": 2"), 14, "\"threshold\": 0");
    EXPECT_FALSE(forged(doc(keys, bad_threshold)));
    // an unknown field, a duplicate key, a newer schema (exit 8)
    EXPECT_FALSE(forged(doc(keys, roles, R"(, "mirrors": [])")));
    EXPECT_FALSE(forged(doc(keys, roles, R"(, "version": 3)")));
    auto newer = doc(keys, roles);
    newer.replace(newer.find("cudaenv.root/1"), 14, "cudaenv.root/2");
    auto n = forged(newer);
    ASSERT_FALSE(n);
    EXPECT_EQ(n.error().code, ErrorCode::incompatible);
    // validity over 400 days
    auto longer = doc(keys, roles);
    longer.replace(longer.find("2027-12-01"), 10, "2028-12-01");
    EXPECT_FALSE(forged(longer));
}

TEST(TrustState, TheNewestRecordedRootWinsAndADamagedOneFailsClosed) {
    ASSERT_TRUE(sys::load(sys::k_crypto));
    test::TempDir tmp;
    Anchors a = anchors_for(false, tmp.path() / "sys", tmp.path() / "root");
    ASSERT_TRUE(make_dirs(a.keys_dir));
    ASSERT_TRUE(write_file_atomic(a.channel_root, signed_by(root(1, {1}, 1, {2}), {1})));
    auto t = load_trust(a);
    ASSERT_TRUE(t) << t.error().full_message();
    EXPECT_EQ(t->root.version, 1u);
    auto v2 = *open_root(signed_by(root(2, {1}, 1, {3}), {1}), t->root, "2.root", now());
    // recorded in the machine's state (the user's upstream): the user follows it
    Anchors machine = a;
    machine.state = a.upstream_states.at(0);
    ASSERT_TRUE(record_roots(machine, {v2}));
    auto again = load_trust(a);
    ASSERT_TRUE(again) << again.error().full_message();
    EXPECT_EQ(again->root.version, 2u);
    EXPECT_EQ(again->ring().keys.at(0).raw, pub(3).raw);
    // signers: the old bundle key no longer counts, the new one does, a site key does
    auto hex = [](std::uint8_t n) { return to_hex(pub(n).raw.data(), pub(n).raw.size()); };
    EXPECT_NE(again->distrust({hex(2)}), "");
    EXPECT_EQ(again->distrust({hex(3)}), "");
    EXPECT_EQ(again->distrust({}), "its signers are not recorded");
    ASSERT_TRUE(write_file_atomic(a.keys_dir / "site.pub", format_public_key(pub(5))));
    ASSERT_TRUE(write_file_atomic(a.keys_dir / "old.revoked", format_public_key(pub(3))));
    auto site = *load_trust(a);
    EXPECT_EQ(site.distrust({hex(5)}), "");
    EXPECT_EQ(site.distrust({hex(3), hex(5)}), "signed by a key this machine has revoked");
    EXPECT_NE(site.distrust_claimed({pub(3).id()}), "");
    EXPECT_EQ(site.distrust_claimed({pub(5).id()}), "");
    // a set an older cudaenv took is judged by its bundle header's ids, which it never checked
    // beyond the first that verified: a key named twice is one key, each must be enough alone
    auto two = *open_root(signed_by(root(3, {1}, 1, {6, 7}, 2), {1}), again->root, "3.root", now());
    ASSERT_TRUE(record_roots(machine, {two}));
    auto strict = *load_trust(a);
    EXPECT_NE(strict.distrust_claimed({pub(6).id(), pub(6).id()}), "");
    EXPECT_NE(strict.distrust_claimed({pub(6).id(), pub(7).id()}), "");
    EXPECT_EQ(strict.distrust({hex(6), hex(7)}), "");      // recorded signers: both verified
    EXPECT_EQ(strict.distrust_claimed({pub(5).id()}), ""); // a site key is enough alone
    EXPECT_NE(strict.distrust_claimed({}), "");
    // a damaged recorded root: an error naming the file, never a silent fall back to version 1
    auto file = recorded_roots(machine.state, v2.anchor).back().second;
    ASSERT_TRUE(write_file_atomic(file, "cudaenv-root/1\nsignature x y\n\n{"));
    auto damaged = load_trust(a);
    ASSERT_FALSE(damaged);
    EXPECT_EQ(damaged.error().code, ErrorCode::integrity);
    EXPECT_NE(damaged.error().message.find(file.string()), std::string::npos);
}

TEST(TrustState, TheFloorRisesAndCountsOnlyWhileItsSignersAreTrusted) {
    ASSERT_TRUE(sys::load(sys::k_crypto));
    test::TempDir tmp;
    Anchors a = anchors_for(false, tmp.path() / "sys", tmp.path() / "root");
    ASSERT_TRUE(make_dirs(a.keys_dir));
    ASSERT_TRUE(write_file_atomic(a.keys_dir / "site.pub", format_public_key(pub(7))));
    auto t = *load_trust(a);
    std::string seven = to_hex(pub(7).raw.data(), pub(7).raw.size());
    ASSERT_TRUE(raise_floor(t, {2026120700, "sha", {seven}, "2026-12-07T00:00:00Z", {}}));
    ASSERT_TRUE(raise_floor(t, {2026120500, "sha", {seven}, "2026-12-07T00:00:00Z", {}}));
    t = *load_trust(a);
    ASSERT_TRUE(t.floor());
    EXPECT_EQ(t.floor()->serial, 2026120700u); // never lowered
    ASSERT_TRUE(write_file_atomic(a.keys_dir / "site.revoked", format_public_key(pub(7))));
    t = *load_trust(a);
    EXPECT_FALSE(t.floor()); // its signer revoked: it holds nothing
    // and a lower floor by a trusted key replaces it
    ASSERT_TRUE(write_file_atomic(a.keys_dir / "new.pub", format_public_key(pub(8))));
    t = *load_trust(a);
    std::string eight = to_hex(pub(8).raw.data(), pub(8).raw.size());
    ASSERT_TRUE(raise_floor(t, {2026120600, "sha", {eight}, "2026-12-07T00:00:00Z", {}}));
    t = *load_trust(a);
    ASSERT_TRUE(t.floor());
    EXPECT_EQ(t.floor()->serial, 2026120600u);
}

TEST(Anchors, AnotherFirstRootIsAnotherChain) {
    ASSERT_TRUE(sys::load(sys::k_crypto));
    auto one = *open_first_root(signed_by(root(1, {1}, 1, {2}), {1}), "a.root");
    auto other = *open_first_root(signed_by(root(1, {1}, 1, {3}), {1}), "b.root");
    EXPECT_NE(one.anchor, other.anchor); // the same first root key, another statement
    EXPECT_NE(one.anchor, builtin_root().anchor);
    EXPECT_EQ(builtin_root().anchor, builtin_root().anchor);
    EXPECT_EQ(one.anchor.size(), 16u);
}

TEST(Anchors, RootsAreTheMachinesWhateverTheSysroot) {
    auto root = anchors_for(true, "/tmp/somewhere-a-caller-chose", "/tmp/r");
    EXPECT_TRUE(root.fixed);
    EXPECT_EQ(root.keys_dir, "/etc/cudaenv/keys");
    EXPECT_EQ(root.channel_root, "/etc/cudaenv/channel.root");
    EXPECT_EQ(root.state, "/var/lib/cudaenv/trust");
    EXPECT_TRUE(root.upstream_states.empty());
    auto user = anchors_for(false, "/tmp/s", "/home/u/.cudaenv");
    EXPECT_FALSE(user.fixed);
    EXPECT_EQ(user.keys_dir, "/tmp/s/etc/cudaenv/keys");
    EXPECT_EQ(user.state, "/home/u/.cudaenv/trust");
    EXPECT_EQ(user.upstream_states.at(0), "/tmp/s/var/lib/cudaenv/trust");
}

TEST(Pins, AChangedPinNeedsAChainOfDeclarations) {
    std::string a(64, 'a'), b(64, 'b'), c(64, 'c');
    std::vector<PinChange> changes{{{"cuda/x.tar.xz", "cuda 1.0.0 x", c, "CUDA 1.0.0 x"}, a, {}}};
    std::vector<Repin> repins{{"cuda/x.tar.xz", a, b, "2026-12-01", "first"},
                              {"cuda/x.tar.xz", b, c, "2026-12-05", "second"}};
    auto copy = changes;
    EXPECT_TRUE(undeclared(copy, repins).empty());
    EXPECT_EQ(copy[0].declared,
              (std::vector<std::string>{"2026-12-01: first", "2026-12-05: second"}));
    // a missing step, another path's declaration, a cycle: undeclared
    auto one = changes;
    EXPECT_EQ(undeclared(one, {repins[0]}).size(), 1u);
    auto other = changes;
    EXPECT_EQ(undeclared(other, {{"cuda/y.tar.xz", a, c, "d", "r"}}).size(), 1u);
    auto cycle = changes;
    EXPECT_EQ(
        undeclared(cycle, {{"cuda/x.tar.xz", a, b, "d", "r"}, {"cuda/x.tar.xz", b, a, "d", "r"}})
            .size(),
        1u);
    auto bad =
        parse_repins(R"({"schema": "cudaenv.manifest/1", "kind": "repins", "repins": )"
                     R"([{"path": "x", "was": "a", "now": "b", "date": "d", "reason": "r"}]})",
                     "repins.json");
    EXPECT_FALSE(bad); // not sha256 values
}

namespace {

manifest::Catalog
one_archive(const std::string& path, const std::string& url, const std::string& sha) {
    manifest::Catalog c;
    manifest::CudaRelease r;
    r.version = *Version::parse("11.8.0");
    manifest::Component comp;
    comp.name = "cuda_cudart";
    manifest::Artifact art;
    art.path = path;
    art.url = url;
    art.sha256 = sha;
    comp.platforms["linux-x86_64"] = art;
    r.components.push_back(comp);
    c.cuda.push_back(r);
    return c;
}

} // namespace

TEST(Pins, APinIsKnownByItsPlaceAndByWhatItIs) {
    std::string a(64, 'a'), e(64, 'e');
    KnownPins known;
    add_pins(known, pins_of(one_archive("cuda/redist/cudart.tar.xz", "", a)));
    // the same place, another hash
    EXPECT_EQ(pin_changes(known, one_archive("cuda/redist/cudart.tar.xz", "", e)).size(), 1u);
    // moved, or swapped for a URL elsewhere, with another hash: still the same pin
    auto moved = pin_changes(known, one_archive("cuda/redist/cudart-1.tar.xz", "", e));
    ASSERT_EQ(moved.size(), 1u);
    EXPECT_EQ(moved[0].was, a);
    EXPECT_EQ(moved[0].now.what, "cuda 11.8.0 cuda_cudart linux-x86_64");
    EXPECT_EQ(pin_changes(known, one_archive("", "https://evil.example/cudart.tar.xz", e)).size(),
              1u);
    // moved with the same hash: the bytes are the same bytes
    EXPECT_TRUE(pin_changes(known, one_archive("cuda/redist/cudart-1.tar.xz", "", a)).empty());
    // dropped by one set and added back by the next: the history still knows it
    KnownPins history = known;
    manifest::Catalog none;
    EXPECT_TRUE(pin_changes(known, none).empty());
    EXPECT_EQ(pin_changes(history, one_archive("cuda/redist/cudart.tar.xz", "", e)).size(), 1u);
    // an index is the version its file is named after, known by its index or in full
    manifest::Catalog pinned;
    manifest::PinnedIndex p;
    p.product = "cudnn";
    p.version = *Version::parse("9.7.0");
    p.index.path = "cudnn/redist/redistrib_9.7.0.json";
    p.index.sha256 = a;
    pinned.pinned_indexes.push_back(p);
    KnownPins idx;
    add_pins(idx, pins_of(pinned));
    manifest::Catalog full;
    manifest::CudnnRelease r;
    r.version = *Version::parse("9.7.0.66");
    manifest::Artifact moved_index;
    moved_index.path = "cudnn/redist/elsewhere/redistrib_9.7.0.json";
    moved_index.sha256 = e;
    r.redistrib.push_back(moved_index);
    full.cudnn.push_back(r);
    EXPECT_EQ(pin_changes(idx, full).size(), 1u);
}
