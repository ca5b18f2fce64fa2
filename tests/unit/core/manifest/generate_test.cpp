#include "core/manifest/codec.hpp"
#include "core/manifest/generate.hpp"
#include "core/manifest/nvidia_redist.hpp"
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

// Nothing NVIDIA adds or renames may vanish silently: CUDA 13.3 renamed cuda_cccl to cccl
// (five-part version 13.3.3.3.1) and added cuda_compat_orin (sbsa only, version 13.3.45405995).
TEST(GenerateManifests, NewAndRenamedComponentsAreKeptAndPlaced) {
    fs::path ref = CUDAENV_TEST_REFERENCE;
    if (!fs::is_directory(ref)) {
        GTEST_SKIP() << "reference data not present";
    }
    test::TempDir out;
    fs::copy_file(fs::path(CUDAENV_TEST_MANIFESTS) / "profiles.json", out.path() / "profiles.json");
    auto report = generate_manifests(ref, out.path());
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_TRUE(report->unplaced.empty()) << report->unplaced.front();
    auto cat = load_catalog(out.path());
    ASSERT_TRUE(cat) << cat.error().message;
    const auto* r = cat->newest_cuda(*Version::try_parse("13.3"));
    ASSERT_NE(r, nullptr);
    const auto* cccl = r->component("cccl");
    ASSERT_NE(cccl, nullptr);
    EXPECT_EQ(cccl->version.str(), "13.3.3.3.1");
    EXPECT_EQ(cccl->platforms.size(), 2u);
    const auto* orin = r->component("cuda_compat_orin");
    ASSERT_NE(orin, nullptr);
    EXPECT_EQ(orin->platforms.count("linux-sbsa"), 1u);

    // a profile that forgets the new name is told so, by component and release
    auto profiles = test::read_all(out.path() / "profiles.json");
    auto at = profiles.find("\"cccl\",");
    ASSERT_NE(at, std::string::npos);
    profiles.erase(at, 7);
    out.write("profiles.json", profiles);
    auto again = generate_manifests(ref, out.path());
    ASSERT_TRUE(again);
    ASSERT_EQ(again->unplaced.size(), 1u);
    EXPECT_EQ(again->unplaced[0], "cccl (CUDA 13.3.0)");
}

TEST(GenerateManifests, AComponentWhoseVersionCannotBeReadStopsTheGeneration) {
    // The generator reads NVIDIA's index through this parser: a component with a Linux archive
    // whose version cudaenv cannot read is an error naming it, never a silent drop.
    auto idx = parse_redistrib(R"({"release_label": "13.9.0",
        "cuda_cudart": {"name": "CUDA Runtime", "version": "13.9.20", "linux-x86_64":
            {"relative_path": "cuda_cudart/linux-x86_64/a.tar.xz", "sha256": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "size": "1"}},
        "cccl": {"name": "CCCL", "version": "13.9.1-rc1", "linux-x86_64":
            {"relative_path": "cccl/linux-x86_64/b.tar.xz", "sha256": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "size": "2"}},
        "windows_only": {"name": "W", "version": "x", "windows-x86_64":
            {"relative_path": "w.zip", "sha256": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "size": "3"}}})",
                               "test");
    ASSERT_TRUE(idx) << idx.error().message;
    auto r = cuda_release_from_redist(*idx, "13.9.0", Artifact{});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("component cccl"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("'13.9.1-rc1' cannot be read"), std::string::npos)
        << r.error().message;
}
