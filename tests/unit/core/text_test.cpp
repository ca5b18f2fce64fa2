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
