// The machine switch with a played ldconfig (the ProcessRunner seam): every way ldconfig can fail
// or mislead puts the link, the conf file and the journal back.
#include "core/activate/machine.hpp"
#include "core/fs.hpp"
#include "core/store/records.hpp"
#include "core/store/state.hpp"
#include "support/platform.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

namespace fs = std::filesystem;
using namespace cudaenv;
using namespace cudaenv::activate;

namespace {

constexpr const char* k_version = "11.8.0+cudnn8.6.0.163";

/// Plays ldconfig: `rebuild` answers a plain run, `listing` the text `-p` prints.
class PlayedLdconfig : public sys::ProcessRunner {
  public:
    std::function<sys::ProcessResult()> rebuild = [] {
        return sys::ProcessResult{0, "", "", false};
    };
    std::function<std::string()> listing;
    mutable std::vector<std::vector<std::string>> calls;

    Result<sys::ProcessResult> run(const std::vector<std::string>& argv,
                                   const sys::ProcessOptions&) const override {
        calls.push_back(argv);
        if (std::find(argv.begin(), argv.end(), "-p") != argv.end()) {
            return sys::ProcessResult{0, listing ? listing() : "", "", false};
        }
        return rebuild();
    }
};

struct World {
    test::TempDir dir;
    fs::path base = dir.path();
    store::Root root{base / "root"};
    Machine m;
    PlayedLdconfig ldconfig;

    World() {
        fs::create_directories(base / "sys" / "usr" / "local");
        fs::create_directories(base / "sys" / "etc" / "ld.so.conf.d");
        fs::create_directories(base / "sys" / "sbin");
        std::ofstream(base / "sys" / "etc" / "ld.so.cache") << "";
        EXPECT_TRUE(root.prepare());
        auto v = root.versions(test::native_platform()) / k_version;
        fs::create_directories(v / "lib64");
        std::ofstream(v / "lib64" / "libcudart.so.11.8.89") << "elf";
        std::ofstream(v / "lib64" / "libcudnn.so.8.6.0") << "elf";
        store::VersionRecord rec{
            k_version, "11.8.0", "8.6.0.163", "11", "runtime", test::native_platform(), 2, 6, {}};
        EXPECT_TRUE(store::write_version_record(v, rec));
        m.sysroot = fs::canonical(base / "sys");
        m.ldconfig = "/sbin/ldconfig";
        m.processes = &ldconfig;
    }

    /// A cache listing whose entries point where the machine sees the version (/usr/local/cuda).
    static std::string good_listing() {
        return "3 libs found in cache `/etc/ld.so.cache'\n"
               "\tlibcudnn.so.8 (libc6,x86-64) => /usr/local/cuda/lib64/libcudnn.so.8.6.0\n"
               "\tlibcudart.so.11.0 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.11.8.89\n"
               "\tlibc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => "
               "/lib/x86_64-linux-gnu/libc.so.6\n";
    }

    void expect_untouched() {
        std::error_code ec;
        EXPECT_FALSE(fs::exists(fs::symlink_status(m.link(), ec))) << "the link stayed";
        EXPECT_FALSE(fs::exists(m.conf(), ec)) << "the conf file stayed";
        auto state = store::load_state(root);
        ASSERT_TRUE(state);
        EXPECT_FALSE(state->global) << *state->global;
        EXPECT_FALSE(state->pending);
    }
};

} // namespace

TEST(Switch, SucceedsWhenTheCacheResolvesIntoTheVersion) {
    World w;
    w.ldconfig.listing = World::good_listing;
    auto out = switch_global(w.root, w.m, k_version, {});
    ASSERT_TRUE(out) << out.error().full_message();
    EXPECT_TRUE(out->changed);
    EXPECT_TRUE(out->ldconfig_ran);
    EXPECT_EQ(fs::canonical(w.m.link()),
              fs::canonical(w.root.versions(test::native_platform()) / k_version));
    std::ifstream conf(w.m.conf());
    std::string line;
    std::getline(conf, line);
    EXPECT_EQ(line, "/usr/local/cuda/lib64");
    EXPECT_EQ(store::load_state(w.root)->global.value_or(""), k_version);
    // ldconfig ran with -r <sysroot>: never the machine's own cache
    ASSERT_FALSE(w.ldconfig.calls.empty());
    EXPECT_EQ(w.ldconfig.calls[0].at(1), "-r");
    EXPECT_EQ(w.ldconfig.calls[0].at(2), w.m.sysroot.string());
}

TEST(Switch, AFailingLdconfigPutsEverythingBack) {
    World w;
    int runs = 0; // the first run fails; the one that puts the old cache back works
    w.ldconfig.rebuild = [&runs] {
        return ++runs == 1 ? sys::ProcessResult{1, "", "ldconfig: cannot open\nmore", false}
                           : sys::ProcessResult{0, "", "", false};
    };
    w.ldconfig.listing = World::good_listing;
    auto out = switch_global(w.root, w.m, k_version, {});
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, ErrorCode::filesystem);
    EXPECT_NE(out.error().full_message().find("ldconfig failed (exit 1): ldconfig: cannot open"),
              std::string::npos)
        << out.error().full_message();
    w.expect_untouched();
}

TEST(Switch, AnLdconfigKilledAtItsDeadlinePutsEverythingBack) {
    World w;
    int runs = 0;
    w.ldconfig.rebuild = [&runs] {
        return ++runs == 1 ? sys::ProcessResult{137, "", "", true}
                           : sys::ProcessResult{0, "", "", false};
    };
    auto out = switch_global(w.root, w.m, k_version, {});
    ASSERT_FALSE(out);
    EXPECT_NE(out.error().full_message().find("did not finish within"), std::string::npos)
        << out.error().full_message();
    w.expect_untouched();
}

TEST(Switch, WhenPuttingBackFailsTooTheJournalKeepsThePendingSwitchForRollback) {
    World w;
    w.ldconfig.rebuild = [] { return sys::ProcessResult{1, "", "ldconfig: disk on fire", false}; };
    auto out = switch_global(w.root, w.m, k_version, {});
    ASSERT_FALSE(out);
    bool told = false;
    for (const auto& h : out.error().hints) {
        told = told || h.find("putting the machine back failed too") != std::string::npos;
    }
    EXPECT_TRUE(told) << out.error().full_message();
    auto state = store::load_state(w.root);
    ASSERT_TRUE(state);
    EXPECT_EQ(state->pending.value_or(""), k_version);
    ASSERT_TRUE(state->previous);
    // with a working ldconfig, rollback finishes the job
    w.ldconfig.rebuild = [] { return sys::ProcessResult{0, "", "", false}; };
    auto back = rollback(w.root, w.m, {});
    ASSERT_TRUE(back) << back.error().full_message();
    w.expect_untouched();
}

TEST(Switch, ACacheThatLoadsAnotherCopyFirstIsAFailure) {
    World w;
    // A distro copy of the SONAME first: the loader takes the first entry of each SONAME, so the
    // version's copy listed second never loads.
    w.ldconfig.listing = [] {
        return std::string("\tlibcudart.so.11.0 (libc6,x86-64) => "
                           "/usr/lib/x86_64-linux-gnu/libcudart.so.11.0\n") +
               World::good_listing();
    };
    auto out = switch_global(w.root, w.m, k_version, {});
    ASSERT_FALSE(out);
    EXPECT_NE(out.error().full_message().find("libcudart"), std::string::npos)
        << out.error().full_message();
    w.expect_untouched();
}

TEST(Switch, ThirtyTwoBitEntriesDoNotCount) {
    World w;
    w.ldconfig.listing = [] {
        return std::string(
                   "\tlibcudart.so.11.0 (libc6) => /usr/lib/i386-linux-gnu/libcudart.so.11.0\n") +
               World::good_listing();
    };
    auto out = switch_global(w.root, w.m, k_version, {});
    ASSERT_TRUE(out) << out.error().full_message();
}

TEST(Switch, ADamagedVersionRecordStopsTheSwitchBeforeAnythingChanges) {
    World w;
    w.ldconfig.listing = World::good_listing;
    std::ofstream(w.root.versions(test::native_platform()) / k_version / store::k_version_record)
        << R"({"schema": "cudaenv.version/7"})";
    auto out = switch_global(w.root, w.m, k_version, {});
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, ErrorCode::integrity);
    EXPECT_TRUE(w.ldconfig.calls.empty()) << "ldconfig ran for a version that cannot be read";
    w.expect_untouched();
}

TEST(Switch, RefusesAVersionOtherUsersCannotReadAndChangesNothing) {
    World w;
    w.ldconfig.listing = World::good_listing;
    auto lib = w.root.versions(test::native_platform()) / k_version / "lib64" / "libcudnn.so.8.6.0";
    fs::permissions(lib, fs::perms(0600));
    auto out = switch_global(w.root, w.m, k_version, {});
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, ErrorCode::conflict);
    EXPECT_NE(out.error().message.find("libcudnn.so.8.6.0"), std::string::npos)
        << out.error().message;
    EXPECT_TRUE(w.ldconfig.calls.empty()) << "ldconfig ran for a refused switch";
    w.expect_untouched();

    // a folder above the root that others cannot pass through is refused the same way
    fs::permissions(lib, fs::perms(0644));
    fs::permissions(w.root.dir, fs::perms(0700));
    out = switch_global(w.root, w.m, k_version, {});
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, ErrorCode::conflict);
    EXPECT_NE(out.error().message.find("does not let other users through"), std::string::npos)
        << out.error().message;
    w.expect_untouched();
    fs::permissions(w.root.dir, fs::perms(0755));
    EXPECT_TRUE(switch_global(w.root, w.m, k_version, {}));
}

TEST(Switch, AVersionOnlyInTheMachineWideRootIsRoots) {
    World w;
    store::Root user{w.base / "user", {w.root.dir}};
    ASSERT_TRUE(user.prepare());
    EXPECT_EQ(user.version_dir(k_version), w.root.versions(test::native_platform()) / k_version);
    auto out = switch_global(user, w.m, k_version, {});
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, ErrorCode::conflict);
    EXPECT_NE(out.error().message.find("machine-wide root"), std::string::npos);
    w.expect_untouched();
}
