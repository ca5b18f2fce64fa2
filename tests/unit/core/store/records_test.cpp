#include "core/fs.hpp"
#include "core/store/records.hpp"
#include "core/store/root.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace cudaenv;
using namespace cudaenv::store;

namespace {

StoreRecord sample_store() {
    StoreRecord r{"cuda_cudart",
                  "11.8.89",
                  std::string(64, 'a'),
                  "https://m/x.tar.xz",
                  "cuda_cudart-linux-x86_64-11.8.89-archive",
                  1234,
                  {}};
    r.files.push_back({FileRecord::Type::dir, "lib", "", 0, false, ""});
    r.files.push_back(
        {FileRecord::Type::file, "lib/libcudart.so.11.8.89", "", 700, false, std::string(64, 'c')});
    r.files.push_back(
        {FileRecord::Type::symlink, "lib/libcudart.so.11.0", "libcudart.so.11.8.89", 0, false, ""});
    r.files.push_back({FileRecord::Type::file, "bin/nvcc", "", 9, true, std::string(64, 'd')});
    return r;
}

VersionRecord sample_version() {
    return {
        "11.8.0+cudnn8.6.0.163",
        "11.8.0",
        "8.6.0.163",
        "11",
        "runtime",
        "linux-x86_64",
        42,
        4096,
        {{"cuda_cudart", "11.8.89", std::string(64, 'b'), "cuda_cudart-11.8.89-bbbbbbbbbbbb", {}}}};
}

} // namespace

TEST(Records, StoreRecordRoundTrips) {
    auto r = sample_store();
    auto back = decode_store_record(encode(r), "'x'");
    ASSERT_TRUE(back) << back.error().full_message();
    EXPECT_EQ(encode(*back), encode(r));
    ASSERT_EQ(back->files.size(), 4u);
    EXPECT_EQ(back->files[2].target, "libcudart.so.11.8.89");
    EXPECT_TRUE(back->files[3].executable);
    EXPECT_FALSE(back->files[1].executable);
    EXPECT_EQ(back->files[1].size, 700u);
}

TEST(Records, StoreRecordKeepsEachFilesSha256) {
    auto r = sample_store();
    auto back = decode_store_record(encode(r), "'x'");
    ASSERT_TRUE(back) << back.error().full_message();
    EXPECT_EQ(back->files[1].sha256, std::string(64, 'c'));
    EXPECT_EQ(back->files[3].sha256, std::string(64, 'd'));
    EXPECT_TRUE(back->files[2].sha256.empty()); // a link has none
    EXPECT_TRUE(back->hashed());
}

TEST(Records, AStoreRecordWithoutPerFileHashesStillReadsAndSaysSo) {
    // what cudaenv wrote before per-file hashes: sizes only, the same schema
    auto old = decode_store_record(
        R"({"schema": "cudaenv.store/1", "component": "cuda_cudart", "version": "11.8.89",
            "sha256": ")" +
            std::string(64, 'a') +
            R"(", "source": "u", "top": "t", "bytes": 709,
            "files": [{"path": "lib", "type": "dir"},
                      {"path": "lib/libcudart.so.11.8.89", "type": "file", "size": 700},
                      {"path": "bin/nvcc", "type": "file", "size": 9, "x": true}]})",
        "'old'");
    ASSERT_TRUE(old) << old.error().full_message();
    EXPECT_FALSE(old->hashed());
    EXPECT_TRUE(old->files[1].sha256.empty());
    EXPECT_EQ(old->files[1].size, 700u);
    // and what it encodes back has no per-file hash either: nothing is made up
    std::string text = encode(*old);
    EXPECT_EQ(text.find("sha256"), text.rfind("sha256")); // the archive's, once
    EXPECT_EQ(encode(*old), encode(*decode_store_record(encode(*old), "'again'")));
}

TEST(Records, AStoreRecordWithAMalformedFileHashIsAnIntegrityError) {
    auto r = sample_store();
    r.files[1].sha256 = "not-a-hash";
    auto back = decode_store_record(encode(r), "'/r/store/e/.cudaenv-complete.json'");
    ASSERT_FALSE(back);
    EXPECT_EQ(back.error().code, ErrorCode::integrity);
    EXPECT_NE(back.error().message.find("lib/libcudart.so.11.8.89"), std::string::npos);
    EXPECT_NE(back.error().message.find("not a SHA-256"), std::string::npos);
}

TEST(Records, VersionRecordRoundTrips) {
    auto r = sample_version();
    auto back = decode_version_record(encode(r), "'x'");
    ASSERT_TRUE(back) << back.error().full_message();
    EXPECT_EQ(encode(*back), encode(r));
    EXPECT_EQ(back->components.at(0).store, "cuda_cudart-11.8.89-bbbbbbbbbbbb");
    EXPECT_EQ(back->cudnn_cuda, "11");
}

// A component from a patch release (install --patch cublas) says so; a record without the field
// (every record before it, and the release's own components) is the release's own.
TEST(Records, VersionComponentPatchIsWrittenOnlyWhenSetAndReadBack) {
    auto r = sample_version();
    EXPECT_EQ(encode(r).find("\"patch\""), std::string::npos);
    r.components.push_back({"libcublas",
                            "13.4.1.2",
                            std::string(64, 'c'),
                            "libcublas-13.4.1.2-cccccccccccc",
                            "cublas 13.4.1"});
    auto text = encode(r);
    EXPECT_NE(text.find("\"patch\": \"cublas 13.4.1\""), std::string::npos);
    auto back = decode_version_record(text, "'x'");
    ASSERT_TRUE(back) << back.error().full_message();
    EXPECT_EQ(back->components.at(0).patch, "");
    EXPECT_EQ(back->components.at(1).patch, "cublas 13.4.1");
    EXPECT_EQ(encode(*back), text);
    auto bad = text;
    bad.replace(bad.find("\"cublas 13.4.1\""), 15, "42");
    auto refused = decode_version_record(bad, "'x'");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("patch"), std::string::npos) << refused.error().message;
}

TEST(Records, StateRoundTripsAndAcceptsTheSchemaLessFirstFormat) {
    State s;
    s.global = "11.8";
    s.previous = Snapshot{"system", "foreign_link", "/opt/cuda", std::string("/x/lib64\n"), {}};
    auto back = decode_state(encode(s), "'state.json'");
    ASSERT_TRUE(back) << back.error().full_message();
    EXPECT_EQ(encode(*back), encode(s));
    auto old = decode_state(R"({"global": "12.4"})", "'state.json'");
    ASSERT_TRUE(old);
    EXPECT_EQ(old->global.value_or(""), "12.4");
}

TEST(Records, AnotherSchemaIsAClearIntegrityError) {
    auto text = encode(sample_version());
    auto at = text.find("cudaenv.version/1");
    text.replace(at, 17, "cudaenv.version/2");
    auto r = decode_version_record(text, "'/r/versions/v/.cudaenv-version.json'");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::integrity);
    EXPECT_NE(r.error().message.find("has schema 'cudaenv.version/2'; this cudaenv reads "
                                     "cudaenv.version/1"),
              std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find("/r/versions/v/.cudaenv-version.json"), std::string::npos);
    auto s = decode_store_record(R"({"schema": "cudaenv.version/1", "files": []})", "'s'");
    ASSERT_FALSE(s); // a version record is no store record
    EXPECT_NE(s.error().message.find("this cudaenv reads cudaenv.store/1"), std::string::npos);
    auto st = decode_state(R"({"schema": "cudaenv.state/9"})", "'state.json'");
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code, ErrorCode::integrity);
}

TEST(Records, MissingSchemaFieldsAndWrongTypesNameTheField) {
    struct Case {
        const char* text;
        const char* says;
    };

    const Case cases[] = {
        {R"({"component": "x"})", "has no 'schema'"},
        {R"([1, 2])", "is not a JSON object"},
        {"{\"schema\": \"cudaenv.store/1\", \"component\": \"c\", \"version\": \"1\", "
         "\"sha256\": \"a\"}",
         "has no 'files' list"},
        {"{\"schema\": \"cudaenv.store/1\", \"component\": 7, \"version\": \"1\", "
         "\"sha256\": \"a\", \"files\": []}",
         "'component' that is not a string"},
        {"{\"schema\": \"cudaenv.store/1\", \"component\": \"c\", \"version\": \"1\", "
         "\"sha256\": \"a\", \"files\": [{\"path\": \"p\", \"type\": \"fifo\"}]}",
         "unknown type 'fifo'"},
        {"{\"schema\": \"cudaenv.store/1\", \"component\": \"c\", \"version\": \"1\", "
         "\"sha256\": \"a\", \"files\": [{\"path\": \"p\", \"type\": \"file\", \"size\": -1}]}",
         "'files[].size' that is not a count"},
        {"{\"schema\": \"cudaenv.store/1\", \"component\": \"c\", \"version\": \"1\", "
         "\"sha256\": \"a\", \"files\": [{\"path\": \"p\", \"type\": \"symlink\"}]}",
         "has no 'files[].target'"},
    };
    for (const auto& c : cases) {
        auto r = decode_store_record(c.text, "'rec'");
        ASSERT_FALSE(r) << c.text;
        EXPECT_EQ(r.error().code, ErrorCode::integrity);
        EXPECT_NE(r.error().message.find(c.says), std::string::npos)
            << c.text << " -> " << r.error().message;
    }
    auto v = decode_version_record(R"({"schema": "cudaenv.version/1", "name": "n", "cuda": "1",
                                       "platform": "p", "components": [{"component": "c"}]})",
                                   "'rec'");
    ASSERT_FALSE(v);
    EXPECT_NE(v.error().message.find("has no 'components[].version'"), std::string::npos)
        << v.error().message;
}

TEST(Records, WrittenAtomicallyIntoTheDirectoryAndReadBack) {
    auto dir = fs::temp_directory_path() / ("records-test-" + random_hex());
    fs::create_directories(dir);
    ASSERT_TRUE(write_version_record(dir, sample_version()));
    ASSERT_TRUE(write_store_record(dir, sample_store()));
    auto v = read_version_record(dir);
    ASSERT_TRUE(v) << v.error().full_message();
    EXPECT_EQ(v->name, "11.8.0+cudnn8.6.0.163");
    auto s = read_store_record(dir);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->files.size(), 4u);
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        (void)e;
        ++n;
    }
    EXPECT_EQ(n, 2u); // no temporary file left beside them
    auto missing = read_version_record(dir / "nope");
    EXPECT_FALSE(missing);
    fs::remove_all(dir);
}

// pins/<hash>.json through the codec: today's schema, 0.1.0's `"schema": 1`, and refusals.
TEST(Records, PinRecordRoundTripsAndReadsTheFirstFormat) {
    auto r = decode_pin_record(encode(PinRecord{"/home/u/proj"}), "pin");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->dir, "/home/u/proj");
    auto legacy = decode_pin_record(R"({"schema": 1, "dir": "/srv/p"})", "pin");
    ASSERT_TRUE(legacy) << legacy.error().message;
    EXPECT_EQ(legacy->dir, "/srv/p");
    for (const char* bad : {R"({"schema": "cudaenv.pin/2", "dir": "/p"})",
                            R"({"schema": 2, "dir": "/p"})",
                            R"({"schema": "cudaenv.pin/1", "dir": "relative"})",
                            R"({"schema": "cudaenv.pin/1"})",
                            "not json"}) {
        auto e = decode_pin_record(bad, "pin");
        ASSERT_FALSE(e) << bad;
        EXPECT_EQ(e.error().code, ErrorCode::integrity) << bad;
    }
}

// indexes/trusted.json through the codec: today's schema, the schema-less first format, and
// entries that would name a file outside indexes/ or carry no hash.
TEST(Records, TrustedIndexesRoundTripAndReadTheFirstFormat) {
    std::string a(64, 'a'), b(64, 'b');
    TrustedIndexes in{{{"cudnn", "9.1.1", b}, {"cuda", "12.9.1", a}}};
    auto text = encode(in);
    EXPECT_NE(text.find("\"schema\": \"cudaenv.trusted/1\""), std::string::npos) << text;
    auto r = decode_trusted_indexes(text, "trusted");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->indexes.size(), 2u);
    EXPECT_EQ(r->indexes[0].product, "cuda"); // sorted by key
    EXPECT_EQ(r->indexes[0].version, "12.9.1");
    EXPECT_EQ(r->indexes[0].sha256, a);
    EXPECT_EQ(r->indexes[1].product, "cudnn");

    auto legacy = decode_trusted_indexes(R"({"cuda/12.9.1": {"sha256": ")" + a + R"("}})", "t");
    ASSERT_TRUE(legacy) << legacy.error().message;
    ASSERT_EQ(legacy->indexes.size(), 1u);
    EXPECT_EQ(legacy->indexes[0].version, "12.9.1");
    auto empty = decode_trusted_indexes("{}", "t");
    ASSERT_TRUE(empty);
    EXPECT_TRUE(empty->indexes.empty());

    std::string sha = "{\"sha256\": \"" + a + "\"}";
    for (std::string bad : {std::string(R"({"cuda/../../etc": )") + sha + "}",
                            std::string(R"({"cuda/.hidden": )") + sha + "}",
                            std::string(R"({"tensorrt/10.0": )") + sha + "}",
                            std::string(R"({"cuda": )") + sha + "}",
                            std::string(R"({"cuda/12.9.1": {"sha256": "ABC"}})"),
                            std::string(R"({"cuda/12.9.1": {}})"),
                            std::string(R"({"cuda/12.9.1": "x"})"),
                            std::string(R"({"schema": "cudaenv.trusted/2", "indexes": {}})"),
                            std::string(R"({"schema": "cudaenv.trusted/1"})"),
                            std::string("[]"),
                            std::string("not json")}) {
        auto e = decode_trusted_indexes(bad, "'trusted.json'");
        ASSERT_FALSE(e) << bad;
        EXPECT_EQ(e.error().code, ErrorCode::integrity) << bad;
        EXPECT_EQ(e.error().message.rfind("'trusted.json'", 0), 0u) << e.error().message;
    }
}

// <mirror>/.cudaenv-mirror.json through the codec: byte-identical round trip, and a damaged
// entry named by its field.
TEST(Records, MirrorRecordRoundTripsAndNamesTheBadField) {
    MirrorRecord in{{{"cuda/redist/redistrib_11.8.0.json", std::string(64, 'c'), 4096, "index"},
                     {"cudnn/x.tar.xz", std::string(64, 'd'), 7, ""}}};
    auto text = encode(in);
    auto r = decode_mirror_record(text, "rec");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->files.size(), 2u);
    EXPECT_EQ(r->files[0].path, in.files[0].path);
    EXPECT_EQ(r->files[0].size, 4096u);
    EXPECT_EQ(r->files[0].what, "index");
    EXPECT_EQ(encode(*r), text);

    struct Case {
        const char* text;
        const char* names;
    } cases[] = {
        {R"({"schema": "cudaenv.mirror/1", "files": [{"sha256": "x", "size": 1}]})",
         "'files[].path'"},
        {R"({"schema": "cudaenv.mirror/1", "files": [{"path": "p", "sha256": "x", "size": -1}]})",
         "'files[].size'"},
        {R"({"schema": "cudaenv.mirror/1", "files": [{"path": "p", "size": 1}]})",
         "'files[].sha256'"},
        {R"({"schema": "cudaenv.mirror/1", "files": {}})", "'files'"},
        {R"({"schema": "cudaenv.mirror/1", "files": [7]})", "'files'"},
        {R"({"schema": "cudaenv.mirror/2", "files": []})", "cudaenv.mirror/2"},
        {R"({"files": []})", "'schema'"},
    };

    for (const auto& c : cases) {
        auto e = decode_mirror_record(c.text, "rec");
        ASSERT_FALSE(e) << c.text;
        EXPECT_EQ(e.error().code, ErrorCode::integrity) << c.text;
        EXPECT_NE(e.error().message.find(c.names), std::string::npos) << e.error().message;
    }
}
