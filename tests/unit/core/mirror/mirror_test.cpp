// `cudaenv mirror` (mirror/mirror) against a loopback HTTP server: files appear at their paths
// only complete and verified, the record lists them, verify re-hashes them, links planted below
// the base are refused, and a damaged record is an integrity error.
#include "../fetch/loopback_http.hpp"
#include "core/mirror/mirror.hpp"
#include "core/sha256.hpp"
#include "core/store/records.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

using namespace cudaenv;
using test::HttpAnswer;
using test::HttpRequest;
using test::LoopbackHttp;

namespace fs = std::filesystem;

namespace {

/// What the server holds, by URL path.
const std::map<std::string, std::string>& served() {
    static const std::map<std::string, std::string> files = {
        {"/cuda/redist/redistrib_11.8.0.json", "{\"release_label\": \"11.8.0\"}"},
        {"/cuda/redist/cuda_cudart/linux-x86_64/cudart-11.8.89-archive.tar.xz",
         std::string(70000, 'c')},
        {"/cudnn/redist/cudnn/linux-x86_64/cudnn-8.6.0.163-archive.tar.xz",
         std::string(50000, 'd')},
    };
    return files;
}

mirror::File file(const std::string& path) {
    const auto& body = served().at("/" + path);
    return {path, sha256_hex(body), body.size(), "the file " + path};
}

std::vector<mirror::File> all_files() {
    return {file("cuda/redist/redistrib_11.8.0.json"),
            file("cuda/redist/cuda_cudart/linux-x86_64/cudart-11.8.89-archive.tar.xz"),
            file("cudnn/redist/cudnn/linux-x86_64/cudnn-8.6.0.163-archive.tar.xz")};
}

class Mirror : public ::testing::Test {
  protected:
    Mirror()
        : server([this](const HttpRequest& q) {
              ++hits;
              auto it = served().find(q.path);
              if (it == served().end()) {
                  return HttpAnswer::status(404, "Not Found", "");
              }
              if (q.path.find("cudnn") != std::string::npos && fail_cudnn) {
                  return HttpAnswer::status(404, "Not Found", "");
              }
              return HttpAnswer::ok(it->second);
          }) {}

    void SetUp() override {
        options.base_url = server.url();
        options.policy.allow_http = true;
        options.policy.connect_timeout_s = 5;
        options.policy.max_attempts = 2;
        options.policy.backoff = std::chrono::milliseconds(1);
        options.jobs = 2;
        options.lock_timeout = std::chrono::seconds(5);
    }

    fs::path dir() const { return tmp.path() / "mirror"; }

    Result<store::MirrorRecord> record() const {
        return store::decode_mirror_record(test::read_all(dir() / mirror::k_record), "record");
    }

    test::TempDir tmp;
    std::atomic<int> hits{0};
    std::atomic<bool> fail_cudnn{false};
    LoopbackHttp server;
    mirror::Options options;
};

TEST_F(Mirror, DownloadsEveryFileToItsPathAndRecordsIt) {
    std::mutex m;
    std::vector<mirror::Event::Kind> events;
    auto got = mirror::mirror(dir(), all_files(), options, [&](const mirror::Event& e) {
        std::lock_guard<std::mutex> g(m);
        events.push_back(e.kind);
    });
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_TRUE(got->changed);
    ASSERT_EQ(got->files.size(), 3u);
    std::uint64_t total = 0;
    for (const auto& fo : got->files) {
        EXPECT_TRUE(fo.downloaded) << fo.file.path;
        EXPECT_FALSE(fo.present) << fo.file.path;
        EXPECT_EQ(test::read_all(dir() / fo.file.path), served().at("/" + fo.file.path));
        EXPECT_EQ((fs::status(dir() / fo.file.path).permissions() & fs::perms::others_read),
                  fs::perms::others_read);
        total += served().at("/" + fo.file.path).size();
    }
    EXPECT_EQ(got->downloaded_bytes, total);
    EXPECT_FALSE(fs::exists(dir() / mirror::k_partial_dir)); // emptied and removed
    auto rec = record();
    ASSERT_TRUE(rec) << rec.error().full_message();
    ASSERT_EQ(rec->files.size(), 3u);
    for (const auto& f : rec->files) {
        auto want = file(f.path);
        EXPECT_EQ(f.sha256, want.sha256);
        EXPECT_EQ(f.size, *want.size);
        EXPECT_EQ(f.what, want.what);
    }
    EXPECT_EQ(std::count(events.begin(), events.end(), mirror::Event::Kind::done), 3);
}

TEST_F(Mirror, ARerunDownloadsNothingThatIsRight) {
    ASSERT_TRUE(mirror::mirror(dir(), all_files(), options));
    int before = hits;
    auto again = mirror::mirror(dir(), all_files(), options);
    ASSERT_TRUE(again) << again.error().full_message();
    EXPECT_FALSE(again->changed);
    EXPECT_EQ(again->downloaded_bytes, 0u);
    for (const auto& fo : again->files) {
        EXPECT_TRUE(fo.present);
        EXPECT_FALSE(fo.downloaded);
    }
    EXPECT_EQ(hits, before);
}

TEST_F(Mirror, AWrongFileAtAPathIsReplaced) {
    ASSERT_TRUE(mirror::mirror(dir(), all_files(), options));
    auto path = dir() / "cuda/redist/redistrib_11.8.0.json";
    { std::ofstream(path, std::ios::trunc) << "{\"tampered\": true}"; }
    auto again = mirror::mirror(dir(), all_files(), options);
    ASSERT_TRUE(again) << again.error().full_message();
    EXPECT_TRUE(again->changed);
    EXPECT_TRUE(again->files[0].downloaded);
    EXPECT_EQ(test::read_all(path), served().at("/cuda/redist/redistrib_11.8.0.json"));
}

TEST_F(Mirror, AFileOfTheRightSizeButOtherBytesIsReplaced) {
    ASSERT_TRUE(mirror::mirror(dir(), all_files(), options));
    auto f = file("cuda/redist/cuda_cudart/linux-x86_64/cudart-11.8.89-archive.tar.xz");
    std::string same_size = served().at("/" + f.path);
    same_size[100] = 'X';
    { std::ofstream(dir() / f.path, std::ios::trunc) << same_size; }
    options.dry_run = true;
    auto dry = mirror::mirror(dir(), {f}, options);
    ASSERT_TRUE(dry) << dry.error().full_message();
    EXPECT_TRUE(dry->changed);
    EXPECT_FALSE(dry->files[0].present);
    options.dry_run = false;
    auto again = mirror::mirror(dir(), {f}, options);
    ASSERT_TRUE(again) << again.error().full_message();
    EXPECT_TRUE(again->files[0].downloaded);
    EXPECT_EQ(test::read_all(dir() / f.path), served().at("/" + f.path));
}

TEST_F(Mirror, AFileThatFailsLeavesNothingAtItsPathButTheOthersAreRecorded) {
    fail_cudnn = true;
    options.jobs = 1;
    auto got = mirror::mirror(dir(), all_files(), options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::network);
    EXPECT_FALSE(
        fs::exists(dir() / "cudnn/redist/cudnn/linux-x86_64/cudnn-8.6.0.163-archive.tar.xz"));
    auto rec = record();
    ASSERT_TRUE(rec) << rec.error().full_message();
    for (const auto& f : rec->files) {
        EXPECT_EQ(f.path.find("cudnn"), std::string::npos) << f.path;
        EXPECT_TRUE(fs::exists(dir() / f.path)) << f.path;
    }
    EXPECT_EQ(rec->files.size(), 2u);
}

TEST_F(Mirror, AWrongHashIsAnIntegrityErrorAndNothingAppears) {
    auto files = all_files();
    files[1].sha256 = sha256_hex("another archive");
    files[1].size.reset();
    options.jobs = 1;
    auto got = mirror::mirror(dir(), {files[1]}, options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity);
    EXPECT_FALSE(fs::exists(dir() / files[1].path));
}

TEST_F(Mirror, TwoHashesForOnePathAreAContradiction) {
    auto a = file("cuda/redist/redistrib_11.8.0.json");
    auto b = a;
    b.sha256 = sha256_hex("other");
    auto got = mirror::mirror(dir(), {a, b}, options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity);
    EXPECT_NE(got.error().message.find("two different files"), std::string::npos);
    EXPECT_EQ(hits, 0);
    // the same file twice is one
    auto once = mirror::mirror(dir(), {a, a}, options);
    ASSERT_TRUE(once) << once.error().full_message();
    EXPECT_EQ(once->files.size(), 1u);
}

TEST_F(Mirror, PathsNvidiasHostCouldNotHaveAreRefused) {
    for (const std::string& bad : std::vector<std::string>{"/etc/passwd",
                                                           "../outside",
                                                           "cuda/../../x",
                                                           "cuda//x",
                                                           "cuda/./x",
                                                           ".cudaenv-mirror.json",
                                                           "cuda/.cudaenv-mirror.partial/x",
                                                           std::string("cuda/a\nb"),
                                                           "cuda\\x",
                                                           ""}) {
        mirror::File f{bad, sha256_hex("x"), 1, "bad"};
        auto got = mirror::mirror(dir(), {f}, options);
        ASSERT_FALSE(got) << bad;
        EXPECT_EQ(got.error().code, ErrorCode::integrity) << bad;
    }
    mirror::File nohash{"cuda/x", "", 1, "no hash"};
    auto refused = mirror::mirror(dir(), {nohash}, options);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::integrity);
    EXPECT_EQ(hits, 0);
}

TEST_F(Mirror, ALinkPlantedBelowTheBaseIsRefused) {
    fs::create_directories(dir());
    auto outside = tmp.path() / "outside";
    fs::create_directories(outside);
    fs::create_directory_symlink(outside, dir() / "cuda");
    auto got = mirror::mirror(dir(), {file("cuda/redist/redistrib_11.8.0.json")}, options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::unsafe_archive);
    EXPECT_EQ(exit_code(got.error().code), 5);
    EXPECT_TRUE(fs::is_empty(outside)); // nothing was written through the link
}

TEST_F(Mirror, ALinkAtTheRecordIsRefused) {
    fs::create_directories(dir());
    auto outside = tmp.write("outside.json", "{}");
    fs::create_symlink(outside, dir() / mirror::k_record);
    auto got = mirror::mirror(dir(), {file("cuda/redist/redistrib_11.8.0.json")}, options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::unsafe_archive);
    EXPECT_EQ(test::read_all(outside), "{}");
}

TEST_F(Mirror, ALinkAtAFilesPathIsReplacedNotFollowed) {
    auto victim = tmp.write("victim", "keep me");
    fs::create_directories(dir() / "cuda/redist");
    fs::create_symlink(victim, dir() / "cuda/redist/redistrib_11.8.0.json");
    auto got = mirror::mirror(dir(), {file("cuda/redist/redistrib_11.8.0.json")}, options);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_FALSE(fs::is_symlink(dir() / "cuda/redist/redistrib_11.8.0.json"));
    EXPECT_EQ(test::read_all(victim), "keep me");
}

TEST_F(Mirror, ContentInHandIsWrittenWithoutADownload) {
    std::string text = "{\"bundle\": 1}";
    mirror::File f{
        "cuda/redist/redistrib_12.0.0.json", sha256_hex(text), text.size(), "bundled", text};
    auto got = mirror::mirror(dir(), {f}, options);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_EQ(test::read_all(dir() / f.path), text);
    EXPECT_EQ(hits, 0);
}

TEST_F(Mirror, DryRunSaysWhatIsMissingAndWritesNothing) {
    options.dry_run = true;
    auto got = mirror::mirror(dir(), all_files(), options);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_TRUE(got->changed);
    EXPECT_FALSE(fs::exists(dir()));
    EXPECT_EQ(hits, 0);
}

TEST_F(Mirror, VerifyRehashesEveryRecordedFile) {
    ASSERT_TRUE(mirror::mirror(dir(), all_files(), options));
    auto clean = mirror::verify(dir(), 2);
    ASSERT_TRUE(clean) << clean.error().full_message();
    EXPECT_TRUE(clean->empty());

    auto files = all_files();
    fs::remove(dir() / files[0].path);
    { std::ofstream(dir() / files[1].path, std::ios::trunc) << "short"; }
    {
        // same size, other bytes
        std::string same = served().at("/" + files[2].path);
        same[0] = 'X';
        std::ofstream(dir() / files[2].path, std::ios::trunc) << same;
    }
    auto found = mirror::verify(dir(), 2);
    ASSERT_TRUE(found) << found.error().full_message();
    ASSERT_EQ(found->size(), 3u);
    std::map<std::string, std::string> by_path;
    for (const auto& p : *found) {
        by_path[p.path] = p.what;
    }
    EXPECT_EQ(by_path[files[0].path], "missing");
    EXPECT_EQ(by_path[files[1].path].rfind("size 5, expected 70000", 0), 0u)
        << by_path[files[1].path];
    EXPECT_EQ(by_path[files[2].path].rfind("sha256 ", 0), 0u) << by_path[files[2].path];
}

TEST_F(Mirror, VerifyReportsALinkInsteadOfAFile) {
    ASSERT_TRUE(mirror::mirror(dir(), {file("cuda/redist/redistrib_11.8.0.json")}, options));
    auto p = dir() / "cuda/redist/redistrib_11.8.0.json";
    auto copy = tmp.write("copy.json", served().at("/cuda/redist/redistrib_11.8.0.json"));
    fs::remove(p);
    fs::create_symlink(copy, p);
    auto found = mirror::verify(dir(), 1);
    ASSERT_TRUE(found) << found.error().full_message();
    ASSERT_EQ(found->size(), 1u);
    EXPECT_EQ((*found)[0].what, "a link that cudaenv did not make");
}

TEST_F(Mirror, VerifyWithoutARecordIsAnIntegrityError) {
    fs::create_directories(dir());
    auto got = mirror::verify(dir(), 1);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity);
    EXPECT_NE(got.error().message.find("is not a cudaenv mirror"), std::string::npos);
}

TEST_F(Mirror, ADamagedRecordIsAnIntegrityError) {
    ASSERT_TRUE(mirror::mirror(dir(), all_files(), options));
    for (const std::string& damaged :
         {std::string("{ not json"),
          std::string("{\"schema\": \"cudaenv.mirror/9\", \"files\": []}"),
          std::string("[]")}) {
        { std::ofstream(dir() / mirror::k_record, std::ios::trunc) << damaged; }
        auto got = mirror::verify(dir(), 1);
        ASSERT_FALSE(got) << damaged;
        EXPECT_EQ(got.error().code, ErrorCode::integrity) << damaged;
    }
}

TEST_F(Mirror, ARecordNamingAPathOutsideTheBaseIsAnIntegrityError) {
    store::MirrorRecord r;
    r.files.push_back({"../../etc/passwd", sha256_hex("x"), 1, "planted"});
    fs::create_directories(dir());
    { std::ofstream(dir() / mirror::k_record) << store::encode(r); }
    auto got = mirror::verify(dir(), 1);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity);
}

TEST_F(Mirror, ADamagedRecordIsRewrittenByTheNextMirror) {
    fs::create_directories(dir());
    { std::ofstream(dir() / mirror::k_record) << "{ not json"; }
    auto got = mirror::mirror(dir(), {file("cuda/redist/redistrib_11.8.0.json")}, options);
    ASSERT_TRUE(got) << got.error().full_message();
    auto rec = record();
    ASSERT_TRUE(rec) << rec.error().full_message();
    EXPECT_EQ(rec->files.size(), 1u);
}

} // namespace
