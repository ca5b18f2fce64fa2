#include "core/manifest/codec.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace cudaenv;
using namespace cudaenv::manifest;
using nlohmann::json;

namespace {

constexpr const char* k_sha = "56129e0c42df03ecb50a7bb23fc3285fa39af1a818f8826b183cf793529098bb";

json minimal_cuda() {
    return json::parse(std::string(R"({
      "schema": "cudaenv.manifest/1", "kind": "cuda", "version": "11.8.0", "source": "redist",
      "redistrib": {"path": "cuda/redist/redistrib_11.8.0.json", "sha256": ")") +
                       k_sha + R"(", "size": 10},
      "components": {"cuda_cudart": {"version": "11.8.89", "platforms": {"linux-x86_64": {
        "path": "cuda/redist/cuda_cudart/linux-x86_64/x.tar.xz", "sha256": ")" +
                       k_sha + R"(", "size": "913876"}}}}})");
}

/// A manifests dir with the built-in profiles and rules and one CUDA release.
void make_dir(const test::TempDir& t, const json& cuda, const std::string& name = "11.8.0.json") {
    std::filesystem::path builtin = CUDAENV_TEST_MANIFESTS;
    t.write("profiles.json", test::read_all(builtin / "profiles.json"));
    t.write("rules.json", test::read_all(builtin / "rules.json"));
    t.write("cuda/" + name, cuda.dump());
}

std::string load_error(const test::TempDir& t) {
    auto r = load_catalog(t.path());
    EXPECT_FALSE(r);
    if (r) {
        return {};
    }
    EXPECT_EQ(r.error().code, ErrorCode::integrity);
    return r.error().message;
}

} // namespace

TEST(ManifestLoad, ReadsAMinimalDirectory) {
    test::TempDir t;
    make_dir(t, minimal_cuda());
    auto r = load_catalog(t.path());
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->cuda.size(), 1u);
    const auto* rt = r->cuda[0].component("cuda_cudart");
    ASSERT_NE(rt, nullptr);
    EXPECT_EQ(rt->platforms.at("linux-x86_64").size, 913876u); // a string size is accepted
}

TEST(ManifestLoad, RefusesBadJson) {
    test::TempDir t;
    make_dir(t, minimal_cuda());
    t.write("cuda/11.8.0.json", "{\"schema\": ");
    EXPECT_NE(load_error(t).find("invalid JSON"), std::string::npos);
}

TEST(ManifestLoad, RefusesAMissingHash) {
    test::TempDir t;
    auto doc = minimal_cuda();
    doc["components"]["cuda_cudart"]["platforms"]["linux-x86_64"].erase("sha256");
    make_dir(t, doc);
    auto msg = load_error(t);
    EXPECT_NE(msg.find("missing sha256"), std::string::npos) << msg;
    EXPECT_NE(msg.find("11.8.0.json"), std::string::npos) << msg;
}

TEST(ManifestLoad, RefusesAMalformedHash) {
    test::TempDir t;
    auto doc = minimal_cuda();
    doc["redistrib"]["sha256"] = "ABC";
    make_dir(t, doc);
    EXPECT_NE(load_error(t).find("not 64 lowercase hex"), std::string::npos);
}

TEST(ManifestLoad, RefusesAnUnknownSchemaVersion) {
    test::TempDir t;
    auto doc = minimal_cuda();
    doc["schema"] = "cudaenv.manifest/2";
    make_dir(t, doc);
    auto r = load_catalog(t.path());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("unknown schema 'cudaenv.manifest/2'"), std::string::npos);
    EXPECT_FALSE(r.error().hints.empty());
}

TEST(ManifestLoad, RefusesAMissingSchema) {
    test::TempDir t;
    auto doc = minimal_cuda();
    doc.erase("schema");
    make_dir(t, doc);
    EXPECT_NE(load_error(t).find("no 'schema'"), std::string::npos);
}

TEST(ManifestLoad, RefusesPathsThatLeaveTheBase) {
    for (const char* bad : {"cuda/redist/../../../etc/passwd", "/etc/passwd", "a/./b", "a\\b"}) {
        test::TempDir t;
        auto doc = minimal_cuda();
        doc["components"]["cuda_cudart"]["platforms"]["linux-x86_64"]["path"] = bad;
        make_dir(t, doc);
        EXPECT_NE(load_error(t).find("unsafe or malformed path"), std::string::npos) << bad;
    }
}

TEST(ManifestLoad, RefusesAFileNamedForAnotherVersion) {
    test::TempDir t;
    make_dir(t, minimal_cuda(), "12.0.0.json");
    EXPECT_NE(load_error(t).find("is named '12.0.0.json'"), std::string::npos);
}

TEST(ManifestLoad, RefusesAnUnknownSource) {
    test::TempDir t;
    auto doc = minimal_cuda();
    doc["source"] = "conda";
    make_dir(t, doc);
    EXPECT_NE(load_error(t).find("unknown source 'conda'"), std::string::npos);
}

TEST(ManifestLoad, IgnoresUnknownKeys) {
    test::TempDir t;
    auto doc = minimal_cuda();
    doc["future_field"] = {{"x", 1}};
    doc["components"]["cuda_cudart"]["md5"] = "whatever";
    make_dir(t, doc);
    EXPECT_TRUE(load_catalog(t.path()));
}

TEST(ManifestLoad, RefusesAMissingDirectory) {
    auto r = load_catalog("/nonexistent/cudaenv-manifests");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::integrity);
}

TEST(ManifestLoad, RefusesAProfileIncludingAnUndefinedOne) {
    test::TempDir t;
    make_dir(t, minimal_cuda());
    t.write("profiles.json", R"({"schema": "cudaenv.manifest/1", "kind": "profiles",
      "profiles": [{"name": "a", "includes": ["b"], "components": []}]})");
    EXPECT_NE(load_error(t).find("includes 'b'"), std::string::npos);
}

TEST(ManifestPaths, SafeRelativePaths) {
    EXPECT_TRUE(is_safe_relative_path("cuda/redist/a-1.2.tar.xz"));
    for (const char* bad : {"", "/a", "a/../b", "..", "a/", "a//b", "./a", "a\\b", "a\nb"}) {
        EXPECT_FALSE(is_safe_relative_path(bad)) << bad;
    }
}

// Encodings a server may decode into a climb or a separator are refused before a URL exists.
TEST(ManifestPaths, EncodedTraversalIsRefused) {
    for (const char* bad : {"%2e%2e/etc/passwd",
                            "%2E%2E/x",
                            "..%2fx",
                            "a/..%2F..%2Fx",
                            "a/%252e%252e/x",
                            "a/%5c..%5cx",
                            "a/.%2e/x",
                            "a/x?../../y",
                            "a/x#/../y",
                            "a;/../x",
                            "a/ /x",
                            "a/\xc0\xae\xc0\xae/x",         // overlong UTF-8 '.'
                            "a/\xe2\x80\xa4\xe2\x80\xa4/x", // one-dot leaders
                            "http://evil/x"}) {
        EXPECT_FALSE(is_safe_relative_path(bad)) << bad;
        auto url = join_url("https://mirror.example/nvidia", bad, "test");
        ASSERT_FALSE(url) << bad;
        EXPECT_EQ(url.error().code, ErrorCode::integrity);
        EXPECT_EQ(url.error().message.find('\n'), std::string::npos);
    }
    auto ok =
        join_url("https://m/x/", "cuda/redist/cuda_cudart/linux-x86_64/a-11.8.89.tar.xz", "t");
    ASSERT_TRUE(ok);
    EXPECT_EQ(*ok, "https://m/x/cuda/redist/cuda_cudart/linux-x86_64/a-11.8.89.tar.xz");
}

TEST(ManifestPaths, ArtifactUrlsAreHttpsWithoutEncodedClimbs) {
    EXPECT_TRUE(is_safe_https_url("https://developer.download.nvidia.com/compute/cudnn/a.tar.xz"));
    for (const char* bad : {"http://x/a.tar.xz",
                            "https://x/a/../b.tar.xz",
                            "https://x/a/%2e%2e/b.tar.xz",
                            "https://x/a/%2F/b",
                            "https://x/a/%252e/b",
                            "https://x/a\\b",
                            "https://x/a b",
                            "https://x/a/..",
                            "https://x//etc/passwd"}) {
        EXPECT_FALSE(is_safe_https_url(bad)) << bad;
    }
}

// Every built-in manifest loads and survives a write/read round trip unchanged.
TEST(BuiltinManifests, LoadAndRoundTrip) {
    auto r = load_catalog(CUDAENV_TEST_MANIFESTS);
    ASSERT_TRUE(r) << r.error().message;
    const auto& c = *r;
    EXPECT_GE(c.cuda.size(), 36u);
    EXPECT_GE(c.cudnn.size(), 60u);
    ASSERT_EQ(c.frameworks.size(), 3u); // jax, pytorch, tensorflow
    EXPECT_GE(c.gpus.size(), 60u);
    for (const auto& rel : c.cuda) {
        auto j = json::parse(to_json(rel).dump());
        auto back = parse_cuda_release(j, rel.version.str());
        ASSERT_TRUE(back) << back.error().message;
        EXPECT_EQ(to_json(*back).dump(), to_json(rel).dump());
    }
    for (const auto& rel : c.cudnn) {
        auto back = parse_cudnn_release(json::parse(to_json(rel).dump()), rel.version.str());
        ASSERT_TRUE(back) << back.error().message;
        EXPECT_EQ(to_json(*back).dump(), to_json(rel).dump());
    }
    for (const auto& f : c.frameworks) {
        auto fw = parse_framework(json::parse(to_json(f).dump()), f.name);
        ASSERT_TRUE(fw) << fw.error().message;
        EXPECT_EQ(to_json(*fw).dump(), to_json(f).dump());
    }
}

// A variant row is refused when its default is not one of its variants, or when its tag is not
// a plain lower-case word (it lands in SPECs and pip index URLs).
TEST(FrameworkVariants, BadRowsAreIntegrityErrors) {
    auto doc = [](const std::string& def, const std::string& tag) {
        return json::parse(R"({"schema":"cudaenv.manifest/1","kind":"framework","name":"pytorch",
            "releases":[{"series":"2.5","tested":"2.5.0","cuda":"12.4","cudnn":"9.1",
            "default_variant":")" +
                           def + R"(","variants":[{"tag":")" + tag +
                           R"(","cuda":"12.4","cudnn":"9.1.0.70",
            "sources":{"cuda":{"text":"t","primary":true}}}]}]})");
    };
    auto good = parse_framework(doc("cu124", "cu124"), "t");
    ASSERT_TRUE(good) << good.error().message;
    EXPECT_EQ(good->releases[0].default_one()->cudnn->str(), "9.1.0.70");
    EXPECT_TRUE(good->releases[0].default_one()->sources.at("cuda").primary);
    for (auto [def, tag] : {std::pair<std::string, std::string>{"cu121", "cu124"},
                            {"cu124", "cu 124"},
                            {"cu124", "../x"}}) {
        auto bad = parse_framework(doc(def, tag), "t");
        ASSERT_FALSE(bad) << def << " " << tag;
        EXPECT_EQ(bad.error().code, ErrorCode::integrity);
    }
}

TEST(BuiltinManifests, HoldTheFactsTheIssueNames) {
    auto r = load_catalog(CUDAENV_TEST_MANIFESTS);
    ASSERT_TRUE(r);
    const auto* cuda = r->find_cuda(*Version::try_parse("11.8.0"));
    ASSERT_NE(cuda, nullptr);
    EXPECT_EQ(cuda->driver_min->str(), "520.61.05");
    EXPECT_EQ(cuda->driver_compat_min->str(), "450.80.02");
    EXPECT_EQ(cuda->sm->min, 35u);
    EXPECT_EQ(cuda->sm->max, 90u);
    EXPECT_EQ(cuda->gcc_max->str(), "11");
    EXPECT_EQ(cuda->redistrib->sha256,
              "941a950a4ab3b95311c50df7b3c8bca973e0cdda76fc2f4b456d2d5e4dac0281");
    const auto* old = r->find_cuda(*Version::try_parse("11.2.2"));
    ASSERT_NE(old, nullptr);
    EXPECT_EQ(old->source, CudaSource::runfile);
    EXPECT_TRUE(old->runfiles.count("linux-x86_64"));
    EXPECT_EQ(r->rules.cudnn_sublibraries.at(8).size(), 7u);
    EXPECT_EQ(r->rules.cudnn_sublibraries.at(9).size(), 8u);
    EXPECT_EQ(r->rules.cudnn_version_header.at(7), "cudnn.h");
    bool h100 = false;
    for (const auto& g : r->gpus) {
        h100 = h100 || (g.name == "NVIDIA H100" && g.compute_capability == 90);
    }
    EXPECT_TRUE(h100);
}

TEST(BuiltinManifests, ProfilesNestAndFullExcludesDriverParts) {
    auto r = load_catalog(CUDAENV_TEST_MANIFESTS);
    ASSERT_TRUE(r);
    const auto* cuda = r->newest_cuda(*Version::try_parse("12.4"));
    ASSERT_NE(cuda, nullptr);
    auto runtime = r->profile_components(*r->profile("runtime"), *cuda);
    auto devel = r->profile_components(*r->profile("devel"), *cuda);
    auto full = r->profile_components(*r->profile("full"), *cuda);
    EXPECT_LT(runtime.size(), devel.size());
    EXPECT_LT(devel.size(), full.size());
    for (const auto& c : runtime) {
        EXPECT_NE(std::find(devel.begin(), devel.end(), c), devel.end()) << c;
        EXPECT_NE(std::find(full.begin(), full.end(), c), full.end()) << c;
    }
    for (const char* must :
         {"cuda_cudart", "cuda_nvcc", "libcublas", "libnvjitlink", "cuda_cupti"}) {
        EXPECT_NE(std::find(runtime.begin(), runtime.end(), must), runtime.end()) << must;
    }
    for (const char* never : {"nvidia_driver", "nvidia_fs", "fabricmanager", "cuda_compat"}) {
        EXPECT_EQ(std::find(full.begin(), full.end(), never), full.end()) << never;
    }
}

// The shim reads one framework's table for a `tf-2.13` in .cuda-version: PyTorch's and JAX's
// (200 KB) are passed over by their heads, and an alias finds its file.
TEST(BuiltinManifests, LoadFrameworksForOneName) {
    auto names = [](const char* only) {
        std::vector<std::string> out;
        auto fws = load_frameworks(CUDAENV_TEST_MANIFESTS, only);
        EXPECT_TRUE(fws) << only;
        for (const auto& f : fws ? *fws : std::vector<Framework>{}) {
            out.push_back(f.name);
        }
        return out;
    };
    EXPECT_EQ(names("tf"), std::vector<std::string>{"tensorflow"});
    EXPECT_EQ(names("tensorflow"), std::vector<std::string>{"tensorflow"});
    EXPECT_EQ(names("torch"), std::vector<std::string>{"pytorch"});
    EXPECT_EQ(names("jaxlib"), std::vector<std::string>{"jax"});
    EXPECT_EQ(names("").size(), 3u);
    EXPECT_TRUE(names("mxnet").empty());
}

// A cuDNN release known in part says what is not known; a malformed statement of it is refused
// like any other field (an unsafe index path, a platform cudaenv does not know).
TEST(ManifestLoad, KnownInPartIsReadAndChecked) {
    auto doc = json::parse(std::string(R"({
      "schema": "cudaenv.manifest/1", "kind": "cudnn", "version": "9.24.0.43", "major": 9,
      "layout": "redist", "builds": [{"cuda": "13", "platforms": {"linux-x86_64": {
        "path": "cudnn/redist/cudnn/x.tar.xz", "sha256": ")") +
                           k_sha + R"(", "size": 1}}}],
      "known_in_part": {"index": "cudnn/redist/redistrib_9.24.0.json", "source": "excerpt",
        "unknown_builds": [{"cuda": "13", "platform": "linux-sbsa"}],
        "unknown_components": ["cudnn_jit"]}})");
    auto r = parse_cudnn_release(doc, "9.24.0.43.json");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(r->build_unknown("13", "linux-sbsa"));
    EXPECT_FALSE(r->build_unknown("13", "linux-x86_64"));
    EXPECT_FALSE(r->build_unknown("12", "linux-sbsa"));
    EXPECT_EQ(r->known_in_part->components, std::vector<std::string>{"cudnn_jit"});
    for (auto [key, bad] : {std::pair{"/index", json("../redistrib_9.24.0.json")},
                            std::pair{"/unknown_builds/0/platform", json("windows-x86_64")},
                            std::pair{"/source", json("")}}) {
        auto broken = doc;
        broken["known_in_part"][json::json_pointer(key)] = bad;
        auto e = parse_cudnn_release(broken, "9.24.0.43.json");
        ASSERT_FALSE(e) << key;
        EXPECT_EQ(e.error().code, ErrorCode::integrity);
        EXPECT_TRUE(e.error().message.find("known_in_part") != std::string::npos ||
                    e.error().message.find("'source'") != std::string::npos)
            << e.error().message;
    }
    auto plain = doc;
    plain.erase("known_in_part");
    EXPECT_FALSE(parse_cudnn_release(plain, "9.24.0.43.json")->build_unknown("13", "linux-sbsa"));
}
