#include "core/suggest.hpp"

#include <gtest/gtest.h>

using namespace cudaenv;

TEST(EditDistance, CountsEdits) {
    EXPECT_EQ(edit_distance("", ""), 0u);
    EXPECT_EQ(edit_distance("resolve", "resolve"), 0u);
    EXPECT_EQ(edit_distance("resolv", "resolve"), 1u);
    EXPECT_EQ(edit_distance("tensorflw", "tensorflow"), 1u);
    EXPECT_EQ(edit_distance("abc", "xyz"), 3u);
}

TEST(ClosestMatch, SuggestsPlausibleTyposOnly) {
    std::vector<std::string> cmds{"install", "resolve", "list"};
    EXPECT_EQ(closest_match("resolv", cmds), "resolve");
    EXPECT_EQ(closest_match("instal", cmds), "install");
    EXPECT_EQ(closest_match("frobnicate", cmds), std::nullopt);
}
