#include "core/manifest/nvidia_redist.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

using namespace cudaenv;
using namespace cudaenv::manifest;

namespace {

constexpr const char* k_redist_sha =
    "56129e0c42df03ecb50a7bb23fc3285fa39af1a818f8826b183cf793529098bb";

std::string redist(const std::string& platform_body) {
    return R"({"release_date": "2022-10-03", "cuda_cudart": {"name": "CUDA Runtime",
      "license": "CUDA Toolkit", "version": "11.8.89", "linux-x86_64": )" +
           platform_body + "}}";
}

} // namespace

TEST(NvidiaRedist, ReadsAPlainComponent) {
    auto r = parse_redistrib(redist(std::string(
                                        R"({"relative_path": "cuda_cudart/linux-x86_64/a.tar.xz",
        "sha256": ")") + k_redist_sha +
                                    R"(", "md5": "x", "size": "913876"})"),
                             "t");
    ASSERT_TRUE(r) << r.error().message;
    const auto* c = r->find("cuda_cudart");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->version, "11.8.89");
    const auto& a = c->platforms.at("linux-x86_64").at("");
    EXPECT_EQ(a.relative_path, "cuda_cudart/linux-x86_64/a.tar.xz");
    EXPECT_EQ(a.size, 913876u);
}

TEST(NvidiaRedist, ReadsCudaVariants) {
    auto r = parse_redistrib(
        std::string(R"({"cudnn": {"version": "8.6.0.163", "cuda_variant": ["10", "11"],
        "linux-x86_64": {"cuda11": {"relative_path": "cudnn/a_cuda11.tar.xz", "sha256": ")") +
            k_redist_sha +
            R"(", "size": "1"}, "cuda10": {"relative_path": "cudnn/a_cuda10.tar.xz", "sha256": ")" +
            k_redist_sha + R"(", "size": 2}}}})",
        "t");
    ASSERT_TRUE(r) << r.error().message;
    const auto& p = r->find("cudnn")->platforms.at("linux-x86_64");
    EXPECT_EQ(p.size(), 2u);
    EXPECT_EQ(p.at("cuda10").size, 2u);
    EXPECT_EQ(r->find("cudnn")->cuda_variants, (std::vector<std::string>{"10", "11"}));
}

TEST(NvidiaRedist, FailsClosedOnAMissingHash) {
    auto r = parse_redistrib(redist(R"({"relative_path": "a/b.tar.xz", "size": "1"})"), "t.json");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::integrity);
    EXPECT_NE(r.error().message.find("missing sha256"), std::string::npos);
    EXPECT_NE(r.error().message.find("t.json"), std::string::npos);
}

TEST(NvidiaRedist, RefusesUnsafeRelativePaths) {
    for (const char* path : {"../../etc/passwd",
                             "/abs/a.tar.xz",
                             "a/../../b",
                             "a//b",
                             "",
                             "%2e%2e/%2e%2e/etc/passwd",
                             "a/..%2f..%2fb",
                             "a/%252e%252e/b"}) {
        auto r = parse_redistrib(redist(std::string(R"({"relative_path": ")") + path +
                                        R"(", "sha256": ")" + k_redist_sha + R"("})"),
                                 "t");
        EXPECT_FALSE(r) << path;
    }
}

TEST(NvidiaRedist, RefusesABadHashOrSize) {
    EXPECT_FALSE(parse_redistrib(redist(R"({"relative_path": "a", "sha256": "abc"})"), "t"));
    EXPECT_FALSE(parse_redistrib(redist(std::string(R"({"relative_path": "a", "sha256": ")") +
                                        k_redist_sha + R"(", "size": "-1"})"),
                                 "t"));
}

TEST(NvidiaRedist, RefusesNonJsonAndEmptyIndexes) {
    EXPECT_FALSE(parse_redistrib("<html>404</html>", "t"));
    EXPECT_FALSE(parse_redistrib("[]", "t"));
    EXPECT_FALSE(parse_redistrib(R"({"release_date": "x"})", "t"));
}

// The real format, proven on NVIDIA's real files (data/reference).
TEST(NvidiaRedist, LoadsEveryReferenceRedistribFile) {
    std::filesystem::path ref = CUDAENV_TEST_REFERENCE;
    ASSERT_TRUE(std::filesystem::is_directory(ref)) << ref;
    int cuda = 0;
    int cudnn = 0;
    for (const auto& e : std::filesystem::directory_iterator(ref)) {
        auto name = e.path().filename().string();
        if (name.find("redistrib_") == std::string::npos) {
            continue;
        }
        auto r = parse_redistrib(test::read_all(e.path()), name);
        ASSERT_TRUE(r) << r.error().message;
        if (name.rfind("cuda-", 0) == 0) {
            ++cuda;
            const auto* rt = r->find("cuda_cudart");
            ASSERT_NE(rt, nullptr) << name;
            EXPECT_TRUE(rt->platforms.count("linux-x86_64")) << name;
        } else {
            ++cudnn;
            const auto* c = r->find("cudnn");
            ASSERT_NE(c, nullptr) << name;
            EXPECT_TRUE(c->platforms.count("linux-x86_64")) << name;
        }
    }
    EXPECT_EQ(cuda, 49);
    EXPECT_EQ(cudnn, 32);
}

TEST(NvidiaRedist, ReadsRealFactsOfCuda118) {
    std::filesystem::path f =
        std::filesystem::path(CUDAENV_TEST_REFERENCE) / "cuda-redistrib_11.8.0.json";
    ASSERT_TRUE(std::filesystem::exists(f)) << f;
    auto r = parse_redistrib(test::read_all(f), "11.8.0");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->release_date, "2022-10-03");
    EXPECT_EQ(r->find("cuda_cudart")->version, "11.8.89");
    EXPECT_EQ(r->find("cuda_nvcc")->version, "11.8.89");
    EXPECT_EQ(r->find("cuda_cudart")->platforms.at("linux-x86_64").at("").sha256,
              "56129e0c42df03ecb50a7bb23fc3285fa39af1a818f8826b183cf793529098bb");
}
