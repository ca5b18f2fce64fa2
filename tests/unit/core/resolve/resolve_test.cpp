#include "core/manifest/codec.hpp"
#include "core/resolve/resolve.hpp"

#include <gtest/gtest.h>

using namespace cudaenv;
using namespace cudaenv::manifest;

namespace {

const Catalog& catalog() {
    static const Catalog c = [] {
        auto r = load_catalog(CUDAENV_TEST_MANIFESTS);
        if (!r) {
            ADD_FAILURE() << r.error().message;
            return Catalog{};
        }
        return std::move(r).value();
    }();
    return c;
}

Result<Resolution> run(const std::string& text, ResolveOptions opt = {}) {
    auto spec = parse_spec(text, {"tensorflow", "tf"});
    if (!spec) {
        return std::move(spec).error();
    }
    return resolve(catalog(), *spec, opt);
}

Version v(const char* s) {
    return *Version::try_parse(s);
}

} // namespace

TEST(Resolve, Tensorflow213IsCuda118WithCudnn86ForCuda11) {
    auto r = run("tf-2.13");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->cuda->version.str(), "11.8.0");
    EXPECT_EQ(r->cudnn->version.str(), "8.6.0.163");
    EXPECT_EQ(r->cudnn_build->cuda, "11");
    EXPECT_EQ(r->version_name(), "11.8.0+cudnn8.6.0.163");
    EXPECT_TRUE(r->installable());
    EXPECT_TRUE(r->notes.empty());
    // every archive of the runtime profile, with sizes that add up
    std::uint64_t total = 0;
    bool has_cudnn = false;
    for (const auto& a : r->archives) {
        total += *a.artifact.size;
        has_cudnn = has_cudnn || a.component == "cudnn";
        EXPECT_EQ(a.artifact.path.find("linux-x86_64") != std::string::npos, true) << a.component;
    }
    EXPECT_TRUE(has_cudnn);
    EXPECT_EQ(total, r->total_size);
    EXPECT_EQ(r->cuda->driver_min->str(), "520.61.05");
}

TEST(Resolve, PatchReleasesFallUnderTheirSeries) {
    auto r = run("tensorflow==2.13.1");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->framework_release->series.str(), "2.13");
    EXPECT_EQ(r->version_name(), "11.8.0+cudnn8.6.0.163");
}

TEST(Resolve, EveryTensorflowRowResolvesToItsOwnPair) {
    const auto* tf = catalog().framework("tensorflow");
    ASSERT_NE(tf, nullptr);
    ASSERT_EQ(tf->releases.size(), 25u);
    for (const auto& row : tf->releases) {
        std::string spec = "tf-" + row.series.str();
        auto r = run(spec);
        ASSERT_TRUE(r) << spec << ": " << r.error().full_message();
        EXPECT_TRUE(row.cuda.is_prefix_of(r->cuda->version)) << spec;
        ASSERT_NE(r->cudnn, nullptr) << spec;
        EXPECT_TRUE(row.cudnn.is_prefix_of(r->cudnn->version)) << spec;
        EXPECT_EQ(r->cudnn_build->cuda_major, r->cuda->version.major()) << spec;
        // Rows whose CUDA has redistributable archives are installable; older ones say why not.
        bool redist = r->cuda->source == CudaSource::redist;
        EXPECT_EQ(r->installable(), redist) << spec;
        if (!redist) {
            ASSERT_FALSE(r->not_installable.empty());
            EXPECT_NE(r->not_installable[0].find("runfile"), std::string::npos) << spec;
        }
    }
}

TEST(Resolve, OldTensorflowSaysWhatIsNotInstallableYet) {
    auto r = run("tf-2.11");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->cuda->version.str(), "11.2.2");
    EXPECT_EQ(r->cudnn->version.str(), "8.1.1.33");
    EXPECT_FALSE(r->installable());
    // the cuDNN tarball is still listed for download
    ASSERT_EQ(r->archives.size(), 1u);
    EXPECT_EQ(r->archives[0].component, "cudnn");
}

TEST(Resolve, RefusesACudaFromAnotherMajorForAFramework) {
    ResolveOptions o;
    o.cuda = v("12.2");
    auto r = run("tf-2.13", o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::incompatible);
    EXPECT_NE(r.error().message.find("CUDA 12.2 is incompatible"), std::string::npos);
    ASSERT_FALSE(r.error().hints.empty());
    EXPECT_NE(r.error().hints[0].find("CUDA 11.8 + cuDNN 8.6"), std::string::npos);
}

TEST(Resolve, RefusesAnOlderMinorThanTheFrameworkWasBuiltWith) {
    ResolveOptions o;
    o.cuda = v("11.7");
    auto r = run("tf-2.13", o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::incompatible);
}

TEST(Resolve, AcceptsANewerCudnnMinorWithANote) {
    ResolveOptions o;
    o.cudnn = v("8.9");
    auto r = run("tf-2.13", o);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->cudnn->version.str(), "8.9.7.29");
    ASSERT_EQ(r->notes.size(), 1u);
    EXPECT_NE(r->notes[0].find("not the tested pair"), std::string::npos);
}

TEST(Resolve, RefusesACudnnBuiltForAnotherCudaMajor) {
    auto r = run("12.2+cudnn-8.6");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::incompatible);
    EXPECT_NE(r.error().message.find("built for CUDA 11, 10"), std::string::npos);
    ASSERT_FALSE(r.error().hints.empty());
    EXPECT_NE(r.error().hints[0].find("8.9.7.29"), std::string::npos);
}

TEST(Resolve, PicksTheNewestMatchingRelease) {
    EXPECT_EQ(run("11.8")->cuda->version.str(), "11.8.0");
    EXPECT_EQ(run("12.4")->cuda->version.str(), "12.4.1");
    EXPECT_EQ(run("cuda-12")->cuda->version.str(), "12.9.1");
    auto pair = run("12.4+cudnn-9.1");
    ASSERT_TRUE(pair);
    EXPECT_EQ(pair->cudnn->version.str(), "9.1.1.17");
    EXPECT_EQ(pair->cudnn_build->cuda, "12");
}

TEST(Resolve, CudnnNeedsACuda) {
    auto r = run("cudnn-8.6");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::usage);
    ResolveOptions o;
    o.cuda = v("11.8");
    auto ok = run("cudnn-8.6", o);
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->version_name(), "11.8.0+cudnn8.6.0.163");
}

TEST(Resolve, UnknownThingsAreNotFoundWithSuggestions) {
    auto cuda = run("11.9");
    ASSERT_FALSE(cuda);
    EXPECT_EQ(cuda.error().code, ErrorCode::not_found);
    auto tf = run("tf-2.99");
    ASSERT_FALSE(tf);
    EXPECT_EQ(tf.error().code, ErrorCode::not_found);
    EXPECT_EQ(tf.error().hints[0], "did you mean '2.9'?");
    auto dnn = run("11.8+cudnn-6.5");
    ASSERT_FALSE(dnn);
    EXPECT_EQ(dnn.error().code, ErrorCode::not_found);
}

TEST(Resolve, ProfilesAndPlatformsChangeTheArchives) {
    ResolveOptions devel;
    devel.profile = "devel";
    auto rt = run("12.4");
    auto dv = run("12.4", devel);
    ASSERT_TRUE(rt && dv);
    EXPECT_GT(dv->archives.size(), rt->archives.size());
    ResolveOptions sbsa;
    sbsa.platform = "linux-sbsa";
    auto arm = run("12.4", sbsa);
    ASSERT_TRUE(arm);
    for (const auto& a : arm->archives) {
        EXPECT_NE(a.artifact.path.find("linux-sbsa"), std::string::npos) << a.component;
    }
    ResolveOptions bad;
    bad.profile = "develop";
    auto r = run("12.4", bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::usage);
    EXPECT_EQ(r.error().hints[0], "did you mean 'devel'?");
}

// The refusal matrix: each TensorFlow row's own pair passes, a CUDA from another major fails.
TEST(FrameworkCompat, EveryRowAcceptsItsPairAndRefusesAnotherMajor) {
    const auto* tf = catalog().framework("tensorflow");
    ASSERT_NE(tf, nullptr);
    for (const auto& row : tf->releases) {
        EXPECT_TRUE(check_framework_compat(*tf, row, row.cuda, row.cudnn)) << row.series.str();
        Version other =
            *Version::try_parse(std::to_string(row.cuda.major() == 12 ? 11 : 12) + ".0");
        auto r = check_framework_compat(*tf, row, other, row.cudnn);
        ASSERT_FALSE(r) << row.series.str();
        EXPECT_EQ(r.error().code, ErrorCode::incompatible);
        Version other_dnn = *Version::try_parse(std::to_string(row.cudnn.major() + 1) + ".0");
        EXPECT_FALSE(check_framework_compat(*tf, row, row.cuda, other_dnn)) << row.series.str();
    }
}
