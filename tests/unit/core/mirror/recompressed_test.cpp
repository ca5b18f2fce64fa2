// A fleet mirror's recompressed archives: zstd extraction with its limits (the window, the
// frames' checksums, truncation), and the signed index -- what it binds, and every way a changed,
// foreign or malformed one is refused.
#include "core/archive/extract.hpp"
#include "core/channel/signing.hpp"
#include "core/mirror/recompressed.hpp"
#include "core/sys/dynlib.hpp"
#include "support/tar_writer.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace fs = std::filesystem;
using namespace cudaenv;
using cudaenv::test::TarWriter;

namespace {

constexpr const char* k_top = "cuda_cudart-linux-x86_64-12.4.127-archive";

/// `data` as one zstd frame, streamed (no content size: the window is the one asked for), with
/// these parameters.
std::string zstd_bytes(std::string_view data, int window_log = 0, bool checksum = true) {
    const auto& z = sys::zstd();
    ZSTD_CCtx* c = z.create_cctx();
    z.cctx_set_parameter(c, ZSTD_c_compressionLevel, 3);
    z.cctx_set_parameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0);
    if (window_log) {
        z.cctx_set_parameter(c, ZSTD_c_windowLog, window_log);
    }
    std::string out;
    std::vector<char> buf(1 << 16);
    ZSTD_inBuffer in{data.data(), data.size(), 0};
    while (in.pos < in.size) {
        ZSTD_outBuffer ob{buf.data(), buf.size(), 0};
        EXPECT_FALSE(z.is_error(z.compress_stream2(c, &ob, &in, ZSTD_e_continue)));
        out.append(buf.data(), ob.pos);
    }
    std::size_t left = 1;
    while (left != 0) {
        ZSTD_outBuffer ob{buf.data(), buf.size(), 0};
        left = z.compress_stream2(c, &ob, &in, ZSTD_e_end);
        EXPECT_FALSE(z.is_error(left));
        out.append(buf.data(), ob.pos);
    }
    z.free_cctx(c);
    return out;
}

std::string layout() {
    TarWriter t;
    std::string top(k_top);
    t.dir(top).dir(top + "/lib");
    t.file(top + "/lib/libcudart.so.12.4.127", std::string(200000, 'x'), 0755);
    t.symlink(top + "/lib/libcudart.so.12", "libcudart.so.12.4.127");
    return t.bytes();
}

Result<archive::Extracted> extract_zstd(const std::string& bytes) {
    static int n = 0;
    test::TempDir dir;
    auto in = dir.write("in.tar.zst", bytes);
    fs::path out = dir.path() / ("out" + std::to_string(n++));
    fs::create_directory(out);
    return archive::extract(in, out, archive::Compression::zstd, k_top);
}

std::string refusal(const std::string& bytes) {
    auto got = extract_zstd(bytes);
    if (got) {
        return "";
    }
    EXPECT_EQ(got.error().code, ErrorCode::unsafe_archive);
    return got.error().full_message();
}

struct Keys {
    channel::SecretKey secret;
    channel::PublicKey pub;

    Keys() {
        secret = *channel::generate_secret_key("test");
        pub = *channel::public_key_of(secret);
    }
};

mirror::RecompressedArchive entry(char fill = 'a') {
    return {"cuda/redist/cuda_cudart/linux-x86_64/" + std::string(k_top) + ".tar.xz",
            std::string(64, fill),
            1000,
            "cudaenv-recompressed/cuda/redist/cuda_cudart/linux-x86_64/" + std::string(k_top) +
                ".tar.zst",
            std::string(64, 'b'),
            900};
}

/// An index with any payload, signed as the real one is.
std::string signed_index(const channel::SecretKey& key, const std::string& payload) {
    std::string message = "cudaenv-recompressed/1\n" + payload;
    auto sig = channel::sign(key, message);
    EXPECT_TRUE(sig);
    return "cudaenv-recompressed/1\nsignature " + channel::public_key_of(key)->id() + " " +
           channel::to_hex(sig->data(), sig->size()) + "\n\n" + payload;
}

std::string payload_with(const std::string& archive_json) {
    return R"({"schema": "cudaenv.recompressed/1", "created": "2026-12-07T00:00:00Z", "archives": [)" +
           archive_json + "]}";
}

std::string archive_json(const std::string& path, const std::string& codec = "zstd") {
    return R"({"original": {"path": "cuda/redist/x.tar.xz", "sha256": ")" + std::string(64, 'a') +
           R"(", "size": 10}, "path": ")" + path + R"(", "sha256": ")" + std::string(64, 'c') +
           R"(", "size": 9, "codec": ")" + codec + R"("})";
}

class Recompressed : public ::testing::Test {
  protected:
    void SetUp() override { ASSERT_TRUE(sys::load(sys::k_archive | sys::k_crypto)); }
};

} // namespace

TEST_F(Recompressed, AZstdArchiveExtractsAsTheXzOneWould) {
    auto got = extract_zstd(zstd_bytes(layout()));
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_EQ(got->top, k_top);
    EXPECT_EQ(got->entries.size(), 3u); // lib/, the library, the link
}

TEST_F(Recompressed, ZstdDecodingRefusesWhatItCannotTrust) {
    std::string good = zstd_bytes(layout());
    // a window beyond cudaenv's limit is refused before it is allocated
    EXPECT_NE(refusal(zstd_bytes(layout(), archive::k_zstd_window_log_max + 1))
                  .find("needs a zstd window larger than the 64 MiB cudaenv allows"),
              std::string::npos);
    // the largest allowed window is accepted
    EXPECT_EQ(refusal(zstd_bytes(layout(), archive::k_zstd_window_log_max)), "");
    // a changed byte: the frame's checksum (or the entropy decoder) catches it
    std::string changed = good;
    changed[changed.size() - 6] = static_cast<char>(changed[changed.size() - 6] ^ 0x40);
    EXPECT_NE(refusal(changed).find("corrupt zstd data"), std::string::npos) << refusal(changed);
    // cut short
    EXPECT_NE(refusal(good.substr(0, good.size() / 2)).find("truncated"), std::string::npos)
        << refusal(good.substr(0, good.size() / 2));
    // not zstd at all
    EXPECT_NE(refusal(layout()).find("not zstd-compressed"), std::string::npos);
    // nothing
    EXPECT_NE(refusal(""), "");
}

TEST_F(Recompressed, TheIndexBindsNvidiasHashToTheCopyAndOnlyItsSignerCanChangeIt) {
    Keys site, other;
    auto text = mirror::make_index({entry()}, "2026-12-07T00:00:00Z", {site.secret});
    ASSERT_TRUE(text);
    auto idx =
        mirror::open_index(*text, channel::KeyRing::of({other.pub, site.pub}), "http://m/index");
    ASSERT_TRUE(idx) << idx.error().full_message();
    EXPECT_EQ(idx->key_id, site.pub.id());
    ASSERT_EQ(idx->by_original.count(std::string(64, 'a')), 1u);
    const auto& a = idx->by_original.at(std::string(64, 'a'));
    EXPECT_EQ(a.sha256, std::string(64, 'b'));
    EXPECT_EQ(a.size, 900u);
    EXPECT_EQ(a.original_size, 1000u);

    // one changed character of the payload
    std::string changed = *text;
    changed.replace(changed.find(std::string(64, 'b')), 1, "c");
    auto bad = mirror::open_index(changed, channel::KeyRing::of({site.pub}), "http://m/index");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, ErrorCode::integrity);
    EXPECT_NE(bad.error().message.find("does not verify"), std::string::npos);

    // a key this machine does not trust: said, with the way back to NVIDIA's archives
    auto foreign = mirror::open_index(*text, channel::KeyRing::of({other.pub}), "http://m/index");
    ASSERT_FALSE(foreign);
    EXPECT_EQ(foreign.error().code, ErrorCode::integrity);
    EXPECT_NE(foreign.error().message.find("signed by no key this machine trusts"),
              std::string::npos);
    ASSERT_FALSE(foreign.error().hints.empty());
    EXPECT_NE(foreign.error().hints.back().find("CUDAENV_RECOMPRESSED=off"), std::string::npos);

    // a later format needs a newer cudaenv (exit 8), not a tampering verdict
    std::string later = *text;
    later.replace(0, 22, "cudaenv-recompressed/2");
    auto newer = mirror::open_index(later, channel::KeyRing::of({site.pub}), "http://m/index");
    ASSERT_FALSE(newer);
    EXPECT_EQ(newer.error().code, ErrorCode::incompatible);

    // unsigned
    auto bare =
        mirror::open_index("cudaenv-recompressed/1\n\n{}", channel::KeyRing::of({site.pub}), "x");
    ASSERT_FALSE(bare);
    EXPECT_NE(bare.error().message.find("not signed"), std::string::npos);
}

TEST_F(Recompressed, ASignedIndexStillCannotPointOutsideItsFolder) {
    Keys site;
    auto open = [&](const std::string& payload) {
        return mirror::open_index(
            signed_index(site.secret, payload), channel::KeyRing::of({site.pub}), "idx");
    };
    ASSERT_TRUE(open(payload_with(archive_json("cudaenv-recompressed/cuda/x.tar.zst"))));
    for (const char* path : {"cudaenv-recompressed/../../etc/passwd.tar.zst",
                             "/cudaenv-recompressed/x.tar.zst",
                             "cuda/redist/x.tar.zst",
                             "cudaenv-recompressed/x.tar.xz",
                             "cudaenv-recompressed//x.tar.zst",
                             "cudaenv-recompressed/./x.tar.zst",
                             "cudaenv-recompressed/.cudaenv-mirror.json.tar.zst",
                             "cudaenv-recompressed/a\\b.tar.zst"}) {
        auto got = open(payload_with(archive_json(path)));
        ASSERT_FALSE(got) << path;
        EXPECT_EQ(got.error().code, ErrorCode::integrity) << path;
    }
    // hashes must be hashes; one original, one copy
    std::string short_sha = archive_json("cudaenv-recompressed/x.tar.zst");
    short_sha.replace(short_sha.find(std::string(64, 'c')), 64, "cc");
    EXPECT_FALSE(open(payload_with(short_sha)));
    auto twice = archive_json("cudaenv-recompressed/x.tar.zst") + "," +
                 archive_json("cudaenv-recompressed/y.tar.zst");
    auto dup = open(payload_with(twice));
    ASSERT_FALSE(dup);
    EXPECT_NE(dup.error().message.find("two entries"), std::string::npos);
    // a codec this cudaenv does not know is left out, not an error
    auto unknown = open(payload_with(archive_json("cudaenv-recompressed/x.tar.br", "brotli")));
    ASSERT_TRUE(unknown) << unknown.error().full_message();
    EXPECT_TRUE(unknown->by_original.empty());
    // a later schema: a newer cudaenv is needed
    auto later = open(R"({"schema": "cudaenv.recompressed/3", "created": "2026-12-07T00:00:00Z",
                          "archives": []})");
    ASSERT_FALSE(later);
    EXPECT_EQ(later.error().code, ErrorCode::incompatible);
}
