#include "core/manifest/codec.hpp"
#include "core/manifest/generate.hpp"
#include "core/manifest/nvidia_redist.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

using namespace cudaenv;
using namespace cudaenv::manifest;
namespace fs = std::filesystem;

namespace {

std::set<std::string> generated_files(const fs::path& root) {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        // profiles.json and release.json are written by hand, not generated
        if (e.is_regular_file() && e.path().filename() != "profiles.json" &&
            e.path().filename() != "release.json") {
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
    ASSERT_TRUE(fs::is_directory(ref)) << ref;
    test::TempDir t;
    auto report = generate_manifests(ref, t.path());
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_EQ(report->cuda_redist, 49u);
    EXPECT_EQ(report->framework_rows, 25u);
    EXPECT_EQ(report->registry_checked, 45u);
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
    ASSERT_TRUE(fs::is_directory(ref)) << ref;
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
    ASSERT_TRUE(fs::is_directory(ref)) << ref;
    test::TempDir copy;
    fs::copy(ref, copy.path(), fs::copy_options::recursive | fs::copy_options::overwrite_existing);
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
    ASSERT_TRUE(fs::is_directory(ref)) << ref;
    test::TempDir out;
    fs::copy_file(fs::path(CUDAENV_TEST_MANIFESTS) / "profiles.json", out.path() / "profiles.json");
    auto report = generate_manifests(ref, out.path());
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_TRUE(report->unplaced.empty()) << report->unplaced.front();
    auto cat = load_catalog(out.path());
    ASSERT_TRUE(cat) << cat.error().message;
    const auto* r = cat->find_cuda(*Version::try_parse("13.3.0"));
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
    EXPECT_EQ(again->unplaced[0], "cccl (CUDA 13.3.0, 13.3.1, 13.4.1, 13.4.2)");
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

// Every GPU row's minimum driver, against NVIDIA's Table 3 for the CUDA that first built for its
// architecture, written out here by hand: Turing sm_75 came with CUDA 10.0 (410.48), Ampere
// sm_80 with 11.0 (450.51.05 at 11.0.2 GA; the 11.0.1 RC's 450.36.06 does not count), sm_86 with
// 11.1 (455.23), Ada sm_89 and Hopper sm_90 with 11.8 (520.61.05), Blackwell sm_100/sm_120 with
// 12.8 (570.26), sm_103/sm_121 with 12.9 (575.51.03). Older SMs predate the table; Jetson
// modules take their driver from JetPack: neither has a minimum.
TEST(GenerateManifests, EveryGpuRowHasTheMinimumDriverOfItsArchitecture) {
    fs::path committed = CUDAENV_TEST_MANIFESTS;
    auto doc = parse_json_text(test::read_all(committed / "gpus.json"), "gpus.json");
    ASSERT_TRUE(doc);
    auto gpus = parse_gpus(*doc, "gpus.json");
    ASSERT_TRUE(gpus) << gpus.error().message;
    const std::map<unsigned, std::string> expected = {{75, "410.48"},
                                                      {80, "450.51.05"},
                                                      {86, "455.23"},
                                                      {89, "520.61.05"},
                                                      {90, "520.61.05"},
                                                      {100, "570.26"},
                                                      {120, "570.26"},
                                                      {103, "575.51.03"},
                                                      {121, "575.51.03"}};
    std::size_t with_minimum = 0;
    for (const auto& g : *gpus) {
        auto it = expected.find(g.compute_capability);
        if (g.name.rfind("Jetson", 0) == 0 || it == expected.end()) {
            EXPECT_FALSE(g.min_driver) << g.name << " has " << g.min_driver->str();
            continue;
        }
        ASSERT_TRUE(g.min_driver) << g.name;
        EXPECT_EQ(g.min_driver->str(), it->second) << g.name;
        EXPECT_NE(g.min_driver_basis.find("sm_" + std::to_string(g.compute_capability)),
                  std::string::npos)
            << g.name << ": " << g.min_driver_basis;
        ++with_minimum;
    }
    EXPECT_EQ(with_minimum, 39u); // of 60 rows: 15 predate the table, 6 are Jetson
}

// From 13.4 NVIDIA's index has no nvidia_driver, cuda_compat or fabricmanager, adds
// windows-arm64 and renames some `name` fields: the release is generated all the same, its
// minimum driver from the driver branch the release notes name (cudaenv-supplement.json).
TEST(GenerateManifests, Cuda134WithoutDriverComponentsTakesItsBranch) {
    auto cat = load_catalog(CUDAENV_TEST_MANIFESTS);
    ASSERT_TRUE(cat) << cat.error().message;
    const auto* r = cat->find_cuda(*Version::try_parse("13.4.2"));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->release_date, "2026-09-16");
    EXPECT_EQ(r->component("nvidia_driver"), nullptr);
    EXPECT_EQ(r->component("cuda_compat"), nullptr);
    EXPECT_NE(r->component("cuda_nvcc"), nullptr);
    EXPECT_EQ(r->driver_min->str(), "615");
    EXPECT_EQ(r->driver_min_source, "branch:R615");
    EXPECT_NE(r->driver_min_basis.find("Corresponding Driver Branch"), std::string::npos);
    EXPECT_EQ(r->driver_compat_min->str(), "580.65.06");
    EXPECT_EQ(r->gcc_max->str(), "16");
    EXPECT_EQ(r->clang_max->str(), "22");
    EXPECT_EQ(r->sm->min, 75u);
    for (const auto& c : r->components) {
        EXPECT_EQ(c.platforms.count("windows-arm64"), 0u) << c.name;
    }
    // a release with its own Table 3 row in the supplement, and its source
    const auto* r132 = cat->find_cuda(*Version::try_parse("13.2.2"));
    ASSERT_NE(r132, nullptr);
    EXPECT_EQ(r132->driver_min->str(), "595.71.05");
    EXPECT_EQ(r132->driver_min_source, "table3");
    // the nine releases that were index-pinned are described in full now
    for (const char* v : {"12.8.2",
                          "12.9.2",
                          "13.0.1",
                          "13.0.2",
                          "13.0.3",
                          "13.1.1",
                          "13.1.2",
                          "13.2.0",
                          "13.2.1"}) {
        const auto* x = cat->find_cuda(*Version::try_parse(v));
        ASSERT_NE(x, nullptr) << v;
        EXPECT_FALSE(x->components.empty()) << v;
        EXPECT_EQ(cat->pinned_index("cuda", *Version::try_parse(v)), nullptr) << v;
    }
}

TEST(GenerateManifests, Cudnn927FromAnIndexFactsDoNotListCarriesCudnnJit) {
    auto cat = load_catalog(CUDAENV_TEST_MANIFESTS);
    ASSERT_TRUE(cat) << cat.error().message;
    const auto* r = cat->newest_cudnn(*Version::try_parse("9.27"));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->version.str(), "9.27.0.42");
    EXPECT_EQ(r->release_date, "2026-09-29");
    ASSERT_EQ(r->builds.size(), 2u);
    for (const auto& b : r->builds) {
        ASSERT_EQ(b.extras.count("cudnn_jit"), 1u) << b.cuda;
        EXPECT_EQ(b.extras.at("cudnn_jit").count("linux-x86_64"), 1u);
        EXPECT_EQ(b.extras.at("cudnn_jit").count("linux-sbsa"), 1u);
        EXPECT_EQ(b.extras.count("cudnn_samples"), 0u);
    }
}

// How the new minimums were checked: every minimum is at most the driver NVIDIA bundles with the
// release (its index's nvidia_driver, where it still has one), and each Table 3 row the
// supplement adds (13.2.1-13.3.1) equals that bundled driver exactly.
TEST(GenerateManifests, DriverMinimumsAgreeWithTheDriversNvidiaBundles) {
    fs::path ref = CUDAENV_TEST_REFERENCE;
    auto cat = load_catalog(CUDAENV_TEST_MANIFESTS);
    ASSERT_TRUE(cat) << cat.error().message;
    int checked = 0;
    for (const auto& r : cat->cuda) {
        auto file = ref / ("cuda-redistrib_" + r.version.str() + ".json");
        if (r.source != CudaSource::redist || !fs::exists(file) || !r.driver_min) {
            continue;
        }
        auto idx = parse_redistrib(test::read_all(file), file.string());
        ASSERT_TRUE(idx) << idx.error().message;
        const auto* drv = idx->find("nvidia_driver");
        if (!drv) {
            EXPECT_TRUE(Version::compare_numeric(r.version, *Version::try_parse("13.4")) >= 0)
                << r.version.str() << " has no nvidia_driver: only 13.4 and later drop it";
            continue;
        }
        auto bundled = *Version::try_parse(drv->version);
        EXPECT_TRUE(Version::compare_numeric(*r.driver_min, bundled) <= 0)
            << r.version.str() << ": minimum " << r.driver_min->str() << " above the bundled "
            << bundled.str();
        if (r.driver_min_basis.find("supplement") != std::string::npos ||
            (r.version.major() == 13 && r.driver_min_source == "table3" &&
             !r.driver_min_basis.empty())) {
            EXPECT_EQ(r.driver_min->str(), bundled.str()) << r.version.str();
        }
        ++checked;
    }
    EXPECT_GE(checked, 45);
}

// cuDNN 9.21.0 and 9.23.0-9.28.1 from the opening of NVIDIA's index pages: the archives shown
// (with NVIDIA's sha256 and size), the release date, and what the excerpt does not show marked
// not known; 9.21.0.82, known before by its hashes alone (Spack), is completed, not replaced.
TEST(GenerateManifests, CudnnExcerptsAreKnownInPart) {
    auto cat = load_catalog(CUDAENV_TEST_MANIFESTS);
    ASSERT_TRUE(cat) << cat.error().message;
    for (const char* v : {"9.21.0.82",
                          "9.23.0.39",
                          "9.23.1.3",
                          "9.23.2.1",
                          "9.24.0.43",
                          "9.24.1.1",
                          "9.25.0.15",
                          "9.25.1.1",
                          "9.26.0.51",
                          "9.26.1.1",
                          "9.28.0.42",
                          "9.28.1.4"}) {
        const auto* r = cat->newest_cudnn(*Version::try_parse(v));
        ASSERT_NE(r, nullptr) << v;
        ASSERT_TRUE(r->known_in_part) << v;
        EXPECT_FALSE(r->release_date.empty()) << v;
        EXPECT_TRUE(r->redistrib.empty()) << v; // the index's bytes are not known: no pin
        EXPECT_EQ(r->known_in_part->components,
                  (std::vector<std::string>{"cudnn_jit", "cudnn_samples"}));
        for (const auto& b : r->builds) {
            EXPECT_TRUE(b.extras.empty());
            for (const auto& [p, a] : b.platforms) {
                // the one archive the excerpts do not show (Spack's hash) has no size
                bool spack = std::string(v) == "9.21.0.82" && b.cuda == "13" && p == "linux-sbsa";
                EXPECT_EQ(a.size.has_value(), !spack) << v << " " << b.cuda << " " << p;
                EXPECT_FALSE(a.path.empty());
            }
        }
        bool sbsa13 = r->build_for(*Version::try_parse("13.0"))->platforms.count("linux-sbsa");
        // 9.21.0's SBSA build for CUDA 13 is known from Spack's hash; the others' is not known
        EXPECT_EQ(sbsa13, std::string(v) == "9.21.0.82") << v;
        EXPECT_EQ(r->build_unknown("13", "linux-sbsa"), !sbsa13) << v;
        EXPECT_FALSE(r->build_unknown("12", "linux-sbsa")) << v;
    }
    // releases with a saved index (9.22.0, 9.27.0) stay known in full
    EXPECT_FALSE(cat->newest_cudnn(*Version::try_parse("9.22.0"))->known_in_part);
    EXPECT_FALSE(cat->newest_cudnn(*Version::try_parse("9.27.0"))->known_in_part);
}

// An excerpt whose sha256 disagrees with what a saved index or facts.json already say stops
// the generator: two sources for one archive must agree.
TEST(GenerateManifests, ACudnnExcerptThatDisagreesStopsTheGenerator) {
    fs::path ref = CUDAENV_TEST_REFERENCE;
    test::TempDir copy;
    fs::copy(ref, copy.path(), fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    auto f = copy.path() / "cudnn-redist-excerpts-2026.json";
    auto text = test::read_all(f);
    // 9.21.0.82's x86_64 CUDA 13 archive, which facts.json knows by Spack's hash
    auto at = text.find("f52b44a8cd5e9560ace9e2656771b2f03598ddee2cf41cf252b8a29867e5381c");
    ASSERT_NE(at, std::string::npos);
    text[at] = 'e';
    copy.write("cudnn-redist-excerpts-2026.json", text);
    test::TempDir out;
    auto r = generate_manifests(copy.path(), out.path());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("disagrees"), std::string::npos) << r.error().message;
}
