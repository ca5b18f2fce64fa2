#include "core/archive/names.hpp"

#include <gtest/gtest.h>

using cudaenv::archive::collision_key;

TEST(Names, CaseTwinsCollide) {
    EXPECT_EQ(collision_key("include/Foo.h"), collision_key("include/foo.h"));
    EXPECT_EQ(collision_key("LIB/libX.so"), collision_key("lib/libx.so"));
    EXPECT_NE(collision_key("lib/libcudart.so.11.0"), collision_key("lib/libcudart.so.11"));
}

TEST(Names, NfcAndNfdTwinsCollide) {
    // é precomposed (U+00E9) and e + U+0301; Å (U+00C5) and A + U+030A; ş and s + U+0327
    EXPECT_EQ(collision_key("caf\xc3\xa9.h"), collision_key("cafe\xcc\x81.h"));
    EXPECT_EQ(collision_key("\xc3\x85ngstr\xc3\xb6m"),
              collision_key("A\xcc\x8a"
                            "ngstro\xcc\x88m"));
    EXPECT_EQ(collision_key("\xc5\x9f"), collision_key("s\xcc\xa7"));
    EXPECT_EQ(collision_key("\xc3\x89"), collision_key("e\xcc\x81")); // and case on top
}

TEST(Names, OtherTextKeepsItsBytes) {
    EXPECT_EQ(collision_key("plain/ascii-1.2_x+y~z"), "plain/ascii-1.2_x+y~z");
    EXPECT_NE(collision_key("\xc3\xb8"), collision_key("o")); // ø does not decompose
    EXPECT_EQ(collision_key("\xe6\x97\xa5"), "\xe6\x97\xa5"); // CJK as it is
    EXPECT_EQ(collision_key("\xff\xfe"), "\xff\xfe");         // not UTF-8: bytes
}
