// core/sys/elf on objects gcc linked (the fuzz target's seeds): DT_RPATH and DT_RUNPATH told
// apart, $ORIGIN expanded, a truncated or foreign file refused.
#include "core/sys/elf.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace cudaenv::sys {
namespace {

std::string corpus(const char* name) {
    std::ifstream in(std::string(CUDAENV_TEST_FUZZ_CORPUS) + "/elf/" + name, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Elf, RpathAndRunpathAreToldApart) {
    auto r = parse_elf_dynamic(corpus("seed-rpath"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->soname, "libs.so.1");
    ASSERT_EQ(r->rpath.size(), 2u);
    EXPECT_EQ(r->rpath[0], "$ORIGIN/../../nvidia/cudnn/lib");
    EXPECT_EQ(r->rpath[1], "/opt/x");
    EXPECT_TRUE(r->runpath.empty());
    auto n = parse_elf_dynamic(corpus("seed-runpath"));
    ASSERT_TRUE(n);
    EXPECT_TRUE(n->rpath.empty());
    ASSERT_EQ(n->runpath.size(), 1u);
    EXPECT_EQ(expand_origin(n->runpath[0], "/site/torch/lib"), "/site/torch/lib/lib");
    EXPECT_NE(std::find(n->needed.begin(), n->needed.end(), "libm.so.6"), n->needed.end());
    EXPECT_EQ(expand_origin("$ORIGIN/../../nvidia/cudnn/lib", "/s/torch/lib"),
              "/s/torch/lib/../../nvidia/cudnn/lib");
}

TEST(Elf, TruncatedOrForeignIsNone) {
    auto whole = corpus("seed-rpath");
    ASSERT_GT(whole.size(), 1000u);
    EXPECT_FALSE(parse_elf_dynamic(whole.substr(0, 64)));
    EXPECT_FALSE(parse_elf_dynamic("#!/bin/sh\necho not an ELF\n"));
    EXPECT_FALSE(parse_elf_dynamic(""));
    EXPECT_FALSE(read_elf_dynamic("/nonexistent/libx.so"));
}

} // namespace
} // namespace cudaenv::sys
