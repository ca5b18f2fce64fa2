#include "core/store/lock.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

using namespace cudaenv;
using namespace std::chrono_literals;

TEST(Lock, ASecondHolderTimesOutNamingTheFirst) {
    test::TempDir t;
    auto file = t.path() / ".lock";
    auto first = store::Lock::acquire(file, 1s);
    ASSERT_TRUE(first) << first.error().message;
    auto second = store::Lock::acquire(file, 200ms);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code, ErrorCode::lock_timeout);
    EXPECT_EQ(exit_code(second.error().code), 75);
    EXPECT_NE(second.error().message.find("PID " + std::to_string(::getpid())), std::string::npos)
        << second.error().message;
}

TEST(Lock, IsFreeAgainWhenReleasedAndTheFileStays) {
    test::TempDir t;
    auto file = t.path() / ".lock";
    {
        auto held = store::Lock::acquire(file, 1s);
        ASSERT_TRUE(held);
    }
    EXPECT_TRUE(std::filesystem::exists(file));
    EXPECT_TRUE(store::Lock::acquire(file, 100ms));
}
