#include "core/version.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using cudaenv::Version;

namespace {

Version v(const char* s) {
    auto r = Version::parse(s);
    EXPECT_TRUE(r) << s;
    return *r;
}

} // namespace

TEST(VersionParse, AcceptsOneToSixParts) {
    // NVIDIA's own: cccl 13.3.3.3.1 (five parts), cuda_compat 13.3.45405995 (eight digits)
    EXPECT_EQ(v("13.3.3.3.1").size(), 5u);
    EXPECT_EQ(v("13.3.45405995")[2], 45405995u);
    EXPECT_EQ(v("11").size(), 1u);
    EXPECT_EQ(v("11.8").size(), 2u);
    EXPECT_EQ(v("11.8.0").size(), 3u);
    EXPECT_EQ(v("8.9.7.29").size(), 4u);
    EXPECT_EQ(v("8.9.7.29")[3], 29u);
}

TEST(VersionParse, RejectsMalformedText) {
    for (const char* bad : {"",
                            ".",
                            "11.",
                            ".8",
                            "11..8",
                            "11.8a",
                            "a11",
                            "-1",
                            "+1",
                            "1.2.3.4.5.6.7",
                            "11 .8",
                            "1234567890",
                            "11.8-rc1"}) {
        EXPECT_FALSE(Version::parse(bad)) << "'" << bad << "'";
    }
}

TEST(VersionParse, ErrorNamesTheInput) {
    auto r = Version::parse("11.x");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("'11.x'"), std::string::npos);
}

TEST(VersionPrint, KeepsWhatWasWrittenIncludingLeadingZeros) {
    EXPECT_EQ(v("11.8").str(), "11.8");
    EXPECT_EQ(v("11.8.0").str(), "11.8.0");
    EXPECT_EQ(v("520.61.05").str(), "520.61.05");
    EXPECT_EQ(v("8.9.7.29").str(), "8.9.7.29");
}

TEST(VersionOrder, ShorterSortsFirstWhenNumericallyEqual) {
    EXPECT_LT(v("11.8"), v("11.8.0"));
    EXPECT_LT(v("11.8.0"), v("11.8.89"));
    EXPECT_LT(v("11.8"), v("11.8.89"));
    EXPECT_NE(v("11.8"), v("11.8.0"));
    EXPECT_EQ(Version::compare_numeric(v("11.8"), v("11.8.0")), std::strong_ordering::equal);
}

TEST(VersionOrder, ComparesNumericallyNotAsText) {
    EXPECT_LT(v("11.10"), v("11.11"));
    EXPECT_LT(v("9.2"), v("11.0"));
    EXPECT_LT(v("12.9.1"), v("12.10"));
    EXPECT_LT(v("8.9.7"), v("8.9.7.29"));
    EXPECT_LT(v("8.9.7.29"), v("9.0.0.312"));
    EXPECT_EQ(v("520.61.05"), v("520.61.5"));
}

TEST(VersionOrder, SortsAMixedList) {
    std::vector<Version> vs{v("12.0"), v("11.8.89"), v("11.8"), v("11.8.0"), v("9.2.148")};
    std::sort(vs.begin(), vs.end());
    std::vector<std::string> got;
    for (const auto& x : vs) {
        got.push_back(x.str());
    }
    EXPECT_EQ(got, (std::vector<std::string>{"9.2.148", "11.8", "11.8.0", "11.8.89", "12.0"}));
}

TEST(VersionPrefix, MatchesReleasesUnderASeries) {
    EXPECT_TRUE(v("11.8").is_prefix_of(v("11.8.0")));
    EXPECT_TRUE(v("11.8").is_prefix_of(v("11.8.89")));
    EXPECT_TRUE(v("2.13").is_prefix_of(v("2.13.1")));
    EXPECT_TRUE(v("11").is_prefix_of(v("11.8")));
    EXPECT_FALSE(v("11.8").is_prefix_of(v("11.80.0")));
    EXPECT_FALSE(v("11.8.0").is_prefix_of(v("11.8")));
    EXPECT_FALSE(v("2.1").is_prefix_of(v("2.13")));
}

TEST(VersionTruncate, DropsTrailingParts) {
    EXPECT_EQ(v("8.9.7.29").truncated(2).str(), "8.9");
    EXPECT_EQ(v("11.8").truncated(3).str(), "11.8");
    EXPECT_EQ(v("11.8.0").truncated(1).major(), 11u);
}
