#include "core/manifest/announced.hpp"
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
    auto spec = parse_spec(text, {"tensorflow", "tf", "pytorch", "torch", "jax", "jaxlib"});
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
        // Every row installs: from redistributable archives, or from CUDA's runfile installer
        // and cuDNN's old .tgz.
        EXPECT_TRUE(r->installable())
            << spec << ": " << (r->not_installable.empty() ? "" : r->not_installable[0]);
        EXPECT_EQ(r->archives.front().runfile.has_value(), r->cuda->source == CudaSource::runfile)
            << spec;
    }
}

TEST(Resolve, ACudnnKnownOnlyByItsHashSaysWhatIsNotInstallable) {
    auto r = run("11.0+cudnn-8.0.2");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->cudnn->version.str(), "8.0.2.39");
    EXPECT_FALSE(r->installable());
    ASSERT_EQ(r->not_installable.size(), 1u);
    EXPECT_NE(r->not_installable[0].find("only its sha256"), std::string::npos);
    // the CUDA runfile is still listed for download
    ASSERT_EQ(r->archives.size(), 1u);
    EXPECT_EQ(r->archives[0].component, "cuda");
}

TEST(Resolve, ACuda11RunfileIsOneArchiveWithTheProfilesComponents) {
    auto r = run("tf-2.11");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->cuda->version.str(), "11.2.2");
    EXPECT_TRUE(r->installable());
    ASSERT_EQ(r->archives.size(), 2u);
    const auto& run_archive = r->archives[0];
    EXPECT_EQ(run_archive.component, "cuda");
    ASSERT_TRUE(run_archive.runfile.has_value());
    EXPECT_FALSE(run_archive.runfile->all);
    EXPECT_EQ(run_archive.runfile->profile, "runtime");
    const auto& names = run_archive.runfile->components;
    for (const char* c : {"cuda_cudart", "cuda_nvcc", "libcublas", "cuda_cupti"}) {
        EXPECT_NE(std::find(names.begin(), names.end(), c), names.end()) << c;
    }
    EXPECT_EQ(std::find(names.begin(), names.end(), "libnpp"), names.end());
    EXPECT_FALSE(r->archives[1].runfile.has_value());

    ResolveOptions o;
    o.profile = "full";
    auto full = run("tf-2.11", o);
    ASSERT_TRUE(full);
    ASSERT_TRUE(full->archives[0].runfile.has_value());
    EXPECT_TRUE(full->archives[0].runfile->all);
    const auto& ex = full->archives[0].runfile->exclude;
    EXPECT_NE(std::find(ex.begin(), ex.end(), "nvidia_driver"), ex.end());
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
    EXPECT_NE(r.error().message.find("built for CUDA 11 (11.0-11.8), 10 (10.2)"), std::string::npos)
        << r.error().message;
    ASSERT_FALSE(r.error().hints.empty());
    EXPECT_NE(r.error().hints[0].find("8.9.7.29"), std::string::npos);
}

TEST(Resolve, PicksTheNewestMatchingRelease) {
    EXPECT_EQ(run("11.8")->cuda->version.str(), "11.8.0");
    EXPECT_EQ(run("12.4")->cuda->version.str(), "12.4.1");
    EXPECT_EQ(run("cuda-12")->cuda->version.str(), "12.9.2");
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

// The audit's verdicts (TensorFlow's tested_build_configs, NVIDIA's cuDNN support matrices and
// release notes), each one a real release pair from the built-in manifests.
TEST(Verdicts, AcceptedButWouldFailAreRefused) {
    struct Case {
        const char* spec;
        const char* cuda;
        const char* why;
    };

    for (const auto& c : {
             Case{"tf-2.1", "10.2", "before CUDA 11 the library sonames carry the minor"},
             Case{"tf-2.3", "10.2", "10.1 exactly"},
             Case{"tf-1.15", "10.1", "10.0 exactly"},
             Case{"tf-2.4", "11.2", "libcusolver.so.10"},
             Case{"tf-2.4", "11.1", "libcusolver.so.10"},
             Case{"10.1+cudnn-8.5", nullptr, "10 (10.2)"},
         }) {
        ResolveOptions o;
        if (c.cuda) {
            o.cuda = v(c.cuda);
        }
        auto r = run(c.spec, o);
        ASSERT_FALSE(r) << c.spec << " --cuda " << (c.cuda ? c.cuda : "");
        EXPECT_EQ(r.error().code, ErrorCode::incompatible) << c.spec;
        EXPECT_NE(r.error().message.find(c.why), std::string::npos) << r.error().message;
    }
    // TF 2.4 keeps its own CUDA 11.0 (no soname changed there)
    ResolveOptions same;
    same.cuda = v("11.0");
    EXPECT_TRUE(run("tf-2.4", same));
}

TEST(Verdicts, RefusedButSupportedAreAccepted) {
    // cuDNN before 8.5 is built per CUDA minor, each build supporting a range back to x.0
    for (const auto& [spec, build, lo, hi] :
         {std::tuple{"11.0+cudnn-8.2", "11.4", "11.0", "11.4"},
          std::tuple{"11.1+cudnn-8.1", "11.2", "11.0", "11.2"},
          std::tuple{"11.3+cudnn-8.3", "11.5", "11.0", "11.6"},
          std::tuple{"11.5+cudnn-8.4", "11.6", "11.0", "11.7"}}) {
        auto r = run(spec);
        ASSERT_TRUE(r) << spec << ": " << r.error().message;
        EXPECT_EQ(r->cudnn_build->cuda, build) << spec;
        EXPECT_EQ(r->cudnn_build->cuda_min->str(), lo) << spec;
        EXPECT_EQ(r->cudnn_build->cuda_max->str(), hi) << spec;
        EXPECT_TRUE(r->cudnn_build->covers(r->cuda->version)) << spec;
        EXPECT_TRUE(r->notes.empty()) << spec << ": " << r->notes.front();
    }
}

TEST(Verdicts, OutsideNvidiasTestedRangeIsSaid) {
    ResolveOptions o;
    o.cuda = v("11.8");
    auto r = run("tf-2.11", o); // keeps cuDNN 8.1.1, whose 11.2 build is for 11.0-11.2
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->cudnn->version.str(), "8.1.1.33");
    bool said = false;
    for (const auto& n : r->notes) {
        said = said || (n.find("11.0-11.2") != std::string::npos &&
                        n.find("outside NVIDIA's tested range") != std::string::npos);
    }
    EXPECT_TRUE(said);
    auto late = run("12.9+cudnn-8.9");
    ASSERT_TRUE(late) << late.error().message;
    ASSERT_FALSE(late->notes.empty());
    EXPECT_NE(late->notes.back().find("12.0-12.2"), std::string::npos) << late->notes.back();
    // inside the range: nothing to say
    auto fine = run("12.2+cudnn-8.9");
    ASSERT_TRUE(fine);
    EXPECT_TRUE(fine->notes.empty());
}

TEST(HostCompilers, PatchReleasesAndEverySourceRecorded) {
    auto limits = [](const char* cuda) {
        const auto* r = catalog().newest_cuda(v(cuda));
        EXPECT_NE(r, nullptr) << cuda;
        return r ? std::pair{r->gcc_max.value_or(Version{}).str(),
                             r->clang_max.value_or(Version{}).str()}
                 : std::pair{std::string(), std::string()};
    };
    EXPECT_EQ(limits("11.4.2").first, "11"); // NVIDIA added GCC 11 in 11.4.1
    EXPECT_EQ(limits("11.5.2").first, "11");
    EXPECT_EQ(limits("11.8.0"), (std::pair<std::string, std::string>{"11", "14"}));
    EXPECT_EQ(limits("12.2.0").second, "15"); // 12.2.1 maxed out at Clang 15
    EXPECT_EQ(limits("12.2.2").second, "16"); // 12.2.2 added Clang 16
    EXPECT_EQ(limits("13.0.0"), (std::pair<std::string, std::string>{"15", "20"}));
    for (const auto& r : catalog().cuda) {
        if (r.gcc_max || r.clang_max) {
            EXPECT_FALSE(r.host_compilers_source.empty()) << r.version.str();
        }
    }
}

// A release the manifests know by its index's sha256 alone resolves like any other: the same
// Resolution (and so the same `resolve --json` schema), with what is known before the index is
// fetched and a field saying so.
TEST(Describe, ACudaKnownByItsIndexAloneHasItsFacts) {
    auto spec = parse_spec("13.1.0");
    ASSERT_TRUE(spec);
    auto d = describe(catalog(), *spec, {});
    ASSERT_TRUE(d) << d.error().message;
    const auto& r = d->res;
    EXPECT_EQ(r.cuda->version.str(), "13.1.0");
    EXPECT_EQ(r.cuda->source, CudaSource::index);
    EXPECT_EQ(r.known(), "index");
    ASSERT_NE(r.cuda_index, nullptr);
    EXPECT_EQ(r.cuda_index->index.path, "cuda/redist/redistrib_13.1.0.json");
    EXPECT_EQ(r.cuda->driver_min->str(), "590.44.01");
    EXPECT_EQ(r.cuda->sm->min, 75u);
    EXPECT_TRUE(r.archives.empty());
    EXPECT_TRUE(r.installable());
    // plain resolve() does not know it: install fetches the index first
    EXPECT_FALSE(resolve(catalog(), *spec, {}));
}

TEST(Describe, APairKeepsItsIndexKnownCudnnHalf) {
    auto spec = parse_spec("12.9+cudnn-9.19.0");
    ASSERT_TRUE(spec);
    auto d = describe(catalog(), *spec, {});
    ASSERT_TRUE(d) << d.error().message;
    const auto& r = d->res;
    EXPECT_EQ(r.cuda->version.str(), "12.9.2");
    EXPECT_EQ(r.cuda->source, CudaSource::redist);
    EXPECT_EQ(r.cudnn, nullptr);
    ASSERT_NE(r.cudnn_index, nullptr);
    EXPECT_EQ(r.cudnn_index->version.str(), "9.19.0");
    EXPECT_EQ(r.known(), "index");
    EXPECT_FALSE(r.archives.empty()); // the CUDA half is known in full
    // a fully known pair is "full"
    auto full = describe(catalog(), *parse_spec("13.2+cudnn-9.27"), {});
    ASSERT_TRUE(full) << full.error().message;
    EXPECT_EQ(full->res.known(), "full");
    EXPECT_EQ(full->res.cudnn->version.str(), "9.27.0.42");
}

// cuDNN 9.20 and later ship cudnn_jit beside cudnn: it is installed with it.
TEST(Resolve, CudnnJitComesWithCudnn) {
    auto r = run("13.4+cudnn-9.27");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->cuda->version.str(), "13.4.2");
    std::vector<std::string> dnn;
    for (const auto& a : r->archives) {
        if (is_cudnn_component(a.component)) {
            dnn.push_back(a.component + " " + a.artifact.path);
        }
    }
    ASSERT_EQ(dnn.size(), 2u);
    EXPECT_EQ(
        dnn[0],
        "cudnn cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.27.0.42_cuda13-archive.tar.xz");
    EXPECT_EQ(dnn[1],
              "cudnn_jit "
              "cudnn/redist/cudnn_jit/linux-x86_64/"
              "cudnn_jit-linux-x86_64-9.27.0.42_cuda13-archive.tar.xz");
    // before 9.20 there is none
    auto old = run("12.8+cudnn-9.8");
    ASSERT_TRUE(old);
    for (const auto& a : old->archives) {
        EXPECT_NE(a.component, "cudnn_jit");
    }
}

// PyTorch and JAX, every row of the built-in manifests: each variant accepts its own CUDA and
// cuDNN; a CUDA of another major is refused; another minor is a note for PyTorch (minor-version
// compatibility) and a CUDA below a JAX floor is refused; a cuDNN of another major is refused.
TEST(FrameworkCompat, EveryVariantAcceptsItsOwnAndRefusesAnotherMajor) {
    for (const char* name : {"pytorch", "jax"}) {
        const auto* fw = catalog().framework(name);
        ASSERT_NE(fw, nullptr) << name;
        for (const char* rule : {"cuda-major"}) {
            ASSERT_NE(fw->rule(rule), nullptr) << name << " " << rule;
            EXPECT_FALSE(fw->rule(rule)->source.empty());
        }
        for (const auto& row : fw->releases) {
            ASSERT_NE(row.default_one(), nullptr) << name << " " << row.series.str();
            for (const auto& var : row.variants) {
                std::string at = std::string(name) + " " + row.series.str() + "+" + var.tag;
                Version own = var.cuda_install.value_or(var.cuda);
                std::vector<std::string> notes;
                EXPECT_TRUE(check_variant_compat(*fw, row, &var, own, var.cudnn, &notes)) << at;
                Version other = v(var.cuda.major() == 12 ? "13.0" : "12.8");
                auto r = check_variant_compat(*fw, row, &var, other, var.cudnn);
                ASSERT_FALSE(r) << at;
                EXPECT_EQ(r.error().code, ErrorCode::incompatible);
                if (var.cudnn) {
                    Version dnn =
                        *Version::try_parse(std::to_string(var.cudnn->major() + 1) + ".0");
                    EXPECT_FALSE(check_variant_compat(*fw, row, &var, own, dnn)) << at;
                }
                if (!var.cuda_floor) {
                    Version next = *Version::try_parse(std::to_string(var.cuda.major()) + "." +
                                                       std::to_string(var.cuda.minor() + 1));
                    notes.clear();
                    EXPECT_TRUE(check_variant_compat(*fw, row, &var, next, std::nullopt, &notes))
                        << at;
                    ASSERT_EQ(notes.size(), 1u) << at;
                    EXPECT_NE(notes[0].find("minor-version compatibility"), std::string::npos);
                } else if (var.cuda.size() >= 2 && var.cuda.minor() > 0) {
                    Version below = *Version::try_parse(std::to_string(var.cuda.major()) + "." +
                                                        std::to_string(var.cuda.minor() - 1));
                    EXPECT_FALSE(check_variant_compat(*fw, row, &var, below, std::nullopt)) << at;
                }
            }
        }
    }
}

// Real releases, real verdicts: the variant PyPI serves, the rule and its source in the refusal.
TEST(FrameworkVerdicts, PyTorchAndJaxReleases) {
    auto r = run("torch-2.5");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->framework_variant->tag, "cu124");
    EXPECT_EQ(r->cuda->version.truncated(2).str(), "12.4");
    EXPECT_EQ(r->cudnn->version.str(), "9.1.0.70");

    r = run("torch-2.5+cu118");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->cuda->version.truncated(2).str(), "11.8");

    ResolveOptions o;
    o.cuda = v("13.0");
    r = run("torch-2.5", o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::incompatible);
    ASSERT_GE(r.error().hints.size(), 2u);
    EXPECT_NE(r.error().hints[1].find("cpp_extension.py"), std::string::npos);

    ResolveOptions dnn;
    dnn.cudnn = v("8.5");
    EXPECT_FALSE(run("torch-2.1+cu118", dnn)); // built with 8.7: minor below
    dnn.cudnn = v("8.9");
    EXPECT_TRUE(run("torch-2.1+cu118", dnn));

    o.cuda = v("12.4");
    r = run("jax-0.9.0", o); // nvcc floor 12.6.85
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("older than its floor"), std::string::npos);
    dnn.cudnn = v("9.1");
    EXPECT_FALSE(run("jax-0.4.26", dnn)); // >=8.9.2.26,<9.0
    dnn.cudnn = v("9.5");
    EXPECT_FALSE(run("jax-0.6.0", dnn)); // >=9.8
    r = run("jax-0.11.0+cuda13");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->cuda->version.major(), 13u);
    EXPECT_FALSE(run("jax-0.6.0+cuda13")); // no such build before 0.7.0
    EXPECT_EQ(run("torch-2.5+cu999").error().code, ErrorCode::not_found);

    // --cuda between two builds takes the older one (an older build runs on a newer CUDA)
    o.cuda = v("12.3");
    r = run("torch-2.5", o);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->framework_variant->tag, "cu121");
    o.cuda = v("12.0"); // below every build of the major: the oldest
    r = run("torch-2.5", o);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->framework_variant->tag, "cu121");
}

TEST(ResolveCompat, AddsTheReleasesCudaCompatArchiveForThePlatform) {
    ResolveOptions o;
    o.compat = true;
    auto r = run("13.3", o);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(r->compat);
    const auto& last = r->archives.back();
    EXPECT_EQ(last.component, "cuda_compat");
    EXPECT_EQ(last.version.str(), "610.43.02");
    EXPECT_NE(last.artifact.path.find("cuda_compat-linux-x86_64-610.43.02_cuda13.3"),
              std::string::npos);
    std::uint64_t total = 0;
    for (const auto& a : r->archives) {
        total += a.artifact.size.value_or(0);
    }
    EXPECT_EQ(total, r->total_size);
    EXPECT_FALSE(run("13.3")->compat); // only when asked: the profiles never take it
    o.platform = "linux-sbsa";
    EXPECT_NE(run("13.3", o)->archives.back().artifact.path.find("linux-sbsa"), std::string::npos);
}

TEST(ResolveCompat, AReleaseWithoutItIsNotFoundAndSaysWhichHaveIt) {
    ResolveOptions o;
    o.compat = true;
    auto r = run("12.4", o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::not_found);
    EXPECT_NE(r.error().message.find("CUDA 12.4.1 has no forward-compatibility libraries "
                                     "(cuda_compat) for linux-x86_64"),
              std::string::npos)
        << r.error().message;
    ASSERT_FALSE(r.error().hints.empty());
    EXPECT_NE(r.error().hints[0].find("in CUDA 13.1.1 to 13.3.1"), std::string::npos)
        << r.error().hints[0];
    EXPECT_NE(r.error().hints[0].find("cuda-compat-12-4"), std::string::npos);
    auto runfile = run("10.2", o);
    ASSERT_FALSE(runfile);
    EXPECT_NE(runfile.error().message.find("runfile installer"), std::string::npos);
}

namespace {

/// The options a command on `host` resolves with: the host's platform per release.
ResolveOptions on(const sys::HostMachine& host, ResolveOptions opt = {}) {
    opt.platform_for = [host](const Version& cuda) {
        return sys::platform_for(
            host, static_cast<int>(cuda.major()), static_cast<int>(cuda.minor()));
    };
    return opt;
}

sys::HostMachine jetson(const char* soc) {
    sys::HostMachine h;
    h.kind = sys::HostKind::jetson;
    h.machine = "aarch64";
    h.jetson = sys::Jetson{
        soc, std::string("nvidia,tegra") + (soc == std::string("thor") ? "264" : "234"), "", ""};
    return h;
}

sys::HostMachine grace() {
    sys::HostMachine h;
    h.kind = sys::HostKind::arm_server;
    h.machine = "aarch64";
    return h;
}

bool only_platform(const Resolution& r, const std::string& platform) {
    for (const auto& a : r.archives) {
        std::string loc = a.artifact.path.empty() ? a.artifact.url : a.artifact.path;
        if (loc.find("/" + platform + "/") == std::string::npos) {
            return false;
        }
    }
    return !r.archives.empty();
}

} // namespace

TEST(ResolveOnAHost, AGraceServerTakesSbsa) {
    auto r = run("tf-2.15", on(grace()));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->platform, "linux-sbsa");
    EXPECT_TRUE(only_platform(*r, "linux-sbsa"));
    EXPECT_TRUE(r->platform_compat.empty());
}

TEST(ResolveOnAHost, AnOrinTakesJetsonArchivesForCuda12) {
    auto r = run("tf-2.15", on(jetson("orin"))); // CUDA 12.2, cuDNN 8.9
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->platform, "linux-aarch64");
    EXPECT_TRUE(only_platform(*r, "linux-aarch64"));
    ASSERT_TRUE(r->cudnn);
    // the newest cuDNN 8.9 with a Jetson build for CUDA 12
    EXPECT_TRUE(r->cudnn_build->platforms.count("linux-aarch64"));
    EXPECT_TRUE(r->installable());
}

TEST(ResolveOnAHost, AnOrinIsRefusedCuda123NamingWhatExists) {
    auto r = run("tf-2.16", on(jetson("orin"))); // TensorFlow 2.16 was built with CUDA 12.3
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::incompatible);
    const auto& m = r.error().message;
    EXPECT_NE(m.find("CUDA 12.3"), std::string::npos) << m;
    EXPECT_NE(m.find("linux-aarch64"), std::string::npos) << m;
    EXPECT_NE(m.find("JetPack"), std::string::npos) << m;
    // from the manifests: the Jetson lines NVIDIA published, 12.3 not among them
    EXPECT_NE(m.find("11.8, 12.0-12.2, 12.4-12.9"), std::string::npos) << m;
    ASSERT_FALSE(r.error().hints.empty());
    EXPECT_NE(r.error().hints[0].find("--cuda 12.4"), std::string::npos) << r.error().hints[0];
}

TEST(ResolveOnAHost, AnOrinOnCuda13TakesSbsaWithCompatOrin) {
    auto r = run("13.2", on(jetson("orin")));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->platform, "linux-sbsa");
    EXPECT_EQ(r->platform_compat, "cuda_compat_orin");
    bool has = false;
    for (const auto& a : r->archives) {
        has = has || a.component == "cuda_compat_orin";
    }
    EXPECT_TRUE(has);

    auto refused = run("13.0", on(jetson("orin")));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::incompatible);
    EXPECT_NE(refused.error().message.find("13.2"), std::string::npos);
}

TEST(ResolveOnAHost, ThorTakesCuda13OnlyAndAMajorPicksWhatItCanRun) {
    auto r = run("13.0", on(jetson("thor")));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->platform, "linux-sbsa");
    EXPECT_TRUE(r->platform_compat.empty());
    auto refused = run("12.6", on(jetson("thor")));
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("JetPack 7"), std::string::npos);
    // "12" on an Orin: the newest 12.x with Jetson archives
    auto twelve = run("12", on(jetson("orin")));
    ASSERT_TRUE(twelve) << twelve.error().message;
    EXPECT_EQ(twelve->platform, "linux-aarch64");
    EXPECT_EQ(twelve->cuda->version.truncated(2).str(), "12.9");
}

TEST(ResolveOnAHost, ACudnnWithoutAJetsonBuildIsRefused) {
    // cuDNN 8.9.7 has no linux-aarch64 build (Jetson's 8.9 builds are 8.9.0 and 8.9.5)
    auto r = run("12.2+cudnn-8.9.7", on(jetson("orin")));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::incompatible);
    EXPECT_NE(r.error().message.find("linux-aarch64"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("8.9.5"), std::string::npos) << r.error().message;
    // the hint takes the newest of the asked series that has one
    ASSERT_FALSE(r.error().hints.empty());
    EXPECT_EQ(r.error().hints[0], "cudaenv resolve 12.2.2+cudnn-8.9.5.30");
}

TEST(ReleasesWithPlatform, JoinsTheCatalogsRuns) {
    EXPECT_EQ(releases_with_platform(catalog(), "linux-aarch64"), "11.8, 12.0-12.2, 12.4-12.9");
    EXPECT_EQ(releases_with_platform(catalog(), "linux-ppc64le"), "");
}

// cuDNN 9.23-9.28 are known from the opening of NVIDIA's index pages alone: the archives shown
// there install, what is not shown is refused as not known (never as absent), and a framework's
// exact pin that cannot be met here is said, with what is used instead and why.
TEST(ResolveKnownInPart, Torch214Cu130GetsTheCudnnItsWheelsPin) {
    auto r = run("torch-2.14+cu130");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_TRUE(r->cudnn);
    EXPECT_EQ(r->cudnn->version.str(), "9.24.0.43");
    EXPECT_TRUE(r->pins_not_met.empty());
    const ResolvedArchive* dnn = nullptr;
    for (const auto& a : r->archives) {
        EXPECT_NE(a.component, "cudnn_jit"); // not known for 9.24.0: never guessed
        if (a.component == "cudnn") {
            dnn = &a;
        }
    }
    ASSERT_TRUE(dnn);
    EXPECT_EQ(dnn->artifact.sha256,
              "63f1900222c69ee7e94583408181ccdb988dc2833531ce6bde0df43bbdd04a6d");
    EXPECT_EQ(dnn->artifact.size, 913717900u);
    bool said = false;
    for (const auto& n : r->notes) {
        said = said || n.find("(cudnn_jit) is not known") != std::string::npos;
    }
    EXPECT_TRUE(said);
}

TEST(ResolveKnownInPart, AnUnknownBuildIsRefusedAsNotKnown) {
    ResolveOptions o;
    o.platform = "linux-sbsa";
    auto r = run("13.0+cudnn-9.24.0", o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::not_found);
    EXPECT_NE(r.error().message.find("cuDNN 9.24.0.43 for CUDA 13 on linux-sbsa is not known"),
              std::string::npos)
        << r.error().message;
    EXPECT_EQ(r.error().message.find("has no"), std::string::npos);
    ASSERT_FALSE(r.error().hints.empty());
    EXPECT_NE(r.error().hints[0].find("+cudnn-9.27.0.42"), std::string::npos) << r.error().hints[0];
    // what the excerpt shows for SBSA (CUDA 12) installs
    auto cuda12 = run("12.9+cudnn-9.24.0", o);
    ASSERT_TRUE(cuda12) << cuda12.error().message;
    EXPECT_EQ(cuda12->archives.back().artifact.sha256,
              "802f6f1138537f5f845322dc27f67a1055047dcb26d37fc2ad94a5e65ef728ee");
    // a plain major passes over the newest releases whose SBSA build is not known, saying so
    auto major = run("13.0+cudnn9", o);
    ASSERT_TRUE(major) << major.error().message;
    EXPECT_EQ(major->cudnn->version.str(), "9.27.0.42");
    bool said = false;
    for (const auto& n : major->notes) {
        said = said || n.find("cuDNN 9.28.1.4 for CUDA 13 on linux-sbsa is not known") == 0;
    }
    EXPECT_TRUE(said);
}

TEST(ResolveKnownInPart, AFrameworkPinNotKnownForThePlatformIsSaid) {
    ResolveOptions o;
    o.platform = "linux-sbsa";
    auto r = run("torch-2.14+cu130", o);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->cudnn->version.str(), "9.27.0.42");
    ASSERT_EQ(r->pins_not_met.size(), 1u);
    const auto& p = r->pins_not_met[0];
    EXPECT_EQ(p.what, "cudnn");
    EXPECT_EQ(p.pinned, "9.24.0.43");
    EXPECT_EQ(p.pin, "nvidia-cudnn-cu13==9.24.0.43");
    EXPECT_EQ(p.used, "9.27.0.42");
    EXPECT_EQ(p.why.rfind("is not known for linux-sbsa", 0), 0u) << p.why;
    EXPECT_NE(pin_not_met_text(p).find("cuDNN 9.27.0.42 is used instead"), std::string::npos);
    // --cudnn names it: no substitute, the refusal
    o.cudnn = v("9.24.0.43");
    auto asked = run("torch-2.14+cu130", o);
    ASSERT_FALSE(asked);
    EXPECT_NE(asked.error().message.find("is not known"), std::string::npos);
}

// From 13.4 cuda_compat is in NVIDIA's per-driver index, not the CUDA index: with no such index
// known, --compat is refused as not known (never as "has none").
TEST(ResolveCompat, From134ItIsNotKnownWithoutThePerDriverIndex) {
    ResolveOptions o;
    o.compat = true;
    auto r = run("13.4", o);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::not_found);
    EXPECT_NE(r.error().message.find("(cuda_compat) for CUDA 13.4 are not known: from CUDA 13.4 "
                                     "NVIDIA ships them in a per-driver index"),
              std::string::npos)
        << r.error().message;
    EXPECT_EQ(r.error().message.find("has no"), std::string::npos);
}

// CUDA 13.5 is released, its index is not known (announced.json): resolve and install refuse it
// as not known (exit 9), with what to install instead; describe shows what is known of it.
TEST(ResolveAnnounced, Cuda135IsReleasedButNotInstallable) {
    auto r = run("13.5");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::not_found);
    EXPECT_EQ(r.error().message,
              "CUDA 13.5 is released, but NVIDIA's index for it is not known to the manifests: "
              "cudaenv cannot install it yet");
    ASSERT_FALSE(r.error().hints.empty());
    EXPECT_EQ(r.error().hints.front(),
              "the newest installable CUDA 13 is 13.4.2: cudaenv install 13.4.2");
    // a full version under it is the same announcement (the label is not known)
    auto full = run("13.5.0");
    ASSERT_FALSE(full);
    EXPECT_NE(full.error().message.find("CUDA 13.5 is released"), std::string::npos);
    // the preview is said as one, with its GA release
    auto preview = run("13.4.0");
    ASSERT_FALSE(preview);
    EXPECT_EQ(preview.error().message,
              "CUDA 13.4.0 was a developer preview, superseded by 13.4.1: NVIDIA published no "
              "index for it");
    // 13.4 is the GA release, and 13 the newest installable, saying 13.5 was passed over
    auto ga = run("13.4");
    ASSERT_TRUE(ga);
    EXPECT_EQ(ga->cuda->version.str(), "13.4.2");
    auto major = run("13");
    ASSERT_TRUE(major);
    EXPECT_EQ(major->cuda->version.str(), "13.4.2");
    ASSERT_FALSE(major->notes.empty());
    EXPECT_NE(major->notes.back().find("CUDA 13.5 is released"), std::string::npos);

    auto spec = parse_spec("13.5", {});
    ASSERT_TRUE(spec);
    auto d = describe(catalog(), *spec, {});
    ASSERT_TRUE(d) << d.error().message;
    ASSERT_NE(d->announced, nullptr);
    EXPECT_EQ(d->res.cuda, nullptr);
    EXPECT_FALSE(d->res.installable());
    EXPECT_EQ(d->announced->driver_branch, 620u);
    EXPECT_TRUE(d->announced->driver_branch_inferred);
    EXPECT_TRUE(d->announced->release_date.empty()); // not read: never guessed
}

// A later manifests set that carries the release (cuda/13.5.0.json) makes it installable with
// no new binary: a release the catalog has wins over its announcement.
TEST(ResolveAnnounced, AReleaseTheManifestsHaveWinsOverItsAnnouncement) {
    Catalog c = catalog();
    CudaRelease r = *c.find_cuda(v("13.4.2"));
    r.version = v("13.5.0");
    c.cuda.push_back(r);
    auto spec = parse_spec("13.5", {});
    ASSERT_TRUE(spec);
    auto res = resolve(c, *spec, {});
    ASSERT_TRUE(res) << res.error().message;
    EXPECT_EQ(res->cuda->version.str(), "13.5.0");
    EXPECT_TRUE(res->installable());
    auto d = describe(c, *spec, {});
    ASSERT_TRUE(d);
    EXPECT_EQ(d->announced, nullptr);
    EXPECT_EQ(announced_for(c, v("13.5")), nullptr);
}

// From 13.4 cuda_compat comes from the newest per-driver index the manifests know for the
// release's minor (driver-indexes.json: 620.70.06 and 620.70.10 carry it for 13.5), with
// NVIDIA's sha256 and size; on a platform no known index has it, it is not known.
TEST(ResolveCompat, From134ItComesFromTheNewestDriverIndexForTheMinor) {
    Catalog c = catalog();
    ASSERT_EQ(c.driver_indexes.size(), 3u);
    CudaRelease r = *c.find_cuda(v("13.4.2"));
    r.version = v("13.5.0");
    c.cuda.push_back(r);
    ResolveOptions o;
    o.compat = true;
    auto spec = parse_spec("13.5", {});
    ASSERT_TRUE(spec);
    auto res = resolve(c, *spec, o);
    ASSERT_TRUE(res) << res.error().message;
    EXPECT_TRUE(res->compat);
    const ResolvedArchive* compat = nullptr;
    for (const auto& a : res->archives) {
        compat = a.component == "cuda_compat" ? &a : compat;
    }
    ASSERT_NE(compat, nullptr);
    EXPECT_EQ(compat->version.str(), "620.70.10");
    EXPECT_EQ(compat->artifact.path,
              "nvidia-driver/redist/cuda_compat/linux-x86_64/"
              "cuda_compat-linux-x86_64-620.70.10_cuda13.5-archive.tar.xz");
    EXPECT_EQ(compat->artifact.sha256,
              "103b8788dced53b16701fd10b2037ac9fa4c6de3a6e672dc95ee731f55d45a07");
    EXPECT_EQ(compat->artifact.size, 105296524u);
    // a release whose own index has cuda_compat keeps its own (13.3.1, though 610.57.04's
    // index carries cuda_compat for 13.3 too)
    auto own = run("13.3", o);
    ASSERT_TRUE(own);
    for (const auto& a : own->archives) {
        if (a.component == "cuda_compat") {
            EXPECT_EQ(a.artifact.path.rfind("cuda/redist/", 0), 0u) << a.artifact.path;
        }
    }
    // the index known without the platform: not known, naming what is
    for (auto& d : c.driver_indexes) {
        d.compat.erase("linux-sbsa");
    }
    o.platform = "linux-sbsa";
    auto sbsa = resolve(c, *spec, o);
    ASSERT_FALSE(sbsa);
    EXPECT_EQ(sbsa.error().code, ErrorCode::not_found);
    EXPECT_NE(sbsa.error().message.find("are not known"), std::string::npos);
    EXPECT_NE(sbsa.error().message.find("driver 620.70.10's, whose cuda_compat for CUDA 13.5 is "
                                        "known for linux-x86_64 only, not linux-sbsa"),
              std::string::npos)
        << sbsa.error().message;
}
