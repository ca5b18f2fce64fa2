// Root::sweep, run under the lock by every command that changes the root: it removes exactly
// what killed runs leave, and nothing else.
#include "core/fs.hpp"
#include "core/store/root.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>

namespace fs = std::filesystem;
using namespace cudaenv;

namespace {

const std::string k_sha = "0123456789ab" + std::string(52, 'a'); // 64 hex digits

bool there(const fs::path& p) {
    std::error_code ec;
    return fs::exists(fs::symlink_status(p, ec));
}

} // namespace

TEST(Sweep, RemovesWhatKilledRunsLeftAndNothingElse) {
    test::TempDir d;
    store::Root root{d.path() / "root"};
    ASSERT_TRUE(root.prepare());
    auto victim = d.write("outside/precious", "keep me");

    // left by killed runs
    d.write("root/.staging/shims-AbCdEf/nvcc", "");
    d.write("root/.staging/11.8.0-XyZ123/lib64/x", "");
    d.write("root/.trash/gc-old/x", "");
    d.write("root/store/cuda_cudart-11.8.89-half/lib/x", ""); // no record: never published
    d.write("root/versions/12.4.1-half/lib64/x", "");
    fs::create_symlink(victim.parent_path(), root.versions() / "planted");
    d.write("root/" + temp_name("state.json"), "{");
    // a verified download whose archive is already in the store
    d.write("root/cache/downloads/" + k_sha, "archive");

    // kept
    d.write("root/store/cuda_cudart-11.8.89-0123456789ab/.cudaenv-complete.json", "{}");
    d.write("root/versions/11.8.0/.cudaenv-version.json", "{}");
    d.write("root/state.json", "{}");
    d.write("root/cache/downloads/" + std::string(64, 'b') + ".partial", "half"); // fresh resume
    d.write("root/cache/downloads/notes.txt", "not a name cudaenv gives");
    d.write("root/.state.json.tmp-short", "not a temporary name of ours");

    root.sweep();

    EXPECT_TRUE(fs::is_empty(root.staging()));
    EXPECT_TRUE(fs::is_empty(root.trash()));
    EXPECT_FALSE(there(root.store() / "cuda_cudart-11.8.89-half"));
    EXPECT_FALSE(there(root.versions() / "12.4.1-half"));
    EXPECT_FALSE(there(root.versions() / "planted"));
    EXPECT_EQ(test::read_all(victim), "keep me"); // the link was unlinked, never followed
    EXPECT_FALSE(there(root.downloads() / k_sha));

    EXPECT_TRUE(there(root.store() / "cuda_cudart-11.8.89-0123456789ab"));
    EXPECT_TRUE(there(root.versions() / "11.8.0"));
    EXPECT_TRUE(there(root.state_file()));
    EXPECT_TRUE(there(root.downloads() / (std::string(64, 'b') + ".partial")));
    EXPECT_TRUE(there(root.downloads() / "notes.txt"));
    EXPECT_TRUE(there(root.dir / ".state.json.tmp-short"));
    std::size_t temps = 0;
    for (const auto& e : fs::directory_iterator(root.dir)) {
        temps += is_temp_name(e.path().filename().string(), "state.json") ? 1U : 0U;
    }
    EXPECT_EQ(temps, 0u);
}

TEST(Sweep, AResumeUntouchedForTwoWeeksGoes) {
    test::TempDir d;
    store::Root root{d.path() / "root"};
    ASSERT_TRUE(root.prepare());
    auto stale = d.write("root/cache/downloads/" + std::string(64, 'c') + ".partial", "half");
    auto fresh = d.write("root/cache/downloads/" + std::string(64, 'd') + ".partial", "half");
    fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(24 * 15));
    root.sweep();
    EXPECT_FALSE(there(stale));
    EXPECT_TRUE(there(fresh));
}
