#include "core/text.hpp"

#include <gtest/gtest.h>

using cudaenv::join;

TEST(Text, JoinPutsTheSeparatorBetweenEachTwoPartsOnly) {
    EXPECT_EQ(join({}), "");
    EXPECT_EQ(join({"11.8"}), "11.8");
    EXPECT_EQ(join({"11.8", "12.4", "13.0"}), "11.8, 12.4, 13.0");
    EXPECT_EQ(join({"a", "b"}, "; "), "a; b");
    // an empty part keeps its place: nothing is merged or dropped
    EXPECT_EQ(join({"", "b"}), ", b");
    EXPECT_EQ(join({"a", "", "c"}, "|"), "a||c");
}

TEST(Text, WordsSplitOnAnyRunOfSeparatorsAndDropEmptyOnes) {
    using V = std::vector<std::string_view>;
    EXPECT_EQ(cudaenv::words(" a  b\tc "), (V{"a", "b", "c"}));
    EXPECT_EQ(cudaenv::words(""), V{});
    EXPECT_EQ(cudaenv::words(" \t "), V{});
    EXPECT_EQ(cudaenv::words("/a,/b: /c", " ,:"), (V{"/a", "/b", "/c"}));
    EXPECT_EQ(cudaenv::words("a\tb", " "), V{"a\tb"});
}
