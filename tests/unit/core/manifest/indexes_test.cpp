// The root's record of indexes trusted without a pin (reliability.md D15).
#include "core/manifest/indexes.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

using namespace cudaenv;
using namespace cudaenv::manifest;

TEST(TrustedIndexes, SameReleaseWithAnotherHashIsRefused) {
    test::TempDir root;
    ASSERT_TRUE(record_trusted(root.path(), "cuda", "14.1.0", "{\"a\": 1}"));
    ASSERT_TRUE(record_trusted(root.path(), "cuda", "14.1.0", "{\"a\": 1}")); // same: fine
    auto again = record_trusted(root.path(), "cuda", "14.1.0", "{\"a\": 2}");
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, ErrorCode::integrity);
    EXPECT_NE(again.error().message.find("this root trusted"), std::string::npos);
    ASSERT_TRUE(record_trusted(root.path(), "cudnn", "10.1.0", "{}")); // another release: fine
    auto list = load_trusted(root.path());
    ASSERT_TRUE(list);
    ASSERT_EQ(list->size(), 2u);
    // the first record is unchanged
    EXPECT_EQ(test::read_all(root.path() / "indexes" / "cuda" / "redistrib_14.1.0.json"),
              "{\"a\": 1}");
}
