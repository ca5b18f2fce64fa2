// Runfile headers: real makeself archives (Debian's makeself, 2.4: skip="N") and NVIDIA's
// generation (makeself 2.1.x: offset=`head -n N "$0"`), and headers that lie.
#include "core/archive/makeself.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace cudaenv::archive {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream o;
    o << in.rdbuf();
    return o.str();
}

void spit(const fs::path& p, const std::string& s) {
    std::ofstream(p, std::ios::binary) << s;
}

/// A runfile made by the real makeself: builds/cuda_cudart/lib64/libcudart.so.11.0 inside.
fs::path make_runfile(const test::TempDir& t, const char* compression) {
    fs::create_directories(t.path() / "src/builds/cuda_cudart/lib64");
    spit(t.path() / "src/builds/cuda_cudart/lib64/libcudart.so.11.0", std::string(5000, 'x'));
    fs::path run = t.path() / "cuda.run";
    std::string cmd = std::string("makeself ") + compression + " --nox11 --quiet '" +
                      (t.path() / "src").string() + "' '" + run.string() +
                      "' 'CUDA Toolkit' ./cuda-installer >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0 || !fs::exists(run)) {
        return {};
    }
    return run;
}

TEST(Runfile, RealMakeselfArchivesParse) {
    for (auto [flag, want] : {std::pair{"--gzip", Compression::gzip},
                              std::pair{"--xz", Compression::xz},
                              std::pair{"--nocomp", Compression::none}}) {
        test::TempDir t;
        auto run = make_runfile(t, flag);
        if (run.empty()) {
            GTEST_SKIP() << "makeself is not installed (apt-get install makeself)";
        }
        auto h = read_runfile_header(run);
        ASSERT_TRUE(h) << h.error().full_message();
        EXPECT_EQ(h->compression, want) << flag;
        EXPECT_EQ(h->payload_offset + h->payload_size, fs::file_size(run));
        EXPECT_EQ(h->filesizes.size(), 1u);
        EXPECT_EQ(h->label, "CUDA Toolkit");
        EXPECT_FALSE(h->makeself_version.empty());
        EXPECT_EQ(h->md5.size(), 32u);
        // the header line count points exactly at the payload
        auto text = slurp(run);
        EXPECT_EQ(
            std::count(text.begin(), text.begin() + static_cast<long>(h->payload_offset), '\n'),
            static_cast<long>(h->header_lines));
    }
}

/// NVIDIA's generation: makeself 2.1.x computes the offset with head -n.
std::string nvidia_style(std::uint64_t lines_claimed, const std::string& sizes) {
    std::string h = "#!/bin/sh\n# This script was generated using Makeself 2.1.5\n"
                    "CRCsum=\"1234\"\nMD5=\"00112233445566778899aabbccddeeff\"\n"
                    "TMPROOT=${TMPDIR:=/tmp}\nlabel=\"CUDA Toolkit 11.2\"\nfilesizes=\"" +
                    sizes + "\"\n";
    h += "offset=`head -n " + std::to_string(lines_claimed) + " \"$0\" | wc -c | tr -d \" \"`\n";
    h += "exit 0\n";
    return h;
}

std::string gzip_payload(std::size_t n) {
    std::string p = "\x1f\x8b\x08";
    p.resize(n, 'z');
    return p;
}

TEST(Runfile, NvidiaGenerationHeaderParses) {
    std::string head = nvidia_style(9, "100");
    ASSERT_EQ(std::count(head.begin(), head.end(), '\n'), 9);
    std::string file = head + gzip_payload(100);
    auto h = parse_runfile_header(file, file.size(), "cuda_11.2.run");
    ASSERT_TRUE(h) << h.error().full_message();
    EXPECT_EQ(h->header_lines, 9u);
    EXPECT_EQ(h->payload_offset, head.size());
    EXPECT_EQ(h->payload_size, 100u);
    EXPECT_EQ(h->makeself_version, "2.1.5");
    EXPECT_EQ(h->compression, Compression::gzip);
}

TEST(Runfile, HeadersThatLieAreRefused) {
    std::string head = nvidia_style(9, "100");
    auto code = [](std::string_view file, std::uint64_t size) {
        auto h = parse_runfile_header(file, size, "x.run");
        return h ? ErrorCode::internal : h.error().code; // internal: "it was accepted"
    };
    // more lines than the file has
    std::string lying = nvidia_style(5000, "100") + gzip_payload(100);
    EXPECT_EQ(code(lying, lying.size()), ErrorCode::unsafe_archive);
    // sizes that add up to less than what follows (something appended)
    std::string appended = head + gzip_payload(150);
    EXPECT_EQ(code(appended, appended.size()), ErrorCode::unsafe_archive);
    // sizes that add up to more than what follows: the file is whole (its sha256 was checked), so
    // the header lies -- an unsafe archive, not a truncated download
    std::string cut = head + gzip_payload(60);
    EXPECT_EQ(code(cut, cut.size()), ErrorCode::unsafe_archive);
    // a huge declared size, and one that overflows when summed
    std::string huge = nvidia_style(9, "99999999999999") + gzip_payload(100);
    EXPECT_EQ(code(huge, huge.size()), ErrorCode::unsafe_archive);
    std::string wrap = nvidia_style(9, "18446744073709551615 2") + gzip_payload(100);
    EXPECT_EQ(code(wrap, wrap.size()), ErrorCode::unsafe_archive);
    std::string junk = nvidia_style(9, "1x0") + gzip_payload(100);
    EXPECT_EQ(code(junk, junk.size()), ErrorCode::unsafe_archive);
    // no #! line, no length line, a payload that is no archive
    std::string elf = "\x7f"
                      "ELF" +
                      std::string(100, '\0');
    EXPECT_EQ(code(elf, elf.size()), ErrorCode::unsafe_archive);
    std::string nolen = "#!/bin/sh\nfilesizes=\"3\"\nabc";
    EXPECT_EQ(code(nolen, nolen.size()), ErrorCode::unsafe_archive);
    std::string notar = head + std::string(100, 'A');
    EXPECT_EQ(code(notar, notar.size()), ErrorCode::unsafe_archive);
}

TEST(Runfile, ARealRunfileCutShortOrGrownIsRefused) {
    test::TempDir t;
    auto run = make_runfile(t, "--xz");
    if (run.empty()) {
        GTEST_SKIP() << "makeself is not installed";
    }
    auto text = slurp(run);
    spit(run, text.substr(0, text.size() - 10));
    EXPECT_EQ(read_runfile_header(run).error().code, ErrorCode::unsafe_archive);
    spit(run, text + "trailing");
    EXPECT_EQ(read_runfile_header(run).error().code, ErrorCode::unsafe_archive);
    EXPECT_EQ(read_runfile_header(t.path() / "absent.run").error().code, ErrorCode::filesystem);
}

/// Streams the payload of `run` through makeself's checksums, as extraction does.
Status check_payload(const fs::path& run) {
    auto h = read_runfile_header(run);
    if (!h) {
        return h.error();
    }
    auto text = slurp(run);
    PayloadChecksums sums(*h);
    // in uneven chunks, so a part boundary falls inside one
    std::string_view payload(text.data() + h->payload_offset, h->payload_size);
    for (std::size_t at = 0; at < payload.size(); at += 777) {
        auto piece = payload.substr(at, 777);
        sums.update(piece.data(), piece.size());
    }
    return sums.verify(run.filename().string());
}

TEST(Runfile, CksumIsPosixCksum) {
    // the values `printf 123456789 | cksum` and `printf '' | cksum` print
    Cksum nine;
    nine.update("1234", 4);
    nine.update("56789", 5);
    EXPECT_EQ(nine.value(), 930766865u);
    EXPECT_EQ(Cksum{}.value(), 4294967295u);

    // a megabyte and some, fed in uneven pieces, against the real cksum(1)
    test::TempDir t;
    std::string data(1'048'583, '\0');
    std::uint32_t x = 2463534242u;
    for (auto& c : data) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        c = static_cast<char>(x);
    }
    spit(t.path() / "data", data);
    Cksum mine;
    for (std::size_t at = 0; at < data.size(); at += 1237) {
        auto piece = std::string_view(data).substr(at, 1237);
        mine.update(piece.data(), piece.size());
    }
    std::string cmd =
        "cksum < '" + (t.path() / "data").string() + "' > '" + (t.path() / "out").string() + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    auto theirs = slurp(t.path() / "out");
    EXPECT_EQ(theirs.substr(0, theirs.find(' ')), std::to_string(mine.value()));
}

TEST(Runfile, MakeselfChecksumsAreCheckedWhenPresent) {
    for (const char* flags :
         {"--gzip", "--xz --sha256", "--nocomp --nomd5", "--gzip --nomd5 --nocrc"}) {
        test::TempDir t;
        auto run = make_runfile(t, flags);
        if (run.empty()) {
            GTEST_SKIP() << "makeself is not installed";
        }
        auto h = read_runfile_header(run);
        ASSERT_TRUE(h) << h.error().full_message();
        std::string f = flags;
        EXPECT_EQ(h->part_md5.size(), f.find("nomd5") == std::string::npos ? 1u : 0u) << f;
        EXPECT_EQ(h->part_crc.size(), f.find("nocrc") == std::string::npos ? 1u : 0u) << f;
        EXPECT_EQ(h->part_sha256.size(), f.find("sha256") != std::string::npos ? 1u : 0u) << f;
        auto whole = check_payload(run);
        EXPECT_TRUE(whole) << f << ": " << whole.error().full_message();

        // one byte of the payload changed, the header left as makeself wrote it
        auto text = slurp(run);
        text[h->payload_offset + h->payload_size / 2] ^= 0x5a;
        spit(run, text);
        auto altered = check_payload(run);
        if (!PayloadChecksums(*h).any()) {
            EXPECT_TRUE(altered) << f; // nothing declared, nothing to check
            continue;
        }
        ASSERT_FALSE(altered) << f;
        EXPECT_EQ(altered.error().code, ErrorCode::integrity) << f;
        EXPECT_NE(altered.error().message.find("does not match the"), std::string::npos)
            << altered.error().message;
    }
}

TEST(Runfile, ChecksumFieldsThatLieAreRefused) {
    // NVIDIA's header with no MD5 or CRC of its own (as makeself --nomd5 --nocrc writes them)
    // and `field` set to `value`
    auto with = [](const std::string& field, const std::string& value, const std::string& sizes) {
        std::string h = nvidia_style(9, sizes);
        h.replace(h.find("CRCsum=\"1234\""), 13, "CRCsum=\"0000000000\"");
        h.replace(h.find("MD5=\"0011"), 38, "MD5=\"" + std::string(32, '0') + "\"");
        auto at = h.find("\n" + field + "=\"");
        if (at != std::string::npos) {
            auto open = at + field.size() + 3;
            h.replace(open, h.find('"', open) - open, value);
            return h;
        }
        // one more line: the header's line count must still point at the payload
        h.insert(h.find("label="), field + "=\"" + value + "\"\n");
        h.replace(h.find("head -n 9 "), 10, "head -n 10 ");
        return h;
    };
    auto code = [](const std::string& file) {
        auto h = parse_runfile_header(file, file.size(), "x.run");
        return h ? ErrorCode::internal : h.error().code;
    };
    std::string sha(64, 'a');
    // a checksum for each part, but two parts and one checksum
    EXPECT_EQ(code(with("SHA", sha, "50 50") + gzip_payload(100)), ErrorCode::unsafe_archive);
    // words that are no checksum
    EXPECT_EQ(code(with("SHA", "xyz", "100") + gzip_payload(100)), ErrorCode::unsafe_archive);
    EXPECT_EQ(code(with("CRCsum", "12345678901", "100") + gzip_payload(100)),
              ErrorCode::unsafe_archive);
    // well formed, one per part: parses, and its values are kept for the check
    auto ok = with("SHA", sha + " " + sha, "50 50") + gzip_payload(100);
    auto h = parse_runfile_header(ok, ok.size(), "x.run");
    ASSERT_TRUE(h) << h.error().full_message();
    EXPECT_EQ(h->part_sha256.size(), 2u);
    // a wrong SHA for the second part: named as such
    std::string payload = gzip_payload(100);
    std::string first = sha256_hex(payload.substr(0, 50));
    auto second_wrong = with("SHA", first + " " + sha, "50 50") + payload;
    auto h2 = parse_runfile_header(second_wrong, second_wrong.size(), "x.run");
    ASSERT_TRUE(h2) << h2.error().full_message();
    PayloadChecksums sums(*h2);
    sums.update(payload.data(), payload.size());
    auto v = sums.verify("x.run");
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().code, ErrorCode::integrity);
    EXPECT_NE(v.error().message.find("SHA its header declares of part 2"), std::string::npos)
        << v.error().message;
    // a payload that stops early cannot pass
    PayloadChecksums early(*h2);
    early.update(payload.data(), 30);
    EXPECT_EQ(early.verify("x.run").error().code, ErrorCode::integrity);
}

} // namespace
} // namespace cudaenv::archive
