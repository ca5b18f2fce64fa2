// The extraction filter, entry by entry, on plain tars built in memory: what it refuses (with the
// entry named, exit 5) and what it writes (modes normalised, links kept, hard links shared).
#include "core/archive/extract.hpp"
#include "core/sha256.hpp"
#include "support/tar_writer.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

namespace fs = std::filesystem;
using namespace cudaenv;
using cudaenv::test::TarWriter;

namespace {

constexpr const char* k_top = "cuda_cudart-linux-x86_64-11.8.89-archive";

std::string in_top(std::string_view rel) {
    return std::string(k_top) + "/" + std::string(rel);
}

struct Extraction {
    test::TempDir dir;
    fs::path dest;
    Result<archive::Extracted> got{Error(ErrorCode::failure, "not run")};

    explicit Extraction(const TarWriter& tar, const archive::Limits& limits = {}) {
        auto in = dir.write("in.tar", tar.bytes());
        dest = dir.path() / "out";
        fs::create_directory(dest);
        got = archive::extract(in, dest, archive::Compression::none, k_top, limits);
    }

    /// The error message, or "" when the archive was accepted.
    std::string refusal() const { return got ? "" : got.error().full_message(); }
};

TarWriter nvidia_layout() {
    TarWriter t;
    t.dir(k_top).dir(in_top("lib")).dir(in_top("include"));
    t.file(in_top("lib/libcudart.so.11.8.89"),
           "\x7f"
           "ELF",
           0755);
    t.symlink(in_top("lib/libcudart.so.11.0"), "libcudart.so.11.8.89");
    t.symlink(in_top("lib/libcudart.so"), "libcudart.so.11.0");
    t.file(in_top("include/cuda_runtime.h"), "#pragma once\n");
    return t;
}

} // namespace

TEST(ExtractFilter, AcceptsNvidiasLayoutAndRecordsEveryEntry) {
    Extraction r(nvidia_layout());
    ASSERT_TRUE(r.got) << r.refusal();
    EXPECT_EQ(r.got->top, k_top);
    ASSERT_EQ(r.got->entries.size(), 6u);
    EXPECT_EQ(fs::read_symlink(r.dest / "lib/libcudart.so.11.0"), "libcudart.so.11.8.89");
    EXPECT_EQ(test::read_all(r.dest / "include/cuda_runtime.h"), "#pragma once\n");

    struct stat st {};

    ASSERT_EQ(::stat((r.dest / "lib/libcudart.so.11.8.89").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755u);
}

TEST(ExtractFilter, RefusesEachHostileEntryNamingIt) {
    struct Case {
        const char* what;
        TarWriter tar;
        const char* says;
    };

    std::vector<Case> cases;
    auto base = [] { return TarWriter().dir(k_top); };
    cases.push_back({"absolute", base().file("/etc/cron.d/x", "x"), "absolute"});
    cases.push_back({"dotdot", base().file(in_top("../../x"), "x"), ".."});
    cases.push_back({"dot segment", base().file(in_top("./lib/x"), "x"), "'"});
    cases.push_back({"backslash", base().file(in_top("lib\\x"), "x"), "lib\\x5cx"});
    cases.push_back({"control byte", base().file(in_top("a\x1b[2Jb"), "x"), "\\x1b"});
    cases.push_back({"outside the top", base().file("other-top/x", "x"), "other-top/x"});
    cases.push_back({"duplicate", base().file(in_top("x"), "1").file(in_top("x"), "2"), "x"});
    cases.push_back(
        {"under a symlink",
         base().dir(in_top("include")).symlink(in_top("lib"), "include").file(in_top("lib/x"), "x"),
         "lib/x"});
    cases.push_back({"absolute link", base().symlink(in_top("l"), "/etc/passwd"), "/etc/passwd"});
    cases.push_back({"climbing link", base().symlink(in_top("l"), "../../etc"), "../../etc"});
    cases.push_back({"link chain out",
                     base()
                         .dir(in_top("lib"))
                         .symlink(in_top("lib/up"), "..")
                         .symlink(in_top("lib/x"), "up/../../etc/passwd"),
                     "lib/x"});
    cases.push_back(
        {"link loop", base().symlink(in_top("a"), "b").symlink(in_top("b"), "a"), "loop"});
    cases.push_back({"hard link forward",
                     base().hardlink(in_top("h"), in_top("later")).file(in_top("later"), "x"),
                     "h"});
    cases.push_back({"hard link outside", base().hardlink(in_top("h"), "/etc/passwd"), "h"});
    cases.push_back({"fifo", base().special(in_top("p"), '6'), "p"});
    cases.push_back({"char device", base().special(in_top("tty"), '3'), "tty"});
    cases.push_back(
        {"case twins", base().file(in_top("Foo.h"), "a").file(in_top("foo.h"), "b"), "Foo.h"});
    cases.push_back({"nfc/nfd twins",
                     base().file(in_top("caf\xc3\xa9"), "a").file(in_top("cafe\xcc\x81"), "b"),
                     "accents"});
    for (auto& c : cases) {
        Extraction r(c.tar);
        ASSERT_FALSE(r.got) << c.what << " was accepted";
        EXPECT_EQ(r.got.error().code, ErrorCode::unsafe_archive) << c.what << ": " << r.refusal();
        EXPECT_NE(r.refusal().find(c.says), std::string::npos) << c.what << ": " << r.refusal();
        for (char ch : r.refusal()) {
            ASSERT_FALSE(static_cast<unsigned char>(ch) < 0x20) << c.what << ": raw control byte";
        }
    }
}

TEST(ExtractFilter, NormalisesModes) {
    TarWriter t;
    t.dir(k_top, 0777);
    t.file(in_top("suid"), "x", 04755);
    t.file(in_top("world"), "x", 0666);
    t.file(in_top("private"), "x", 0600);
    Extraction r(t);
    ASSERT_TRUE(r.got) << r.refusal();
    auto mode = [&](const char* rel) {
        struct stat st {};
        EXPECT_EQ(::lstat((r.dest / rel).c_str(), &st), 0);
        return st.st_mode & 07777;
    };
    EXPECT_EQ(mode("suid"), 0755u);
    EXPECT_EQ(mode("world"), 0644u);
    EXPECT_EQ(mode("private"), 0644u);
}

TEST(ExtractFilter, AHardLinkSharesTheEarlierFile) {
    TarWriter t = nvidia_layout();
    t.hardlink(in_top("lib/libcudart_copy.so"), in_top("lib/libcudart.so.11.8.89"));
    Extraction r(t);
    ASSERT_TRUE(r.got) << r.refusal();

    struct stat a {
    }, b{};

    ASSERT_EQ(::stat((r.dest / "lib/libcudart.so.11.8.89").c_str(), &a), 0);
    ASSERT_EQ(::stat((r.dest / "lib/libcudart_copy.so").c_str(), &b), 0);
    EXPECT_EQ(a.st_ino, b.st_ino);
}

TEST(ExtractFilter, EveryFileCarriesTheSha256OfTheBytesWritten) {
    TarWriter t = nvidia_layout();
    t.hardlink(in_top("lib/libcudart_copy.so"), in_top("lib/libcudart.so.11.8.89"));
    Extraction r(t);
    ASSERT_TRUE(r.got) << r.refusal();
    std::size_t files = 0;
    for (const auto& e : r.got->entries) {
        if (e.type != archive::Entry::Type::file) {
            EXPECT_TRUE(e.sha256.empty()) << e.path;
            continue;
        }
        ++files;
        // hashed as written, never read back: the same as hashing the file afterwards
        std::string content = test::read_all(r.dest / e.path);
        EXPECT_EQ(e.sha256, sha256_hex(content)) << e.path;
        EXPECT_EQ(e.size, content.size()) << e.path; // a hard link: its target's size too
    }
    EXPECT_EQ(files, 3u);
}

TEST(ExtractFilter, LimitsOnEntriesBytesAndPathLength) {
    archive::Limits few;
    few.max_entries = 3;
    EXPECT_NE(Extraction(nvidia_layout(), few).refusal().find("entries"), std::string::npos)
        << Extraction(nvidia_layout(), few).refusal();

    archive::Limits small;
    small.max_entry_bytes = 10;
    TarWriter big;
    big.dir(k_top).file(in_top("big"), std::string(11, 'x'));
    EXPECT_FALSE(Extraction(big, small).got);

    archive::Limits total;
    total.max_total_bytes = 15;
    TarWriter two;
    two.dir(k_top).file(in_top("a"), std::string(10, 'x')).file(in_top("b"), std::string(10, 'x'));
    EXPECT_FALSE(Extraction(two, total).got);

    archive::Limits shortpath;
    shortpath.max_path = 60;
    TarWriter deep;
    deep.dir(k_top).file(in_top(std::string(40, 'd') + "/x"), "x");
    EXPECT_FALSE(Extraction(deep, shortpath).got);
}

TEST(ExtractFilter, TheExpectedCompressionOnly) {
    test::TempDir dir;
    auto in = dir.write("in.tar", nvidia_layout().bytes());
    fs::create_directory(dir.path() / "out");
    auto got = archive::extract(in, dir.path() / "out", archive::Compression::xz, k_top);
    ASSERT_FALSE(got);
    EXPECT_NE(got.error().full_message().find("not xz-compressed"), std::string::npos)
        << got.error().full_message();
}
