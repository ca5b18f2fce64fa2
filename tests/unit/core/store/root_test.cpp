// Root::sweep, run under the lock by every command that changes the root: it removes exactly
// what killed runs leave, and nothing else.
#include "core/fs.hpp"
#include "core/store/records.hpp"
#include "core/store/root.hpp"
#include "core/store/state.hpp"
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

TEST(Layers, AVersionIsFoundInTheRootFirstThenItsUpstreams) {
    test::TempDir d;
    d.write("sys/versions/linux-x86_64/11.8.0/.cudaenv-version.json", "{}");
    d.write("sys/versions/linux-x86_64/12.4.1/.cudaenv-version.json", "{}");
    d.write("sys/versions/linux-x86_64/13.0.0-half/lib64/x", ""); // no record: not a version
    d.write("user/versions/linux-x86_64/12.4.1/.cudaenv-version.json", "{}");
    // the x86_64 layout, whatever host runs the test (forced, as --platform would)
    store::Root user{d.path() / "user", {d.path() / "sys"}, store::HostPlatforms{"linux-x86_64"}};
    EXPECT_EQ(store::installed_versions(user), (std::vector<std::string>{"11.8.0", "12.4.1"}));
    EXPECT_EQ(user.version_dir("11.8.0"), d.path() / "sys/versions/linux-x86_64/11.8.0");
    EXPECT_EQ(user.version_dir("12.4.1"),
              d.path() / "user/versions/linux-x86_64/12.4.1"); // own first
    EXPECT_EQ(user.version_dir("13.0.0-half"), d.path() / "user/versions/linux-x86_64/13.0.0-half");
    EXPECT_EQ(user.upstream_of("11.8.0"), d.path() / "sys");
    EXPECT_FALSE(user.upstream_of("12.4.1"));
    EXPECT_FALSE(user.upstream_of("../sys/versions/11.8.0"));
    EXPECT_EQ(user.version_dirs(),
              (std::vector<fs::path>{d.path() / "user/versions", d.path() / "sys/versions"}));
}

TEST(Permissions, APublishedTreeIsReadableByEveryoneWhateverTheUmask) {
    test::TempDir d;
    auto stage = d.path() / "stage";
    mode_t old = ::umask(077);
    fs::create_directories(stage / "bin");
    fs::create_directories(stage / "lib64");
    d.write("stage/bin/nvcc", "#!/bin/sh\n");
    d.write("stage/lib64/libcudart.so.12.4.127", "elf");
    ::umask(old);
    fs::permissions(stage / "bin/nvcc", fs::perms(0700));
    fs::permissions(stage / "lib64/libcudart.so.12.4.127", fs::perms(0600));
    fs::create_symlink("libcudart.so.12.4.127", stage / "lib64/libcudart.so.12");
    EXPECT_TRUE(store::unreadable_by_others(stage)); // 0700 folders
    ASSERT_TRUE(store::make_world_readable(stage));
    auto mode = [](const fs::path& p) {
        struct stat st {};
        ::lstat(p.c_str(), &st);
        return st.st_mode & 07777;
    };
    EXPECT_EQ(mode(stage), 0755u);
    EXPECT_EQ(mode(stage / "lib64"), 0755u);
    EXPECT_EQ(mode(stage / "bin/nvcc"), 0755u);                    // execute bits kept
    EXPECT_EQ(mode(stage / "lib64/libcudart.so.12.4.127"), 0644u); // none added
    EXPECT_FALSE(store::unreadable_by_others(stage)) << *store::unreadable_by_others(stage);

    fs::permissions(stage / "lib64/libcudart.so.12.4.127", fs::perms(0640));
    auto why = store::unreadable_by_others(stage);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("libcudart.so.12.4.127' (mode 0640) cannot be read"), std::string::npos)
        << *why;
}

TEST(Permissions, ANewRootIsTraversableWhateverTheUmask) {
    test::TempDir d;
    mode_t old = ::umask(077);
    store::Root root{d.path() / "opt" / "cudaenv"};
    auto ok = root.prepare();
    ::umask(old);
    ASSERT_TRUE(ok);
    for (const auto& p : {root.dir, root.versions(), root.store()}) {
        EXPECT_EQ(fs::status(p).permissions(), fs::perms(0755)) << p;
    }
}

TEST(Layers, TheGlobalChoiceIsTheRootsOwnElseTheMachineWideRootsWhichOwnsTheLink) {
    test::TempDir d;
    store::Root sys{d.path() / "sys"};
    store::Root user{d.path() / "user", {sys.dir}};
    ASSERT_TRUE(sys.prepare());
    ASSERT_TRUE(user.prepare());
    auto none = store::effective_global(user);
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->version);
    EXPECT_EQ(none->owner.dir, sys.dir); // the machine-wide root owns the machine's link

    store::State s;
    s.global = "11.8.0";
    ASSERT_TRUE(store::save_state(sys, s));
    auto g = store::effective_global(user);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->version.value_or(""), "11.8.0");
    EXPECT_EQ(g->owner.state_file(), sys.state_file());

    s.global = "12.4.1";
    ASSERT_TRUE(store::save_state(user, s));
    g = store::effective_global(user);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->version.value_or(""), "12.4.1");
    EXPECT_EQ(g->owner.dir, user.dir);

    // a damaged machine-wide state is passed over; the user's own is an error
    std::filesystem::remove(user.state_file());
    d.write("sys/state.json", "{not json");
    g = store::effective_global(user);
    ASSERT_TRUE(g);
    EXPECT_FALSE(g->version);
    d.write("user/state.json", "{not json");
    EXPECT_FALSE(store::effective_global(user));
}

namespace {

void write_version(test::TempDir& d,
                   const std::string& rel,
                   const std::string& name,
                   const std::string& platform) {
    store::VersionRecord rec{
        name, name.substr(0, name.find('+')), "", "", "runtime", platform, 0, 0, {}};
    d.write("root/" + rel + "/lib64/libcudart.so", "elf");
    ASSERT_TRUE(store::write_version_record(d.path() / "root" / rel, rec));
}

store::HostPlatforms host_of(sys::HostKind kind, const std::string& soc = "") {
    store::HostPlatforms p;
    p.host = sys::HostMachine{kind, kind == sys::HostKind::x86_64 ? "x86_64" : "aarch64", {}};
    if (kind == sys::HostKind::jetson) {
        p.host.jetson = sys::Jetson{soc, "nvidia,tegra234", "36.4.3", "6"};
    }
    return p;
}

} // namespace

TEST(Platforms, AVersionIsTheHostsWhenItsPlatformIsWhatTheHostTakesForItsCuda) {
    auto x86 = host_of(sys::HostKind::x86_64);
    auto grace = host_of(sys::HostKind::arm_server);
    auto orin = host_of(sys::HostKind::jetson, "orin");
    EXPECT_EQ(x86.of("11.8.0+cudnn8.6.0.163"), "linux-x86_64");
    EXPECT_EQ(grace.of("12.4.1"), "linux-sbsa");
    EXPECT_EQ(orin.of("12.6.3+cudnn9.5.1.17"), "linux-aarch64");
    EXPECT_EQ(orin.of("13.2.0"), "linux-sbsa"); // with cuda_compat_orin
    EXPECT_EQ(orin.of("13.0.1"), "");           // Thor only: no platform
    EXPECT_EQ(x86.of("linux-sbsa"), "");        // no version name
    EXPECT_EQ(x86.of("12"), "");
    auto forced = x86;
    forced.forced = "linux-sbsa";
    EXPECT_EQ(forced.of("11.8.0"), "linux-sbsa");
}

TEST(Platforms, OneRootHoldsBothAndEachHostSeesItsOwn) {
    test::TempDir d;
    store::Root root{d.path() / "root", {}, host_of(sys::HostKind::x86_64)};
    ASSERT_TRUE(root.prepare());
    write_version(d, "versions/linux-x86_64/12.4.1", "12.4.1", "linux-x86_64");
    write_version(d, "versions/linux-sbsa/12.4.1", "12.4.1", "linux-sbsa");
    write_version(d, "versions/linux-sbsa/13.0.1", "13.0.1", "linux-sbsa");

    EXPECT_EQ(store::installed_versions(root), std::vector<std::string>{"12.4.1"});
    EXPECT_EQ(root.version_dir("12.4.1"), root.versions("linux-x86_64") / "12.4.1");
    EXPECT_EQ(root.version_dir("12.4.1", "linux-sbsa"), root.versions("linux-sbsa") / "12.4.1");
    EXPECT_EQ(store::other_platforms_of(root, "13.0.1"), std::vector<std::string>{"linux-sbsa"});
    auto e = store::other_platform_error(root, "13.0.1");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code, ErrorCode::not_found);
    EXPECT_EQ(e->message,
              "version '13.0.1' is installed for linux-sbsa only; this host takes linux-x86_64 "
              "for it");
    EXPECT_FALSE(store::other_platform_error(root, "12.4.1"));
    EXPECT_EQ(store::placed_versions(root).size(), 3u);

    store::Root grace{root.dir, {}, host_of(sys::HostKind::arm_server)};
    EXPECT_EQ(store::installed_versions(grace), (std::vector<std::string>{"12.4.1", "13.0.1"}));
    EXPECT_EQ(grace.version_dir("12.4.1"), root.versions("linux-sbsa") / "12.4.1");
}

TEST(Platforms, MigrationMovesEachVersionAndLeavesItsOldPathALink) {
    test::TempDir d;
    store::Root root{d.path() / "root", {}, host_of(sys::HostKind::x86_64)};
    ASSERT_TRUE(root.prepare());
    write_version(d, "versions/11.8.0", "11.8.0", "linux-x86_64"); // the layout before platforms
    write_version(d, "versions/12.4.1", "12.4.1", "linux-sbsa");
    d.write("root/versions/12.6.3/.cudaenv-version.json", "{not json"); // unreadable: stays
    // read as it is before the migration
    EXPECT_EQ(root.version_dir("11.8.0"), root.versions() / "11.8.0");
    EXPECT_EQ(store::installed_versions(root), std::vector<std::string>{"11.8.0"});
    EXPECT_EQ(store::other_platforms_of(root, "12.4.1"), std::vector<std::string>{"linux-sbsa"});

    ASSERT_TRUE(root.migrate_layout());
    EXPECT_EQ(root.version_dir("11.8.0"), root.versions("linux-x86_64") / "11.8.0");
    EXPECT_TRUE(fs::is_directory(fs::symlink_status(root.versions("linux-x86_64") / "11.8.0")));
    EXPECT_EQ(fs::read_symlink(root.versions() / "11.8.0"), "linux-x86_64/11.8.0");
    EXPECT_EQ(fs::read_symlink(root.versions() / "12.4.1"), "linux-sbsa/12.4.1");
    EXPECT_EQ(test::read_all(root.versions() / "11.8.0" / "lib64" / "libcudart.so"), "elf");
    EXPECT_TRUE(fs::is_directory(fs::symlink_status(root.versions() / "12.6.3")));
    EXPECT_EQ(store::installed_versions(root), std::vector<std::string>{"11.8.0"});
    EXPECT_EQ(store::placed_versions(root).size(), 2u); // each once: the links are not versions

    // idempotent, and the sweep keeps the migration's links while their version is there
    ASSERT_TRUE(root.migrate_layout());
    root.sweep();
    EXPECT_EQ(fs::read_symlink(root.versions() / "11.8.0"), "linux-x86_64/11.8.0");
    fs::remove_all(root.versions("linux-sbsa") / "12.4.1");
    root.sweep();
    EXPECT_FALSE(there(root.versions() / "12.4.1")); // its version is gone: the link too
    EXPECT_TRUE(there(root.versions() / "11.8.0"));
}

TEST(Platforms, AKilledMigrationsStrayLinkIsSweptAndTheNextRunFinishes) {
    test::TempDir d;
    store::Root root{d.path() / "root", {}, host_of(sys::HostKind::x86_64)};
    ASSERT_TRUE(root.prepare());
    write_version(d, "versions/11.8.0", "11.8.0", "linux-x86_64");
    // killed after making the link where the folder goes, before the exchange
    fs::create_directories(root.versions("linux-x86_64"));
    fs::create_symlink("linux-x86_64/11.8.0", root.versions("linux-x86_64") / "11.8.0");
    EXPECT_EQ(root.version_dir("11.8.0"), root.versions() / "11.8.0"); // still read
    root.sweep();
    EXPECT_TRUE(fs::is_directory(fs::symlink_status(root.versions("linux-x86_64") / "11.8.0")));
    EXPECT_EQ(fs::read_symlink(root.versions() / "11.8.0"), "linux-x86_64/11.8.0");
}
