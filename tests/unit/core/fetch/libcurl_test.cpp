// libcurl is loaded at run time (core/sys/dynlib), so no package dependency can promise its
// version: cudaenv checks the one it loaded before the first download.
#include "core/fetch/download.hpp"

#include <gtest/gtest.h>

using namespace cudaenv;

TEST(Libcurl, OlderThan7_85IsRefusedBecauseItCannotKeepDownloadsHttpsOnly) {
    auto old = fetch::check_libcurl(0x075400, "7.84.0", true);
    ASSERT_FALSE(old);
    EXPECT_EQ(old.error().code, ErrorCode::failure);
    EXPECT_NE(old.error().message.find("7.84.0, too old"), std::string::npos)
        << old.error().message;
    EXPECT_NE(old.error().message.find("https-only"), std::string::npos);
    EXPECT_TRUE(fetch::check_libcurl(0x075500, "7.85.0", true));
    EXPECT_TRUE(fetch::check_libcurl(0x075801, "7.88.1", true)); // Debian 12
}

TEST(Libcurl, OneWithoutTlsIsRefused) {
    auto plain = fetch::check_libcurl(0x075801, "7.88.1", false);
    ASSERT_FALSE(plain);
    EXPECT_NE(plain.error().message.find("without TLS"), std::string::npos);
}

TEST(Libcurl, TheLoadedOneIsAccepted) {
    EXPECT_TRUE(fetch::global_init()); // this machine's libcurl4
}
