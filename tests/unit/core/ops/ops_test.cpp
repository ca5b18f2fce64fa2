// The operations layer without the CLI: the session's precedence rules (root, mirror, channel,
// policy), and the operations' decisions -- availability, SPEC description, install's refusals,
// the doctor's grouping, update's refusals -- each held by a test with a temporary root and
// sysroot and the built-in manifests.
#include "core/ops/available.hpp"
#include "core/ops/doctor.hpp"
#include "core/ops/install.hpp"
#include "core/ops/resolve_spec.hpp"
#include "core/ops/session.hpp"
#include "core/ops/update.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace cudaenv;

namespace {

/// A session as the front end would fill it: a home, a root and a sysroot of its own, the
/// built-in manifests, nothing else from the real environment.
ops::Session session_in(const test::TempDir& d) {
    ops::Session s;
    s.env["HOME"] = (d.path() / "home").string();
    s.env["CUDAENV_SYSROOT"] = (d.path() / "sysroot").string();
    s.env["PATH"] = "";
    s.cwd = d.path() / "project";
    s.exe_path = d.path() / "bin" / "cudaenv";
    s.manifests_dir = CUDAENV_TEST_MANIFESTS;
    s.euid = 1000;
    fs::create_directories(d.path() / "sysroot");
    fs::create_directories(s.cwd);
    return s;
}

struct Recorder : ops::InstallObserver {
    std::vector<std::string> notes, warnings, machine;
    int starts = 0, ends = 0, failures = 0;

    void note(const std::string& t) override { notes.push_back(t); }

    void warning(const std::string& t) override { warnings.push_back(t); }

    void machine_warning(const std::string& t) override { machine.push_back(t); }

    void starting(const Resolution&) override { ++starts; }

    void event(const install::Event&) override {}

    void finished(const install::Outcome* o) override { ++(o ? ends : failures); }
};

} // namespace

TEST(Session, RootIsTheVariableThenTheMachineRootForUidZeroThenHome) {
    test::TempDir d;
    auto s = session_in(d);
    EXPECT_EQ(s.root().dir, d.path() / "home" / ".cudaenv");
    EXPECT_TRUE(s.root().upstreams.empty()); // no machine-wide versions/ yet

    auto machine = session_in(d);
    machine.euid = 0;
    d.write("sysroot/etc/cudaenv/config", "root = /srv/cuda\n");
    ASSERT_TRUE(machine.load_config());
    EXPECT_EQ(machine.root().dir, d.path() / "sysroot" / "srv" / "cuda");

    // a user's root reads the machine-wide one as its upstream once that has versions
    fs::create_directories(d.path() / "sysroot" / "srv" / "cuda" / "versions");
    auto user = session_in(d);
    ASSERT_TRUE(user.load_config());
    ASSERT_EQ(user.root().upstreams.size(), 1u);
    EXPECT_EQ(user.root().upstreams[0], d.path() / "sysroot" / "srv" / "cuda");

    auto chosen = session_in(d);
    chosen.env["CUDAENV_ROOT"] = (d.path() / "mine").string();
    chosen.euid = 0;
    EXPECT_EQ(chosen.root().dir, d.path() / "mine");
}

TEST(Session, MirrorAndChannelFollowTheirPrecedence) {
    test::TempDir d;
    auto s = session_in(d);
    EXPECT_EQ(s.base_url(), std::string(manifest::k_nvidia_base));
    EXPECT_FALSE(s.download_policy().allow_http);
    EXPECT_EQ(s.channel_url(), std::string(channel::k_default_channel));

    d.write("sysroot/etc/cudaenv/config", "mirror = http://config.example/nv/\n");
    ASSERT_TRUE(s.load_config());
    EXPECT_EQ(s.base_url(), "http://config.example/nv"); // trailing '/' dropped
    EXPECT_TRUE(s.download_policy().allow_http);         // the user configured plain http
    // a mirror carries the channel's copy
    EXPECT_EQ(s.channel_url(),
              std::string("http://config.example/nv/") + channel::k_mirror_channel_dir);

    s.env["CUDAENV_MIRROR"] = "https://env.example";
    EXPECT_EQ(s.base_url(), "https://env.example");
    EXPECT_FALSE(s.download_policy().allow_http);
    s.mirror = "https://flag.example//";
    EXPECT_EQ(s.base_url(), "https://flag.example");

    s.env["CUDAENV_CHANNEL"] = "https://channel.example/";
    EXPECT_EQ(s.channel_url(), "https://channel.example");
    s.channel = "https://flag-channel.example";
    EXPECT_EQ(s.channel_url(), "https://flag-channel.example");
}

TEST(Session, NumbersAreCheckedOnceAndTuneThePolicy) {
    test::TempDir d;
    auto s = session_in(d);
    EXPECT_EQ(s.lock_timeout(), std::chrono::seconds(600));
    s.env["CUDAENV_LOCK_TIMEOUT"] = "7";
    s.env["CUDAENV_RETRIES"] = "0";
    EXPECT_TRUE(s.check_environment());
    EXPECT_EQ(s.lock_timeout(), std::chrono::seconds(7));
    EXPECT_EQ(s.download_policy().max_attempts, 1);

    s.env["CUDAENV_RETRIES"] = "many";
    auto bad = s.check_environment();
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, ErrorCode::usage);
    EXPECT_NE(bad.error().message.find("CUDAENV_RETRIES"), std::string::npos);
}

TEST(Session, AMalformedConfigIsAUsageError) {
    test::TempDir d;
    auto s = session_in(d);
    d.write("sysroot/etc/cudaenv/config", "root = relative/path\n");
    auto r = s.load_config();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::usage);
}

TEST(SpecOptions, BadOptionsAreUsageErrorsNamingTheOption) {
    test::TempDir d;
    auto s = session_in(d);
    ops::SpecOptions o;
    o.cuda = "eleven";
    auto r = ops::to_resolve_options(o, s);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::usage);
    EXPECT_NE(r.error().full_message().find("--cuda"), std::string::npos);

    ops::SpecOptions p;
    p.platform = "linux-ppc64le";
    auto platform = ops::to_resolve_options(p, s);
    ASSERT_FALSE(platform);
    EXPECT_EQ(platform.error().code, ErrorCode::usage);
    ASSERT_FALSE(platform.error().hints.empty());
    EXPECT_NE(platform.error().hints[0].find("linux-aarch64"), std::string::npos);

    ops::SpecOptions ok;
    ok.cuda = "12.4";
    auto good = ops::to_resolve_options(ok, s);
    ASSERT_TRUE(good);
    // nothing forced: the machine decides per release
    EXPECT_TRUE(good->platform.empty());
    ASSERT_TRUE(good->platform_for);
    EXPECT_EQ(good->platform_for(Version::parse("12.4").value()).platform,
              sys::platform_for(s.host(), 12, 4).platform);
}

TEST(SpecOptions, ThePlatformIsTheOptionThenTheEnvironmentThenTheConfig) {
    test::TempDir d;
    auto s = session_in(d);
    d.write("sysroot/etc/cudaenv/config", "platform = linux-sbsa\n");
    ASSERT_TRUE(s.load_config());
    auto cuda12 = Version::parse("12.6").value();
    auto from_config = ops::to_resolve_options({}, s);
    ASSERT_TRUE(from_config);
    EXPECT_EQ(from_config->platform_for(cuda12).platform, "linux-sbsa");

    s.env["CUDAENV_PLATFORM"] = "linux-aarch64";
    ASSERT_TRUE(s.check_environment());
    auto from_env = ops::to_resolve_options({}, s);
    ASSERT_TRUE(from_env);
    EXPECT_EQ(from_env->platform, "linux-aarch64");
    EXPECT_EQ(from_env->platform_for(cuda12).platform, "linux-aarch64");

    ops::SpecOptions forced;
    forced.platform = "linux-x86_64";
    auto from_option = ops::to_resolve_options(forced, s);
    ASSERT_TRUE(from_option);
    EXPECT_EQ(from_option->platform_for(cuda12).platform, "linux-x86_64");

    s.env["CUDAENV_PLATFORM"] = "linux-arm64";
    auto bad = s.check_environment();
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, ErrorCode::usage);
}

TEST(DescribeSpec, TheDescriptionOutlivesTheCatalogItWasMadeFrom) {
    test::TempDir d;
    auto s = session_in(d);
    auto r = ops::describe_spec(s, "tf-2.13", {});
    ASSERT_TRUE(r) << r.error().full_message();
    // moved out of the operation, the resolution's pointers still hold (ASan reads them)
    auto desc = std::move(*r);
    ASSERT_NE(desc.described.res.cuda, nullptr);
    EXPECT_EQ(desc.described.res.cuda->version.major(), 11u);
    EXPECT_EQ(desc.described.res.cuda->version.minor(), 8u);
    ASSERT_NE(desc.described.res.cudnn, nullptr);
    EXPECT_EQ(desc.described.res.cudnn->version.str().rfind("8.6", 0), 0u);

    auto unknown = ops::describe_spec(s, "tf-1.0", {});
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().full_message().find("resolving 'tf-1.0'"), std::string::npos);
}

TEST(Available, FiltersByKindAndVersionPrefixNewestFirst) {
    test::TempDir d;
    auto s = session_in(d);
    auto r = ops::available(s, {"cuda", "12"});
    ASSERT_TRUE(r) << r.error().full_message();
    EXPECT_TRUE(r->has_cuda);
    EXPECT_FALSE(r->has_cudnn);
    EXPECT_FALSE(r->has_frameworks);
    ASSERT_GT(r->cuda.size(), 3u);
    for (std::size_t i = 0; i < r->cuda.size(); ++i) {
        EXPECT_EQ(r->cuda[i].version.major(), 12u);
        EXPECT_FALSE(r->cuda[i].installed); // an empty root
        if (i > 0 && r->cuda[i].source == r->cuda[i - 1].source) {
            EXPECT_TRUE(r->cuda[i].version < r->cuda[i - 1].version);
        }
    }

    auto torch = ops::available(s, {"pytorch", "2.5"});
    ASSERT_TRUE(torch);
    ASSERT_EQ(torch->frameworks.size(), 1u);
    ASSERT_FALSE(torch->frameworks[0].rows.empty());
    for (const auto& row : torch->frameworks[0].rows) {
        EXPECT_EQ(row.release->series.str().rfind("2.5", 0), 0u);
    }

    auto kind = ops::available(s, {"cuda-toolkit", ""});
    ASSERT_FALSE(kind);
    EXPECT_EQ(kind.error().code, ErrorCode::usage);
    auto filter = ops::available(s, {"cuda", "twelve"});
    ASSERT_FALSE(filter);
    EXPECT_EQ(filter.error().code, ErrorCode::usage);
}

TEST(InstallOp, RefusalsComeBeforeAnythingIsWritten) {
    test::TempDir d;
    auto s = session_in(d);
    Recorder rec;

    ops::InstallRequest match;
    match.match = true;
    match.specs = {"tf-2.13"};
    auto m = ops::install(s, match, rec);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, ErrorCode::usage);

    ops::InstallRequest none; // no SPEC, no project file, no Python environment
    auto n = ops::install(s, none, rec);
    ASSERT_FALSE(n);
    EXPECT_EQ(n.error().code, ErrorCode::usage);
    EXPECT_NE(n.error().message.find("needs a SPEC"), std::string::npos);

    ops::InstallRequest stray;
    stray.specs = {"tf-2.13"};
    stray.archives = {d.write("elsewhere/cudnn.tar.xz", "not one of them").string()};
    auto a = ops::install(s, stray, rec);
    ASSERT_FALSE(a);
    EXPECT_EQ(a.error().code, ErrorCode::usage);
    EXPECT_NE(a.error().message.find("none of the archives"), std::string::npos);

    EXPECT_EQ(rec.starts, 0);
    EXPECT_FALSE(fs::exists(s.root().dir / "versions"));
    EXPECT_FALSE(fs::exists(s.root().dir / "downloads"));
}

TEST(InstallOp, TheProjectsRequestIsInstalledWhenNoSpecIsGiven) {
    test::TempDir d;
    auto s = session_in(d);
    d.write("project/.cuda-version", "11.8\n");
    s.cwd = d.path() / "project" / "src"; // found from a folder below it
    fs::create_directories(s.cwd);
    Recorder rec;
    ops::InstallRequest req;
    req.dry_run = true;
    auto r = ops::install(s, req, rec);
    ASSERT_TRUE(r) << r.error().full_message();
    // the project's request, then the advisories that apply to CUDA 11.8.0 (the toolkit
    // bulletins; said, never refused)
    ASSERT_EQ(rec.notes.size(), 5u);
    EXPECT_NE(rec.notes[0].find("installing 11.8"), std::string::npos);
    EXPECT_NE(rec.notes[0].find(".cuda-version"), std::string::npos);
    const char* ids[] = {"NVIDIA-5594", "NVIDIA-5643", "NVIDIA-5661", "NVIDIA-5755"};
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(rec.notes[i + 1].rfind(std::string("advisory: ") + ids[i] + " (", 0), 0u)
            << rec.notes[i + 1];
    }
    EXPECT_NE(rec.notes[4].find("CUDA 11.8.0 is affected; fixed in 13.1 (fix: use CUDA 13.1"),
              std::string::npos)
        << rec.notes[4];
    ASSERT_EQ(r->outcomes.size(), 1u);
    EXPECT_EQ(r->outcomes[0].version.rfind("11.8", 0), 0u);
    EXPECT_EQ(rec.starts, 1);
    EXPECT_EQ(rec.ends, 1);
    EXPECT_FALSE(fs::exists(s.root().dir / "versions")); // a dry run writes nothing
}

TEST(Diagnose, AnUnknownProbeGetsItsNearMiss) {
    test::TempDir d;
    auto s = session_in(d);
    std::string id(doctor::probes().front().id);
    std::string typo = id.substr(0, id.size() - 1) + "x";
    auto r = ops::diagnose(s, {{typo}, false, false});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::usage);
    ASSERT_FALSE(r.error().hints.empty());
    EXPECT_NE(r.error().hints[0].find(id), std::string::npos);

    s.env["CUDAENV_SYSROOT"] = d.write("a-file", "").string();
    auto f = ops::diagnose(s, {});
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error().code, ErrorCode::usage);
}

TEST(Diagnose, FindingsAreCountedAndGroupedByLayerAndSurviveAMove) {
    test::TempDir d;
    auto s = session_in(d);
    std::vector<std::string> only;
    for (const auto& p : doctor::probes()) {
        if (only.size() < 3) {
            only.emplace_back(p.id);
        }
    }
    auto r = ops::diagnose(s, {only, true, false});
    ASSERT_TRUE(r) << r.error().full_message();
    auto d2 = std::move(*r);
    ASSERT_EQ(d2.entries.size(), only.size());
    EXPECT_EQ(d2.ok + d2.warn + d2.fail + d2.skip, only.size());
    EXPECT_EQ(d2.failed, d2.fail + d2.warn > 0); // --strict: a warning fails too
    std::size_t grouped = 0;
    for (const auto& layer : d2.layers) {
        ASSERT_FALSE(layer.entries.empty());
        for (const auto* e : layer.entries) {
            EXPECT_EQ(e->probe->layer, layer.name);
            EXPECT_GE(e, d2.entries.data()); // points into the moved diagnosis
            EXPECT_LT(e, d2.entries.data() + d2.entries.size());
            if (e->finding.status != doctor::Status::skip) {
                EXPECT_LE(e->finding.status, layer.status); // the layer is its worst
            }
        }
        ASSERT_NE(layer.headline, nullptr);
        ++grouped;
    }
    EXPECT_GE(grouped, 1u);
    EXPECT_FALSE(d2.facts); // not asked for
}

TEST(UpdateOp, AFixedManifestsSetOrABadChannelIsRefused) {
    test::TempDir d;
    auto s = session_in(d); // --manifests names a fixed set
    auto fixed = ops::update_manifests(s, true, "0.0.0");
    ASSERT_FALSE(fixed);
    EXPECT_EQ(fixed.error().code, ErrorCode::usage);

    s.manifests_dir.clear();
    s.channel = "https://channel.example/a b";
    auto spaced = ops::update_manifests(s, true, "0.0.0");
    ASSERT_FALSE(spaced);
    EXPECT_EQ(spaced.error().code, ErrorCode::usage);
    EXPECT_NE(spaced.error().message.find("spaces"), std::string::npos);
}
