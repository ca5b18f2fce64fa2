#include "core/store/lock.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

using namespace cudaenv;
using namespace std::chrono_literals;

TEST(Lock, ASecondHolderTimesOutNamingTheFirst) {
    test::TempDir t;
    auto file = t.path();
    auto first = store::Lock::acquire(file, 1s);
    ASSERT_TRUE(first) << first.error().message;
    auto second = store::Lock::acquire(file, 200ms);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code, ErrorCode::lock_timeout);
    EXPECT_EQ(exit_code(second.error().code), 75);
    EXPECT_NE(second.error().message.find("PID " + std::to_string(::getpid())), std::string::npos)
        << second.error().message;
}

TEST(Lock, IsFreeAgainWhenReleased) {
    test::TempDir t;
    {
        auto held = store::Lock::acquire(t.path(), 1s);
        ASSERT_TRUE(held);
    }
    EXPECT_TRUE(store::Lock::acquire(t.path(), 100ms));
}

// The lock is the directory's: no file in it, deleted or replaced, lets a second holder in.
TEST(Lock, DeletingOrReplacingFilesInTheRootDoesNotFreeIt) {
    test::TempDir t;
    auto held = store::Lock::acquire(t.path(), 1s);
    ASSERT_TRUE(held);
    t.write(".lock", "");
    std::filesystem::remove(t.path() / ".lock");
    t.write(".lock", "planted");
    auto second = store::Lock::acquire(t.path(), 200ms);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code, ErrorCode::lock_timeout);
}

TEST(Lock, AMissingRootIsAFilesystemError) {
    test::TempDir t;
    auto r = store::Lock::acquire(t.path() / "absent", 100ms);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::filesystem);
}
