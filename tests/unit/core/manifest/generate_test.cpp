#include "core/manifest/codec.hpp"
#include "core/manifest/generate.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace cudaenv;
using namespace cudaenv::manifest;
namespace fs = std::filesystem;

namespace {

std::set<std::string> generated_files(const fs::path& root) {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (e.is_regular_file() && e.path().filename() != "profiles.json") {
            out.insert(fs::relative(e.path(), root).string());
        }
    }
    return out;
}

} // namespace

// The committed manifests are exactly what the generator makes from the reference data: they
// are up to date and nobody edited them by hand.
TEST(GenerateManifests, CommittedManifestsAreUpToDate) {
    fs::path ref = CUDAENV_TEST_REFERENCE;
    if (!fs::is_directory(ref)) {
        GTEST_SKIP() << "reference data not present at " << ref;
    }
    test::TempDir t;
    auto report = generate_manifests(ref, t.path());
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_EQ(report->cuda_redist, 36u);
    EXPECT_EQ(report->framework_rows, 25u);
    EXPECT_EQ(report->registry_checked, 36u);
    fs::path committed = CUDAENV_TEST_MANIFESTS;
    auto made = generated_files(t.path());
    EXPECT_EQ(made, generated_files(committed));
    for (const auto& rel : made) {
        EXPECT_EQ(test::read_all(t.path() / rel), test::read_all(committed / rel))
            << rel << " differs: rerun cudaenv __generate-manifests";
    }
}

TEST(GenerateManifests, IsIdempotentAndRemovesStaleReleases) {
    fs::path ref = CUDAENV_TEST_REFERENCE;
    if (!fs::is_directory(ref)) {
        GTEST_SKIP() << "reference data not present";
    }
    test::TempDir t;
    t.write("cuda/99.0.0.json", "{}");
    ASSERT_TRUE(generate_manifests(ref, t.path()));
    EXPECT_FALSE(fs::exists(t.path() / "cuda/99.0.0.json"));
    auto before = fs::last_write_time(t.path() / "cuda/11.8.0.json");
    ASSERT_TRUE(generate_manifests(ref, t.path()));
    EXPECT_EQ(fs::last_write_time(t.path() / "cuda/11.8.0.json"), before);
}

TEST(GenerateManifests, RefusesARedistribFileThatDisagreesWithTheRegistry) {
    fs::path ref = CUDAENV_TEST_REFERENCE;
    if (!fs::is_directory(ref)) {
        GTEST_SKIP() << "reference data not present";
    }
    test::TempDir copy;
    for (const auto& e : fs::directory_iterator(ref)) {
        fs::copy_file(e.path(), copy.path() / e.path().filename());
    }
    // One byte changed in a file whose sha256 the registry pins.
    auto f = copy.path() / "cuda-redistrib_11.8.0.json";
    auto text = test::read_all(f);
    text[text.find("2022-10-03") + 3] = '3';
    copy.write("cuda-redistrib_11.8.0.json", text);
    test::TempDir out;
    auto r = generate_manifests(copy.path(), out.path());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("registry pins"), std::string::npos);
}
