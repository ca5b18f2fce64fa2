#include "core/archive/extract.hpp"
#include "core/install/compose.hpp"

#include <gtest/gtest.h>

using namespace cudaenv;

TEST(CudnnHeader, ReadsTheThreeMacros) {
    auto v = install::parse_cudnn_header("#ifndef X\n#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 6\n"
                                         "#define CUDNN_PATCHLEVEL 0\n#define CUDNN_VERSION (x)\n");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->str(), "8.6.0");
    auto v9 = install::parse_cudnn_header("  #define  CUDNN_MAJOR\t9\n#define CUDNN_MINOR 19\n"
                                          "#define CUDNN_PATCHLEVEL 0 // comment\n");
    ASSERT_TRUE(v9);
    EXPECT_EQ(v9->str(), "9.19.0");
}

TEST(CudnnHeader, RefusesIncompleteOrMalformedText) {
    EXPECT_FALSE(install::parse_cudnn_header(""));
    EXPECT_FALSE(install::parse_cudnn_header("#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 6\n"));
    EXPECT_FALSE(install::parse_cudnn_header("#define CUDNN_MAJOR x\n#define CUDNN_MINOR 6\n"
                                             "#define CUDNN_PATCHLEVEL 0\n"));
    EXPECT_FALSE(install::parse_cudnn_header("// #define CUDNN_MAJOR 8 in a comment only"));
}

TEST(ArchiveCompression, FollowsTheFileName) {
    EXPECT_EQ(archive::compression_for("a/b-archive.tar.xz"), archive::Compression::xz);
    EXPECT_EQ(archive::compression_for("cudnn-11.4-linux-x64-v8.2.4.15.tgz"),
              archive::Compression::gzip);
    EXPECT_EQ(archive::compression_for("x.zip"), std::nullopt);
    EXPECT_EQ(archive::compression_for("x.run"), std::nullopt);
}
