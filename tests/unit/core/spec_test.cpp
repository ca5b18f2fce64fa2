#include "core/spec.hpp"

#include <gtest/gtest.h>

using namespace cudaenv;

namespace {

const std::vector<std::string> k_fw{"tensorflow", "tf"};

Spec ok(const char* text) {
    auto r = parse_spec(text, k_fw);
    EXPECT_TRUE(r) << text << ": " << (r ? "" : r.error().message);
    return r ? *r : Spec{};
}

} // namespace

TEST(SpecParse, FrameworkForms) {
    for (const char* s : {"tf-2.13", "tensorflow-2.13", "tensorflow==2.13", "TF-2.13"}) {
        auto spec = ok(s);
        EXPECT_EQ(spec.kind, Spec::Kind::framework) << s;
        EXPECT_EQ(spec.framework_version->str(), "2.13") << s;
    }
    EXPECT_EQ(ok("tf-2.13.1").framework_version->str(), "2.13.1");
    EXPECT_EQ(ok("tf-2.13").framework, "tf");
}

TEST(SpecParse, CudaForms) {
    for (const char* s : {"11.8", "cuda-11.8", "cuda11.8"}) {
        auto spec = ok(s);
        EXPECT_EQ(spec.kind, Spec::Kind::cuda) << s;
        EXPECT_EQ(spec.cuda->str(), "11.8") << s;
    }
    EXPECT_EQ(ok("11.8.0").cuda->str(), "11.8.0");
    EXPECT_EQ(ok("12").cuda->str(), "12");
}

TEST(SpecParse, CudnnAndPairForms) {
    auto c = ok("cudnn-8.9.7.29");
    EXPECT_EQ(c.kind, Spec::Kind::cudnn);
    EXPECT_EQ(c.cudnn->str(), "8.9.7.29");
    for (const char* s : {"11.8+cudnn-8.6", "cuda-11.8+cudnn8.6", "11.8+cudnn8.6"}) {
        auto p = ok(s);
        EXPECT_EQ(p.kind, Spec::Kind::pair) << s;
        EXPECT_EQ(p.cuda->str(), "11.8") << s;
        EXPECT_EQ(p.cudnn->str(), "8.6") << s;
    }
    EXPECT_EQ(ok("11.8.0+cudnn8.6.0.163").cudnn->str(), "8.6.0.163");
}

TEST(SpecParse, RejectsMalformedSpecsAsUsage) {
    for (const char* s : {"",
                          "foo",
                          "11.8.0.1",
                          "tf-2",
                          "tf-",
                          "11.8+",
                          "11.8+9.1",
                          "cudnn-",
                          "cudnn-1.2.3.4.5",
                          "11.8 ",
                          "../11.8",
                          "tf-2.x",
                          "+cudnn-8.6"}) {
        auto r = parse_spec(s, k_fw);
        ASSERT_FALSE(r) << "'" << s << "'";
        EXPECT_EQ(r.error().code, ErrorCode::usage) << s;
        EXPECT_FALSE(r.error().hints.empty()) << s;
    }
}

TEST(SpecParse, SuggestsTheFrameworkForATypo) {
    auto r = parse_spec("tensorflw-2.13", k_fw);
    ASSERT_FALSE(r);
    ASSERT_FALSE(r.error().hints.empty());
    EXPECT_EQ(r.error().hints[0], "did you mean 'tensorflow-2.13'?");
    auto c = parse_spec("cdnn-8.6", k_fw);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().hints[0], "did you mean 'cudnn-8.6'?");
}

TEST(SpecParse, AcceptsUnknownFrameworkNamesWhenNoneAreKnown) {
    auto r = parse_spec("jax-0.4");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->framework, "jax");
}

TEST(SpecParse, FrameworkVariants) {
    auto s = parse_spec("torch-2.5+cu121", {"torch", "pytorch"});
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(s->kind, Spec::Kind::framework);
    EXPECT_EQ(s->framework, "torch");
    EXPECT_EQ(s->framework_version->str(), "2.5");
    EXPECT_EQ(s->variant, "cu121");
    EXPECT_EQ(s->text, "torch-2.5+cu121");
    s = parse_spec("torch==2.5.1+cu118", {"torch"});
    ASSERT_TRUE(s);
    EXPECT_EQ(s->framework_version->str(), "2.5.1");
    EXPECT_EQ(s->variant, "cu118");
    s = parse_spec("jax-0.9.0.1+cuda13", {"jax"});
    ASSERT_TRUE(s);
    EXPECT_EQ(s->framework_version->str(), "0.9.0.1");
    EXPECT_EQ(s->variant, "cuda13");
    // a variant names a framework's build: after a CUDA it is a usage error
    for (const char* bad : {"11.8+cu121", "torch-2.5+cu", "torch-2.5+cu12x"}) {
        auto r = parse_spec(bad, {"torch"});
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().code, ErrorCode::usage) << bad;
    }
    // the pair form keeps working
    s = parse_spec("12.4+cudnn-9.1", {"torch"});
    ASSERT_TRUE(s);
    EXPECT_EQ(s->kind, Spec::Kind::pair);
}
