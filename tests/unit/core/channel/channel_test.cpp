// The update channel's pieces: Ed25519 through libcrypto (against RFC 8032's vectors), the bundle
// envelope and its checks, and which manifests set is in use.
#include "core/channel/bundle.hpp"
#include "core/channel/diff.hpp"
#include "core/channel/keys.hpp"
#include "core/channel/sets.hpp"
#include "core/channel/signing.hpp"
#include "core/fs.hpp"
#include "core/sys/dynlib.hpp"
#include "support/catalogs.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace cudaenv;
using test::ver;
using namespace cudaenv::channel;
namespace fs = std::filesystem;

namespace {

SecretKey key_from_hex(const char* hex) {
    SecretKey k;
    EXPECT_TRUE(parse_hex(hex, k.seed.data(), k.seed.size()));
    return k;
}

std::map<std::string, std::string> minimal_files() {
    return {{"cuda/12.4.0.json", "{}"}, {"profiles.json", "{}"}, {"rules.json", "{}"}};
}

BundleInfo info(std::uint64_t serial = 7) {
    BundleInfo i;
    i.serial = serial;
    i.created = "2026-12-01T00:00:00Z";
    i.expires = "2027-03-01T00:00:00Z";
    i.requires_version = "0.1.0";
    return i;
}

Trust trust_of(const SecretKey& k) {
    Trust t;
    t.ring = KeyRing::of({*public_key_of(k)});
    t.now = *parse_utc("2026-12-06T00:00:00Z");
    t.cudaenv_version = "0.1.0";
    return t;
}

const char* k_rfc_secret = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";

} // namespace

TEST(Signing, MatchesRfc8032TestVector1) {
    ASSERT_TRUE(sys::load(sys::k_crypto));
    auto k = key_from_hex(k_rfc_secret);
    auto pub = public_key_of(k);
    ASSERT_TRUE(pub);
    EXPECT_EQ(to_hex(pub->raw.data(), pub->raw.size()),
              "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
    auto sig = sign(k, "");
    ASSERT_TRUE(sig);
    EXPECT_EQ(to_hex(sig->data(), sig->size()),
              "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bac"
              "c61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
    EXPECT_TRUE(*verify(*pub, "", *sig));
    EXPECT_FALSE(*verify(*pub, "x", *sig));
    auto bent = *sig;
    bent[10] ^= 1;
    EXPECT_FALSE(*verify(*pub, "", bent));
}

TEST(Signing, KeyFilesRoundTripAndRefuseWhatIsNotAKey) {
    ASSERT_TRUE(sys::load(sys::k_crypto));
    auto k = key_from_hex(k_rfc_secret);
    k.comment = "release key";
    auto text = format_secret_key(k);
    auto back = parse_secret_key(text, "s");
    ASSERT_TRUE(back);
    EXPECT_EQ(back->seed, k.seed);
    auto pub = *public_key_of(k);
    auto pub_back = parse_public_key(format_public_key(pub), "p");
    ASSERT_TRUE(pub_back);
    EXPECT_EQ(pub_back->raw, pub.raw);
    EXPECT_EQ(pub_back->comment, "release key");
    for (const char* bad :
         {"",
          "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 admin",
          "cudaenv-ed25519-public 1234",
          "cudaenv-ed25519-public d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f70751zz",
          "cudaenv-ed25519-public "
          "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a\nsecond line"}) {
        auto r = parse_public_key(bad, "f.pub");
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().code, ErrorCode::usage);
    }
    // a secret key is not a public key
    EXPECT_FALSE(parse_public_key(text, "s"));
    // points of small order: anyone could sign for them
    for (const char* weak : {"0000000000000000000000000000000000000000000000000000000000000000",
                             "0100000000000000000000000000000000000000000000000000000000000000"}) {
        auto r = parse_public_key(std::string("cudaenv-ed25519-public ") + weak, "weak.pub");
        ASSERT_FALSE(r) << weak;
        EXPECT_NE(r.error().message.find("small order"), std::string::npos);
    }
}

TEST(Keys, TheBuiltInKeysAreThoseInPackagingKeys) {
    ASSERT_TRUE(sys::load(sys::k_crypto));
    fs::path dir = fs::path(CUDAENV_TEST_MANIFESTS).parent_path() / "packaging" / "keys";
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir)) {
        auto k = parse_public_key(test::read_all(e.path()), e.path().string());
        ASSERT_TRUE(k) << k.error().message;
        files.push_back(k->id());
    }
    std::vector<std::string> built_in;
    for (const auto& k : shipped_keys()) {
        built_in.push_back(k.id());
    }
    std::sort(files.begin(), files.end());
    std::sort(built_in.begin(), built_in.end());
    EXPECT_FALSE(built_in.empty());
    EXPECT_EQ(files, built_in);
}

TEST(Bundle, ASignedBundleOpensAndEveryChangedByteIsRefused) {
    ASSERT_TRUE(sys::load(sys::k_crypto));
    auto k = key_from_hex(k_rfc_secret);
    auto bytes = make_bundle(minimal_files(), info(), {k});
    ASSERT_TRUE(bytes) << bytes.error().message;
    auto t = trust_of(k);
    auto b = open_bundle(*bytes, t, "b");
    ASSERT_TRUE(b) << b.error().message;
    EXPECT_EQ(b->info.serial, 7u);
    EXPECT_EQ(b->files, minimal_files());
    EXPECT_EQ(b->key_id, t.ring.keys[0].id());
    // flip each byte in turn: nothing but an error comes back, never a bundle
    for (std::size_t i = 0; i < bytes->size(); ++i) {
        std::string bent = *bytes;
        bent[i] = static_cast<char>(bent[i] ^ 0x01);
        auto r = open_bundle(bent, t, "b");
        ASSERT_FALSE(r) << "byte " << i;
        EXPECT_TRUE(r.error().code == ErrorCode::integrity ||
                    r.error().code == ErrorCode::incompatible)
            << r.error().message;
    }
    for (std::size_t n = 0; n < bytes->size(); ++n) {
        EXPECT_FALSE(open_bundle(bytes->substr(0, n), t, "b")) << n;
    }
}

TEST(Bundle, RefusesExpiredNewerAndUntrusted) {
    ASSERT_TRUE(sys::load(sys::k_crypto));
    auto k = key_from_hex(k_rfc_secret);
    auto t = trust_of(k);
    auto expired = info();
    expired.expires = "2026-12-05T23:59:59Z";
    auto r = open_bundle(*make_bundle(minimal_files(), expired, {k}), t, "b");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::integrity);
    EXPECT_NE(r.error().message.find("expired on 2026-12-05"), std::string::npos);
    auto newer = info();
    newer.requires_version = "0.2";
    r = open_bundle(*make_bundle(minimal_files(), newer, {k}), t, "b");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::incompatible);
    EXPECT_NE(r.error().message.find("needs cudaenv 0.2 or newer (this is cudaenv 0.1.0)"),
              std::string::npos);
    auto other = *generate_secret_key("");
    r = open_bundle(*make_bundle(minimal_files(), info(), {other}), t, "b");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("signed by no key this machine trusts"), std::string::npos);
    // two signatures: the trusted one is enough, whichever comes first
    EXPECT_TRUE(open_bundle(*make_bundle(minimal_files(), info(), {other, k}), t, "b"));
    // a bundle carrying a file outside the manifests' layout is not made, and not opened
    auto files = minimal_files();
    files["../x.json"] = "{}";
    EXPECT_FALSE(make_bundle(files, info(), {k}));
}

TEST(Bundle, SerialAndValidityStayWithinBounds) {
    ASSERT_TRUE(sys::load(sys::k_crypto));
    auto k = key_from_hex(k_rfc_secret);
    auto ahead = info(2026120200); // made 2026-12-01: at most 2026120199
    auto r = make_bundle(minimal_files(), ahead, {k});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("runs ahead of its creation day"), std::string::npos);
    EXPECT_TRUE(make_bundle(minimal_files(), info(2026120199), {k}));
    auto forever = info();
    forever.expires = "2028-01-06T00:00:00Z";
    EXPECT_FALSE(make_bundle(minimal_files(), forever, {k}));
    auto backwards = info();
    backwards.expires = backwards.created;
    EXPECT_FALSE(make_bundle(minimal_files(), backwards, {k}));
    // made in the future (a day of clock skew allowed): signed fine, refused when opened
    auto t = trust_of(k);
    auto future = info();
    future.created = "2026-12-08T00:00:00Z";
    future.expires = "2027-01-08T00:00:00Z";
    auto bytes = make_bundle(minimal_files(), future, {k});
    ASSERT_TRUE(bytes);
    auto opened = open_bundle(*bytes, t, "b");
    ASSERT_FALSE(opened);
    EXPECT_NE(opened.error().message.find("made in the future"), std::string::npos);
    future.created = "2026-12-06T12:00:00Z";
    EXPECT_TRUE(open_bundle(*make_bundle(minimal_files(), future, {k}), t, "b"));
}

TEST(Bundle, UtcTimesAreExact) {
    EXPECT_EQ(*parse_utc("1970-01-01T00:00:00Z"), 0);
    EXPECT_EQ(format_utc(*parse_utc("2026-12-06T13:14:15Z")), "2026-12-06T13:14:15Z");
    for (const char* bad : {"2026-12-06",
                            "2026-12-06T13:14:15+01:00",
                            "2026-02-31T00:00:00Z",
                            "2026-13-01T00:00:00Z",
                            "2026-12-06t13:14:15Z",
                            "+026-12-06T13:14:15Z"}) {
        EXPECT_FALSE(parse_utc(bad)) << bad;
    }
}

namespace {

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

void release(const fs::path& dir, std::uint64_t serial) {
    Release r;
    r.serial = serial;
    r.created = "2026-12-01T00:00:00Z";
    r.requires_version = "0.1.0";
    write(dir / k_release_file, release_to_text(r));
}

void current(const fs::path& root, const std::string& set, std::uint64_t serial) {
    CurrentRecord c{set, serial, std::string(64, 'a'), "http://c", "2026-12-01T00:00:00Z"};
    write(root / "manifests" / k_current_record, current_to_text(c));
    release(root / "manifests" / set, serial);
}

} // namespace

TEST(Sets, TheHighestSerialWinsAndTheFloorWinsATie) {
    test::TempDir t;
    fs::path floor = t.path() / "floor", user = t.path() / "user", machine = t.path() / "machine";
    release(floor, 10);
    auto m = choose_manifests(floor, {user, machine});
    EXPECT_EQ(m.origin, ManifestsInUse::Origin::shipped);
    EXPECT_EQ(m.release.serial, 10u);
    current(machine, "11-aaaaaaaaaaaa", 11);
    m = choose_manifests(floor, {user, machine});
    EXPECT_EQ(m.dir, machine / "manifests" / "11-aaaaaaaaaaaa");
    current(user, "12-bbbbbbbbbbbb", 12);
    EXPECT_EQ(choose_manifests(floor, {user, machine}).dir, user / "manifests" / "12-bbbbbbbbbbbb");
    release(floor, 12); // a package upgrade with the same serial: the floor
    EXPECT_EQ(choose_manifests(floor, {user, machine}).origin, ManifestsInUse::Origin::shipped);
    release(floor, 13);
    EXPECT_EQ(choose_manifests(floor, {user, machine}).dir, floor);
}

TEST(Sets, ADamagedRecordIsPassedOverAndSaid) {
    test::TempDir t;
    fs::path floor = t.path() / "floor", user = t.path() / "user";
    release(floor, 10);
    write(user / "manifests" / k_current_record,
          "{\"schema\": \"cudaenv.manifests/1\", \"set\": 5}");
    auto m = choose_manifests(floor, {user});
    EXPECT_EQ(m.dir, floor);
    ASSERT_EQ(m.warnings.size(), 1u);
    EXPECT_NE(m.warnings[0].find("current.json"), std::string::npos);
    // a record naming a set that is not there, or a climb
    current(user, "20-cccccccccccc", 20);
    fs::remove_all(user / "manifests" / "20-cccccccccccc");
    m = choose_manifests(floor, {user});
    EXPECT_EQ(m.dir, floor);
    EXPECT_EQ(m.warnings.size(), 1u);
    write(user / "manifests" / k_current_record,
          "{\"schema\": \"cudaenv.manifests/1\", \"set\": \"../../etc\", \"serial\": 99, "
          "\"sha256\": \"\", \"channel\": \"\", \"updated\": \"\"}");
    EXPECT_FALSE(read_current(user));
    EXPECT_EQ(choose_manifests(floor, {user}).dir, floor);
}

namespace {

manifest::Catalog small_catalog() {
    manifest::Catalog c;
    manifest::CudaRelease cuda;
    cuda.version = ver("12.4.1");
    cuda.release_date = "2024-04-12";
    cuda.driver_min = ver("550.54.15");
    c.cuda.push_back(cuda);
    manifest::Framework tf;
    tf.name = "tensorflow";
    auto row = test::framework_row("2.16", "2.16.1", "12.3", "8.9");
    tf.releases.push_back(row);
    c.frameworks.push_back(tf);
    return c;
}

} // namespace

TEST(Diff, SaysNewReleasesAndChangedVerdicts) {
    auto before = small_catalog();
    auto after = small_catalog();
    after.cuda[0].driver_min = ver("550.40.07"); // a corrected minimum
    manifest::CudaRelease next;
    next.version = ver("13.5.0");
    next.release_date = "2026-12-20";
    next.driver_min = ver("620.1");
    after.cuda.push_back(next);
    after.frameworks[0].releases[0].cudnn = ver("9.3"); // the upstream table was corrected
    manifest::GpuSupport gpus_before, gpus_after;
    manifest::GpuListing h100;
    h100.device = "2331";
    h100.name = "NVIDIA H100 PCIe";
    h100.first_per_branch[525] = ver("525.85.05");
    gpus_before.listings.push_back(h100);
    h100.first_per_branch[520] = ver("520.61.05");
    gpus_after.listings.push_back(h100);
    auto changes = diff_sets(before, gpus_before, after, gpus_after);
    std::vector<std::string> lines;
    for (const auto& c : changes) {
        lines.push_back(std::string(c.kind_text()) + " " + c.subject + ": " + c.detail);
    }
    EXPECT_EQ(lines,
              (std::vector<std::string>{
                  "changed CUDA 12.4.1: driver 550.40.07 or newer (was 550.54.15)",
                  "new CUDA 13.5.0: released 2026-12-20, driver 620.1 or newer",
                  "changed tensorflow 2.16: CUDA 12.3 + cuDNN 9.3 (was CUDA 12.3 + cuDNN 8.9)",
                  "changed GPU 2331 (NVIDIA H100 PCIe): first driver 520.61.05, 525.85.05 (was "
                  "525.85.05)",
              }));
    // and what goes away is said too
    changes = diff_sets(after, gpus_after, before, gpus_before);
    ASSERT_FALSE(changes.empty());
    EXPECT_TRUE(std::any_of(changes.begin(), changes.end(), [](const SetChange& c) {
        return c.kind == SetChange::Kind::removed && c.subject == "CUDA 13.5.0";
    }));
    EXPECT_TRUE(diff_sets(before, gpus_before, before, gpus_before).empty());
}
