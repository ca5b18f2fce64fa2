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
    // a truncated payload
    std::string cut = head + gzip_payload(60);
    EXPECT_EQ(code(cut, cut.size()), ErrorCode::integrity);
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
    EXPECT_EQ(read_runfile_header(run).error().code, ErrorCode::integrity);
    spit(run, text + "trailing");
    EXPECT_EQ(read_runfile_header(run).error().code, ErrorCode::unsafe_archive);
    EXPECT_EQ(read_runfile_header(t.path() / "absent.run").error().code, ErrorCode::filesystem);
}

} // namespace
} // namespace cudaenv::archive
