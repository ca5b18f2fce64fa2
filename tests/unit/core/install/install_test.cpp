// The install pipeline (install/install, docs/reliability.md §1) end to end against a loopback
// HTTP server: NVIDIA-layout .tar.xz archives built in memory, a Resolution built by hand, and
// what the root holds afterwards each way (published version, store entries, download cache,
// staging), plus uninstall and gc on what it installed.
#include "../fetch/loopback_http.hpp"
#include "core/install/gc.hpp"
#include "core/install/install.hpp"
#include "core/sha256.hpp"
#include "core/store/lock.hpp"
#include "core/store/records.hpp"
#include "support/platform.hpp"
#include "support/tar_writer.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <lzma.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

using namespace cudaenv;
using test::HttpAnswer;
using test::HttpRequest;
using test::LoopbackHttp;
using test::TarWriter;

namespace fs = std::filesystem;

namespace {

/// xz-compresses `data` with the system's liblzma (the same library cudaenv decodes with),
/// loaded here so the test binary links nothing new.
std::string xz(const std::string& data) {
    static auto encode = [] {
        void* h = ::dlopen("liblzma.so.5", RTLD_NOW | RTLD_LOCAL);
        return h ? reinterpret_cast<decltype(&::lzma_easy_buffer_encode)>(
                       ::dlsym(h, "lzma_easy_buffer_encode"))
                 : nullptr;
    }();
    if (!encode) {
        ADD_FAILURE() << "liblzma.so.5 cannot be loaded";
        return {};
    }
    std::string out(data.size() + data.size() / 2 + 4096, '\0');
    std::size_t pos = 0;
    auto rc = encode(0,
                     LZMA_CHECK_CRC64,
                     nullptr,
                     reinterpret_cast<const std::uint8_t*>(data.data()),
                     data.size(),
                     reinterpret_cast<std::uint8_t*>(out.data()),
                     &pos,
                     out.size());
    EXPECT_EQ(rc, LZMA_OK);
    out.resize(pos);
    return out;
}

/// Bytes xz cannot shrink, so an archive's size (the install order) follows its payload.
std::string noise(std::size_t n, unsigned seed) {
    std::string s(n, '\0');
    std::uint32_t x = 2463534242u ^ seed;
    for (auto& c : s) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        c = static_cast<char>(x & 0xff);
    }
    return s;
}

const std::string k_platform = test::native_platform();
constexpr const char* k_cudart_top = "cuda_cudart-linux-x86_64-11.8.89-archive";
constexpr const char* k_cudnn_top = "cudnn-linux-x86_64-8.6.0.163_cuda11-archive";

std::string cudart_path() {
    return std::string("cuda/redist/cuda_cudart/linux-x86_64/") + k_cudart_top + ".tar.xz";
}

std::string cudnn_path() {
    return std::string("cudnn/redist/cudnn/linux-x86_64/") + k_cudnn_top + ".tar.xz";
}

/// cuda_cudart 11.8.89 as NVIDIA lays it out (lib/, include/, a LICENSE at the top); `pad`
/// bytes of incompressible data make it as large as a test needs.
std::string cudart_archive(std::size_t pad = 0) {
    std::string t = k_cudart_top;
    TarWriter w;
    w.dir(t).dir(t + "/lib").dir(t + "/include");
    w.file(t + "/LICENSE", "license\n");
    w.file(t + "/lib/libcudart.so.11.8.89", "not really ELF", 0755);
    w.symlink(t + "/lib/libcudart.so.11.0", "libcudart.so.11.8.89");
    w.symlink(t + "/lib/libcudart.so", "libcudart.so.11.0");
    w.file(t + "/include/cuda_runtime.h", "#pragma once\n");
    if (pad) {
        w.file(t + "/lib/padding.bin", noise(pad, 1));
    }
    return xz(w.bytes());
}

/// cuDNN 8.6.0.163 for CUDA 11 in the redist layout: its header says 8.6.0.
std::string cudnn_archive(std::size_t pad = 0, std::string_view library = "not really ELF either") {
    std::string t = k_cudnn_top;
    TarWriter w;
    w.dir(t).dir(t + "/lib").dir(t + "/include");
    w.file(t + "/include/cudnn_version.h",
           "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 0\n");
    w.file(t + "/lib/libcudnn.so.8.6.0", library, 0755);
    w.symlink(t + "/lib/libcudnn.so.8", "libcudnn.so.8.6.0");
    w.symlink(t + "/lib/libcudnn.so", "libcudnn.so.8");
    if (pad) {
        w.file(t + "/lib/padding.bin", noise(pad, 2));
    }
    return xz(w.bytes());
}

/// The manifests' side: one CUDA release with cuda_cudart, one cuDNN release. The Resolution
/// points into it, so it outlives every Resolution made from it.
struct Catalog {
    manifest::CudaRelease cuda;
    manifest::CudnnRelease cudnn;
    manifest::CudnnBuild build;

    Catalog() {
        cuda.version = Version::parse("11.8.0").value();
        manifest::Component c;
        c.name = "cuda_cudart";
        c.description = "CUDA Runtime (cudart)";
        c.version = Version::parse("11.8.89").value();
        cuda.components.push_back(c);
        cudnn.version = Version::parse("8.6.0.163").value();
        cudnn.major = 8;
        build.cuda = "11";
        build.cuda_major = 11;
    }
};

ResolvedArchive archive_for(const std::string& component,
                            const std::string& version,
                            const std::string& path,
                            const std::string& bytes) {
    ResolvedArchive a;
    a.component = component;
    a.version = Version::parse(version).value();
    a.artifact.path = path;
    a.artifact.sha256 = sha256_hex(bytes);
    a.artifact.size = bytes.size();
    return a;
}

/// What the loopback "NVIDIA" serves: path -> bytes; a path in `broken` answers 500.
class Mirror {
  public:
    Mirror()
        : server([this](const HttpRequest& r) {
              std::lock_guard<std::mutex> g(mu);
              if (broken.count(r.path)) {
                  return HttpAnswer::status(500, "Internal Server Error", "no");
              }
              auto it = files.find(r.path);
              if (it == files.end()) {
                  return HttpAnswer::status(404, "Not Found", "");
              }
              return HttpAnswer::ok(it->second);
          }) {}

    void put(const std::string& path, const std::string& bytes) {
        std::lock_guard<std::mutex> g(mu);
        files["/" + path] = bytes;
    }

    void break_path(const std::string& path) {
        std::lock_guard<std::mutex> g(mu);
        broken.insert("/" + path);
    }

    void heal() {
        std::lock_guard<std::mutex> g(mu);
        broken.clear();
    }

    /// Requests for `path` so far.
    std::size_t hits(const std::string& path) const {
        std::size_t n = 0;
        for (const auto& r : server.requests()) {
            n += r.path == "/" + path;
        }
        return n;
    }

    std::size_t requests() const { return server.requests().size(); }

    std::mutex mu;
    std::map<std::string, std::string> files;
    std::set<std::string> broken;
    LoopbackHttp server; // last: its thread reads the maps above
};

std::vector<std::string> names_in(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

class Install : public ::testing::Test {
  protected:
    void SetUp() override {
        root.dir = tmp.path() / "root";
        options.base_url = mirror.server.url();
        options.policy.allow_http = true; // the loopback server has no TLS
        options.policy.connect_timeout_s = 5;
        options.policy.low_speed_time_s = 5;
        options.policy.max_attempts = 2;
        options.policy.backoff = std::chrono::milliseconds(1);
        options.lock_timeout = std::chrono::seconds(5);
        options.jobs = 1; // archives in a known order: the largest first
        serve_cudart(cudart_archive());
        serve_cudnn(cudnn_archive());
    }

    /// The mirror serves `bytes` as cuda_cudart, and the resolutions made from now on pin them.
    void serve_cudart(std::string bytes) {
        cudart = std::move(bytes);
        mirror.put(cudart_path(), cudart);
    }

    /// The mirror serves `bytes` as cuDNN, and the resolutions made from now on pin them.
    void serve_cudnn(std::string bytes) {
        cudnn = std::move(bytes);
        mirror.put(cudnn_path(), cudnn);
    }

    /// install::install of `r`, keeping every event it reports in `events` (under a lock: the
    /// workers report them).
    Result<install::Outcome> install_keeping(const Resolution& r,
                                             std::vector<install::Event>& events) {
        return install::install(root, r, options, [&](const install::Event& e) {
            std::lock_guard<std::mutex> g(events_mu);
            events.push_back(e);
        });
    }

    /// CUDA 11.8.0 with only cuda_cudart.
    Resolution cuda_only() const {
        Resolution r;
        r.spec = "11.8";
        r.cuda = &catalog.cuda;
        r.profile = "runtime";
        r.platform = k_platform;
        r.archives.push_back(archive_for("cuda_cudart", "11.8.89", cudart_path(), cudart));
        return r;
    }

    /// CUDA 11.8.0 + cuDNN 8.6.0.163.
    Resolution with_cudnn() const {
        Resolution r = cuda_only();
        r.spec = "11.8+cudnn8.6";
        r.cudnn = &catalog.cudnn;
        r.cudnn_build = &catalog.build;
        r.cudnn_sublibraries = {"libcudnn"};
        r.archives.push_back(archive_for("cudnn", "8.6.0.163", cudnn_path(), cudnn));
        return r;
    }

    std::string entry_of(const std::string& component,
                         const std::string& version,
                         const std::string& bytes) const {
        return component + "-" + version + "-" + sha256_hex(bytes).substr(0, 12);
    }

    std::string cudart_entry() const { return entry_of("cuda_cudart", "11.8.89", cudart); }

    std::string cudnn_entry() const { return entry_of("cudnn", "8.6.0.163", cudnn); }

    /// Nothing half-done left: staging holds nothing.
    void expect_no_stages() const {
        EXPECT_EQ(names_in(root.staging()), std::vector<std::string>{}) << "in .staging";
    }

    test::TempDir tmp;
    store::Root root;
    Mirror mirror;
    Catalog catalog;
    install::Options options;
    std::string cudart, cudnn;
    std::mutex events_mu;
};

const std::string k_with_cudnn = "11.8.0+cudnn8.6.0.163";

TEST_F(Install, PublishesAComposedVersionAndItsStoreEntries) {
    auto got = install::install(root, with_cudnn(), options);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_TRUE(got->changed);
    EXPECT_EQ(got->version, k_with_cudnn);
    EXPECT_EQ(got->prefix, root.versions(test::native_platform()) / k_with_cudnn);
    EXPECT_EQ(got->downloaded_bytes, cudart.size() + cudnn.size());
    ASSERT_EQ(got->archives.size(), 2u);
    EXPECT_EQ(got->archives[0].store_entry, cudart_entry());
    EXPECT_EQ(got->archives[0].url, mirror.server.url("/" + cudart_path()));
    EXPECT_FALSE(got->archives[0].present);

    // the version: lib -> lib64, cuDNN flattened beside cudart, LICENSE left in the store
    fs::path v = got->prefix;
    EXPECT_EQ(names_in(root.versions(test::native_platform())),
              std::vector<std::string>{k_with_cudnn});
    EXPECT_TRUE(fs::is_directory(v / "lib64"));
    EXPECT_EQ(test::read_all(v / "lib64/libcudart.so.11.8.89"), "not really ELF");
    EXPECT_EQ(fs::read_symlink(v / "lib64/libcudart.so.11.0"), "libcudart.so.11.8.89");
    EXPECT_EQ(test::read_all(v / "lib64/libcudnn.so.8"), "not really ELF either");
    EXPECT_EQ(fs::read_symlink(v / "lib64/libcudnn.so.8"), "libcudnn.so.8.6.0");
    EXPECT_TRUE(fs::exists(v / "include/cuda_runtime.h"));
    EXPECT_TRUE(fs::exists(v / "include/cudnn_version.h"));
    EXPECT_FALSE(fs::exists(v / "LICENSE"));
    EXPECT_FALSE(fs::exists(v / "lib64/lib")); // the archive's own lib/ became lib64/
    EXPECT_EQ(fs::read_symlink(v / "lib"), "lib64");
    // hard links into the store: the store stays the one copy
    EXPECT_TRUE(fs::equivalent(v / "lib64/libcudart.so.11.8.89",
                               root.store() / cudart_entry() / "lib/libcudart.so.11.8.89"));

    auto rec = store::read_version_record(v);
    ASSERT_TRUE(rec) << rec.error().full_message();
    EXPECT_EQ(rec->name, k_with_cudnn);
    EXPECT_EQ(rec->cuda, "11.8.0");
    EXPECT_EQ(rec->cudnn, "8.6.0.163");
    EXPECT_EQ(rec->cudnn_cuda, "11");
    EXPECT_EQ(rec->profile, "runtime");
    EXPECT_EQ(rec->platform, k_platform);
    ASSERT_EQ(rec->components.size(), 2u);
    EXPECT_EQ(rec->components[0].component, "cuda_cudart");
    EXPECT_EQ(rec->components[0].store, cudart_entry());
    EXPECT_EQ(rec->components[0].sha256, sha256_hex(cudart));
    EXPECT_EQ(rec->components[1].component, "cudnn");
    EXPECT_EQ(rec->components[1].store, cudnn_entry());

    // the store: one entry per archive, each with its record
    EXPECT_EQ(names_in(root.store()), (std::vector<std::string>{cudart_entry(), cudnn_entry()}));
    auto srec = store::read_store_record(root.store() / cudart_entry());
    ASSERT_TRUE(srec) << srec.error().full_message();
    EXPECT_EQ(srec->component, "cuda_cudart");
    EXPECT_EQ(srec->version, "11.8.89");
    EXPECT_EQ(srec->sha256, sha256_hex(cudart));
    EXPECT_EQ(srec->source, mirror.server.url("/" + cudart_path()));
    EXPECT_EQ(srec->top, k_cudart_top);
    EXPECT_EQ(srec->files.size(), 7u); // 2 folders, 3 files, 2 links; the top stripped
    auto nrec = store::read_store_record(root.store() / cudnn_entry());
    ASSERT_TRUE(nrec) << nrec.error().full_message();
    EXPECT_EQ(nrec->top, k_cudnn_top);

    // extracted archives are not kept, and nothing half-done is left
    EXPECT_EQ(names_in(root.downloads()), std::vector<std::string>{});
    expect_no_stages();
    EXPECT_EQ(mirror.hits(cudart_path()), 1u);
    EXPECT_EQ(mirror.hits(cudnn_path()), 1u);
}

TEST_F(Install, AgainChangesNothingAndDownloadsNothing) {
    auto first = install::install(root, with_cudnn(), options);
    ASSERT_TRUE(first) << first.error().full_message();
    auto requests = mirror.requests();
    auto record_before = test::read_all(root.versions(test::native_platform()) / k_with_cudnn /
                                        store::k_version_record);

    struct stat before {}; // the same folder afterwards, not a new one

    ASSERT_EQ(::stat((root.versions(test::native_platform()) / k_with_cudnn).c_str(), &before), 0);

    std::vector<install::Event> events;
    auto again = install_keeping(with_cudnn(), events);
    ASSERT_TRUE(again) << again.error().full_message();
    EXPECT_FALSE(again->changed);
    EXPECT_EQ(again->downloaded_bytes, 0u);
    EXPECT_EQ(again->prefix, root.versions(test::native_platform()) / k_with_cudnn);
    EXPECT_EQ(mirror.requests(), requests);
    EXPECT_TRUE(events.empty()); // covered before any archive is looked at

    struct stat after {};

    ASSERT_EQ(::stat((root.versions(test::native_platform()) / k_with_cudnn).c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino);
    EXPECT_EQ(test::read_all(root.versions(test::native_platform()) / k_with_cudnn /
                             store::k_version_record),
              record_before);
    expect_no_stages();
}

TEST_F(Install, ASecondVersionReusesTheStoreEntryItShares) {
    ASSERT_TRUE(install::install(root, cuda_only(), options));
    EXPECT_EQ(mirror.hits(cudart_path()), 1u);

    std::vector<install::Event> events;
    auto got = install_keeping(with_cudnn(), events);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_TRUE(got->changed);
    EXPECT_EQ(got->downloaded_bytes, cudnn.size());
    EXPECT_EQ(mirror.hits(cudart_path()), 1u); // not downloaded again
    EXPECT_EQ(mirror.hits(cudnn_path()), 1u);
    ASSERT_EQ(got->archives.size(), 2u);
    EXPECT_TRUE(got->archives[0].present);
    EXPECT_FALSE(got->archives[1].present);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events[0].kind, install::Event::Kind::reused);
    EXPECT_EQ(events[0].component, "cuda_cudart");
    for (std::size_t i = 1; i < events.size(); ++i) {
        EXPECT_EQ(events[i].component, "cudnn") << i;
    }
    EXPECT_EQ(names_in(root.versions(test::native_platform())),
              (std::vector<std::string>{"11.8.0", k_with_cudnn}));
    // both versions link the one store copy
    EXPECT_TRUE(fs::equivalent(
        root.versions(test::native_platform()) / "11.8.0/lib64/libcudart.so.11.8.89",
        root.versions(test::native_platform()) / k_with_cudnn / "lib64/libcudart.so.11.8.89"));
}

TEST_F(Install, EventsFollowEachArchiveFromDownloadToDone) {
    std::vector<install::Event> events;
    auto got = install_keeping(with_cudnn(), events);
    ASSERT_TRUE(got) << got.error().full_message();
    using K = install::Event::Kind;
    for (const auto& [component, bytes] :
         {std::pair{std::string("cuda_cudart"), cudart}, std::pair{std::string("cudnn"), cudnn}}) {
        std::vector<K> kinds;
        std::uint64_t last_progress = 0;
        for (const auto& e : events) {
            if (e.component != component) {
                continue;
            }
            kinds.push_back(e.kind);
            EXPECT_EQ(e.total, std::optional<std::uint64_t>(bytes.size())) << component;
            if (e.kind == K::progress) {
                EXPECT_GE(e.bytes, last_progress) << component;
                last_progress = e.bytes;
            }
            if (e.kind == K::done || e.kind == K::extracting) {
                EXPECT_EQ(e.bytes, bytes.size()) << component;
                EXPECT_FALSE(e.cached) << component;
            }
        }
        ASSERT_GE(kinds.size(), 3u) << component;
        EXPECT_EQ(kinds.front(), K::downloading) << component;
        EXPECT_EQ(kinds[kinds.size() - 2], K::extracting) << component;
        EXPECT_EQ(kinds.back(), K::done) << component;
        for (std::size_t i = 1; i + 2 < kinds.size(); ++i) {
            EXPECT_EQ(kinds[i], K::progress) << component << " event " << i;
        }
    }
    // one job at a time, the largest archive first
    std::string first = cudart.size() >= cudnn.size() ? "cuda_cudart" : "cudnn";
    EXPECT_EQ(events.front().component, first);
}

TEST_F(Install, AWrongHashPublishesNothingAndKeepsWhatWasThere) {
    ASSERT_TRUE(install::install(root, cuda_only(), options));
    auto store_before = names_in(root.store());
    auto record_before =
        test::read_all(root.versions(test::native_platform()) / "11.8.0" / store::k_version_record);

    // the mirror serves other bytes than the manifest pins for cuDNN: a valid archive of the
    // same size, so only the hash tells them apart
    std::string other = cudnn_archive(0, "not really ELF eithe!");
    ASSERT_EQ(other.size(), cudnn.size());
    ASSERT_NE(other, cudnn);
    mirror.put(cudnn_path(), other);
    std::vector<install::Event> events;
    auto got = install_keeping(with_cudnn(), events);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity) << got.error().full_message();
    EXPECT_EQ(exit_code(got.error().code), 4);
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{"11.8.0"});
    EXPECT_EQ(names_in(root.store()), store_before);
    EXPECT_EQ(
        test::read_all(root.versions(test::native_platform()) / "11.8.0" / store::k_version_record),
        record_before);
    EXPECT_FALSE(fs::exists(root.downloads() / sha256_hex(cudnn)));
    EXPECT_FALSE(fs::exists(root.downloads() / (sha256_hex(cudnn) + ".partial")));
    EXPECT_FALSE(fs::exists(root.store() / cudnn_entry()));
    expect_no_stages();
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, install::Event::Kind::failed);
    EXPECT_EQ(events.back().component, "cudnn");
}

TEST_F(Install, AHostileArchiveWithAMatchingHashIsRefusedAndNotKept) {
    // the pinned sha256 is this archive's own: only the extraction filter stands in the way
    TarWriter w;
    w.dir(k_cudnn_top).file(std::string(k_cudnn_top) + "/../../escaped", "x");
    serve_cudnn(xz(w.bytes()));

    auto got = install::install(root, with_cudnn(), options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::unsafe_archive) << got.error().full_message();
    EXPECT_EQ(exit_code(got.error().code), 5);
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{});
    EXPECT_FALSE(fs::exists(root.store() / cudnn_entry()));
    EXPECT_FALSE(fs::exists(tmp.path() / "escaped"));
    EXPECT_FALSE(fs::exists(root.dir / "escaped"));
    // verified yet refused: never kept for the next try
    EXPECT_FALSE(fs::exists(root.downloads() / sha256_hex(cudnn)));
    expect_no_stages();

    // and the next try downloads (and refuses) it again rather than trusting a cached copy
    auto before = mirror.hits(cudnn_path());
    auto again = install::install(root, with_cudnn(), options);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, ErrorCode::unsafe_archive);
    EXPECT_EQ(mirror.hits(cudnn_path()), before + 1);
}

TEST_F(Install, AnAbsoluteEntryIsRefusedToo) {
    TarWriter w;
    w.dir(k_cudnn_top).file("/tmp/cudaenv-install-test-absolute", "x");
    serve_cudnn(xz(w.bytes()));

    auto got = install::install(root, with_cudnn(), options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::unsafe_archive) << got.error().full_message();
    EXPECT_FALSE(fs::exists("/tmp/cudaenv-install-test-absolute"));
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{});
    EXPECT_FALSE(fs::exists(root.downloads() / sha256_hex(cudnn)));
    expect_no_stages();
}

TEST_F(Install, AServerFailingOnTheSecondArchivePublishesNoVersion) {
    // cudart is the larger, so it runs (and completes) first; cuDNN then meets only 500s
    serve_cudart(cudart_archive(8192));
    ASSERT_GT(cudart.size(), cudnn.size());
    mirror.break_path(cudnn_path());

    auto got = install::install(root, with_cudnn(), options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::network) << got.error().full_message();
    EXPECT_EQ(mirror.hits(cudnn_path()), static_cast<std::size_t>(options.policy.max_attempts));
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{});
    // the finished archive's entry is complete, so it may stay; the failed one has none
    EXPECT_EQ(names_in(root.store()), std::vector<std::string>{cudart_entry()});
    EXPECT_TRUE(store::read_store_record(root.store() / cudart_entry()));
    expect_no_stages();

    // once the server is well again, only the missing archive is downloaded
    mirror.heal();
    auto again = install::install(root, with_cudnn(), options);
    ASSERT_TRUE(again) << again.error().full_message();
    EXPECT_EQ(mirror.hits(cudart_path()), 1u);
    EXPECT_EQ(again->downloaded_bytes, cudnn.size());
    EXPECT_TRUE(
        fs::exists(root.versions(test::native_platform()) / k_with_cudnn / "lib64/libcudnn.so.8"));
}

TEST_F(Install, ALayoutTheManifestDoesNotMatchIsNotPublished) {
    // the cuDNN header says 8.5.0 where the manifest says 8.6.0.163
    TarWriter w;
    std::string t = k_cudnn_top;
    w.dir(t).dir(t + "/lib").dir(t + "/include");
    w.file(t + "/include/cudnn_version.h",
           "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 5\n#define CUDNN_PATCHLEVEL 0\n");
    w.file(t + "/lib/libcudnn.so.8", "x", 0755);
    serve_cudnn(xz(w.bytes()));

    auto got = install::install(root, with_cudnn(), options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity) << got.error().full_message();
    EXPECT_NE(got.error().full_message().find("8.5.0"), std::string::npos);
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{});
    expect_no_stages();
}

TEST_F(Install, ALibraryThatDoesNotLoadIsNotPublished) {
    std::vector<std::string> checked;
    options.check_libraries =
        [&](const fs::path& dir,
            const std::vector<std::string>& files) -> Result<std::vector<std::string>> {
        EXPECT_EQ(dir.filename(), "lib64");
        checked = files;
        return std::vector<std::string>{"libcudnn.so.8.6.0: not an ELF file"};
    };
    auto got = install::install(root, with_cudnn(), options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity);
    EXPECT_NE(got.error().full_message().find("libcudnn.so.8.6.0: not an ELF file"),
              std::string::npos)
        << got.error().full_message();
    // the real files, not their links
    EXPECT_EQ(checked, (std::vector<std::string>{"libcudart.so.11.8.89", "libcudnn.so.8.6.0"}));
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{});
    expect_no_stages();
}

TEST_F(Install, ADryRunWritesNothing) {
    options.dry_run = true;
    auto got = install::install(root, with_cudnn(), options);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_TRUE(got->changed);
    ASSERT_EQ(got->archives.size(), 2u);
    EXPECT_EQ(got->archives[1].store_entry, cudnn_entry());
    EXPECT_EQ(got->archives[1].size, std::optional<std::uint64_t>(cudnn.size()));
    EXPECT_FALSE(fs::exists(root.dir));
    EXPECT_EQ(mirror.requests(), 0u);
}

TEST_F(Install, AnInstalledComponentWhoseHashChangedIsRefused) {
    ASSERT_TRUE(install::install(root, cuda_only(), options));
    // the same cuda_cudart version, other bytes: a tampered mirror or manifest
    std::string other = cudart_archive(100);
    mirror.put(cudart_path(), other);
    Resolution r = with_cudnn();
    r.archives[0] = archive_for("cuda_cudart", "11.8.89", cudart_path(), other);
    auto before = mirror.requests();
    auto got = install::install(root, r, options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity) << got.error().full_message();
    EXPECT_EQ(mirror.requests(), before); // refused before anything is requested
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{"11.8.0"});
}

TEST_F(Install, UninstallKeepsTheStoreEntriesAnotherVersionUses) {
    ASSERT_TRUE(install::install(root, cuda_only(), options));
    ASSERT_TRUE(install::install(root, with_cudnn(), options));

    auto removed = install::uninstall(root, k_with_cudnn, false, std::chrono::seconds(5));
    ASSERT_TRUE(removed) << removed.error().full_message();
    EXPECT_TRUE(removed->changed);
    EXPECT_EQ(removed->store_entries_removed, std::vector<std::string>{cudnn_entry()});
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{"11.8.0"});
    EXPECT_EQ(names_in(root.store()), std::vector<std::string>{cudart_entry()});
    EXPECT_EQ(test::read_all(root.versions(test::native_platform()) /
                             "11.8.0/lib64/libcudart.so.11.8.89"),
              "not really ELF");
    EXPECT_EQ(names_in(root.trash()), std::vector<std::string>{});

    auto last = install::uninstall(root, "11.8.0", false, std::chrono::seconds(5));
    ASSERT_TRUE(last) << last.error().full_message();
    EXPECT_EQ(last->store_entries_removed, std::vector<std::string>{cudart_entry()});
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{});
    EXPECT_EQ(names_in(root.store()), std::vector<std::string>{});

    auto none = install::uninstall(root, "11.8.0", false, std::chrono::seconds(5));
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, ErrorCode::not_found);
}

TEST_F(Install, GcRemovesTheStoreEntryAFailedInstallLeft) {
    // cuDNN (the larger) is extracted, then cudart fails: the cuDNN entry is left unused
    serve_cudnn(cudnn_archive(8192));
    mirror.break_path(cudart_path());
    ASSERT_FALSE(install::install(root, with_cudnn(), options));
    ASSERT_EQ(names_in(root.store()), std::vector<std::string>{cudnn_entry()});
    mirror.heal();
    ASSERT_TRUE(install::install(root, cuda_only(), options));

    std::map<std::string, std::string> needed{{"11.8.0", "the global version"}};
    auto plan = install::plan_gc(root, needed);
    ASSERT_EQ(plan.items.size(), 1u);
    EXPECT_EQ(plan.items[0].kind, install::GcItem::Kind::store_entry);
    EXPECT_EQ(plan.items[0].name, cudnn_entry());
    EXPECT_EQ(plan.kept.at("11.8.0"), "the global version");
    EXPECT_EQ(names_in(root.store()).size(), 2u); // planning removes nothing

    auto done = install::run_gc(root, needed, std::chrono::seconds(5));
    ASSERT_TRUE(done) << done.error().full_message();
    EXPECT_EQ(done->items.size(), 1u);
    EXPECT_EQ(names_in(root.store()), std::vector<std::string>{cudart_entry()});
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{"11.8.0"});
    EXPECT_TRUE(
        fs::exists(root.versions(test::native_platform()) / "11.8.0/lib64/libcudart.so.11.8.89"));
}

TEST_F(Install, TheGlobalVersionIsUninstalledOnlyWithForce) {
    ASSERT_TRUE(install::install(root, cuda_only(), options));
    store::State state;
    state.global = "11.8.0";
    std::ofstream(root.state_file()) << store::encode(state);

    auto refused = install::uninstall(root, "11.8.0", false, std::chrono::seconds(5));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::conflict) << refused.error().full_message();
    EXPECT_EQ(exit_code(refused.error().code), 7);
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{"11.8.0"});
    EXPECT_EQ(names_in(root.store()), std::vector<std::string>{cudart_entry()});

    auto forced = install::uninstall(root, "11.8.0", true, std::chrono::seconds(5));
    ASSERT_TRUE(forced) << forced.error().full_message();
    EXPECT_TRUE(forced->changed);
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{});
    EXPECT_EQ(names_in(root.store()), std::vector<std::string>{});
}

TEST_F(Install, WhatAKilledRunLeftIsSweptFirst) {
    ASSERT_TRUE(root.prepare());
    // a stage and a store entry without its record: a run killed mid-way
    fs::create_directories(root.staging() / "cudnn-killed");
    std::ofstream(root.staging() / "cudnn-killed" / "half") << "x";
    fs::create_directories(root.store() / cudnn_entry() / "lib");

    auto got = install::install(root, with_cudnn(), options);
    ASSERT_TRUE(got) << got.error().full_message();
    expect_no_stages();
    EXPECT_TRUE(store::read_store_record(root.store() / cudnn_entry()));
    EXPECT_EQ(got->downloaded_bytes, cudart.size() + cudnn.size()); // the half entry is no entry
}

TEST_F(Install, ADamagedVersionIsReplacedByANewComposition) {
    ASSERT_TRUE(install::install(root, cuda_only(), options));
    fs::path v = root.versions(test::native_platform()) / "11.8.0";
    fs::remove(v / store::k_version_record); // read-only: replaced, as any user could
    std::ofstream(v / store::k_version_record) << "{not json";
    std::ofstream(v / "stale") << "from before";

    auto got = install::install(root, cuda_only(), options);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_TRUE(got->changed);
    EXPECT_EQ(got->downloaded_bytes, 0u); // the store entry is still good
    auto rec = store::read_version_record(v);
    ASSERT_TRUE(rec) << rec.error().full_message();
    EXPECT_EQ(rec->name, "11.8.0");
    EXPECT_FALSE(fs::exists(v / "stale"));
    EXPECT_TRUE(fs::exists(v / "lib64/libcudart.so.11.8.89"));
    expect_no_stages();
    EXPECT_EQ(names_in(root.trash()), std::vector<std::string>{});
}

TEST_F(Install, AnotherRunHoldingTheLockMakesItWaitThenGiveUp) {
    ASSERT_TRUE(root.prepare());
    auto held = store::Lock::acquire(root.dir, std::chrono::seconds(1));
    ASSERT_TRUE(held) << held.error().full_message();
    options.lock_timeout = std::chrono::milliseconds(200);
    auto got = install::install(root, cuda_only(), options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::lock_timeout) << got.error().full_message();
    EXPECT_EQ(exit_code(got.error().code), 75);
    EXPECT_EQ(mirror.requests(), 0u);
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{});
}

TEST_F(Install, ListedVersionsCarryTheirRecords) {
    ASSERT_TRUE(install::install(root, cuda_only(), options));
    ASSERT_TRUE(install::install(root, with_cudnn(), options));
    auto list = install::list_installed(root);
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[0].name, "11.8.0");
    EXPECT_EQ(list[0].cudnn, "");
    EXPECT_EQ(list[1].name, k_with_cudnn);
    EXPECT_EQ(list[1].cuda, "11.8.0");
    EXPECT_EQ(list[1].cudnn, "8.6.0.163");
    EXPECT_EQ(list[1].profile, "runtime");
    EXPECT_EQ(list[1].platform, k_platform);
    EXPECT_EQ(list[1].prefix, root.versions(test::native_platform()) / k_with_cudnn);
    EXPECT_GT(list[1].bytes, list[0].bytes); // cuDNN's files on top of cudart's
    EXPECT_FALSE(list[1].upstream);
    EXPECT_TRUE(list[1].problem.empty());

    EXPECT_EQ(install::versions_having(root, "lib64/libcudnn.so.8"),
              std::vector<std::string>{k_with_cudnn});
    EXPECT_EQ(install::versions_having(root, "lib64/libcudart.so.11.0"),
              (std::vector<std::string>{"11.8.0", k_with_cudnn}));
    EXPECT_EQ(install::versions_having(root, "bin/nvcc"), std::vector<std::string>{});

    std::ofstream(root.versions(test::native_platform()) / "11.8.0" / store::k_version_record)
        << "{not json";
    EXPECT_EQ(install::list_installed(root).size(), 1u);
    auto with_damaged = install::list_installed(root, true);
    ASSERT_EQ(with_damaged.size(), 2u);
    EXPECT_EQ(with_damaged[0].name, "11.8.0");
    EXPECT_FALSE(with_damaged[0].problem.empty());
}

TEST_F(Install, AnUpstreamsVersionIsUsedButNotRemovedFromBelow) {
    store::Root machine{tmp.path() / "machine", {}};
    ASSERT_TRUE(install::install(machine, cuda_only(), options));
    auto requests = mirror.requests();
    root.upstreams = {machine.dir};

    // the machine-wide root has it: nothing to do here
    auto got = install::install(root, cuda_only(), options);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_FALSE(got->changed);
    EXPECT_EQ(got->prefix, machine.versions(test::native_platform()) / "11.8.0");
    EXPECT_EQ(mirror.requests(), requests);
    EXPECT_EQ(names_in(root.versions(test::native_platform())), std::vector<std::string>{});

    auto list = install::list_installed(root);
    ASSERT_EQ(list.size(), 1u);
    EXPECT_TRUE(list[0].upstream);
    EXPECT_EQ(list[0].root, machine.dir);

    auto refused = install::uninstall(root, "11.8.0", false, std::chrono::seconds(5));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::filesystem) << refused.error().full_message();
    EXPECT_TRUE(
        fs::exists(machine.versions(test::native_platform()) / "11.8.0" / store::k_version_record));
}

TEST_F(Install, ParallelJobsInstallTheSameVersion) {
    options.jobs = 4;
    std::vector<install::Event> events;
    auto got = install_keeping(with_cudnn(), events);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_TRUE(got->changed);
    EXPECT_EQ(got->downloaded_bytes, cudart.size() + cudnn.size());
    EXPECT_EQ(names_in(root.store()), (std::vector<std::string>{cudart_entry(), cudnn_entry()}));
    EXPECT_TRUE(
        fs::exists(root.versions(test::native_platform()) / k_with_cudnn / "lib64/libcudnn.so.8"));
    for (const char* component : {"cuda_cudart", "cudnn"}) {
        std::vector<install::Event::Kind> kinds;
        for (const auto& e : events) {
            if (e.component == component) {
                kinds.push_back(e.kind);
            }
        }
        ASSERT_FALSE(kinds.empty()) << component;
        EXPECT_EQ(kinds.front(), install::Event::Kind::downloading) << component;
        EXPECT_EQ(kinds.back(), install::Event::Kind::done) << component;
    }
    EXPECT_EQ(names_in(root.downloads()), std::vector<std::string>{});
    expect_no_stages();
}

} // namespace

/// One byte written in place through a version's file (the hard link into the store), as an
/// attacker with root or a stray script does: root passes over the read-only mode.
void write_in_place(const fs::path& p, char c) {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f) << p << ": run the unit tests as root, or the write is refused (0444)";
    f.seekp(2);
    f.put(c);
}

TEST_F(Install, StoreObjectsArePublishedReadOnlyWithEachFilesSha256) {
    ASSERT_TRUE(install::install(root, with_cudnn(), options));
    auto rec = store::read_store_record(root.store() / cudart_entry());
    ASSERT_TRUE(rec) << rec.error().full_message();
    EXPECT_TRUE(rec->hashed());
    std::size_t files = 0;
    for (const auto& f : rec->files) {
        if (f.type != store::FileRecord::Type::file) {
            continue;
        }
        ++files;
        fs::path p = root.store() / cudart_entry() / f.path;
        EXPECT_EQ(f.sha256, sha256_hex(test::read_all(p))) << f.path;
        auto perms = fs::status(p).permissions();
        EXPECT_EQ(perms & fs::perms::all, f.executable ? fs::perms(0555) : fs::perms(0444))
            << f.path;
    }
    EXPECT_EQ(files, 3u);
    // folders stay the owner's: gc, uninstall and a repair remove and replace without chmod
    EXPECT_EQ(fs::status(root.store() / cudart_entry() / "lib").permissions() & fs::perms::all,
              fs::perms(0755));
}

TEST_F(Install, AnEntryWhoseRecordHoldsAnotherFullSha256IsNotReused) {
    // the name carries the pin's first 12 hex digits; the record another archive's full hash
    std::string pin = sha256_hex(cudart);
    std::string other = pin.substr(0, 12) + (pin[12] == '0' ? '1' : '0') + pin.substr(13);
    fs::path planted = root.store() / cudart_entry();
    fs::create_directories(planted / "lib");
    std::ofstream(planted / "lib/libcudart.so.11.8.89") << "planted";
    store::StoreRecord r{"cuda_cudart", "11.8.89", other, "x", k_cudart_top, 7, {}};
    r.files.push_back({store::FileRecord::Type::dir, "lib", "", 0, false, ""});
    r.files.push_back({store::FileRecord::Type::file,
                       "lib/libcudart.so.11.8.89",
                       "",
                       7,
                       false,
                       sha256_hex("planted")});
    ASSERT_TRUE(store::write_store_record(planted, r));

    auto got = install::install(root, cuda_only(), options);
    ASSERT_TRUE(got) << got.error().full_message();
    ASSERT_EQ(got->archives.size(), 1u);
    EXPECT_FALSE(got->archives[0].present);
    EXPECT_EQ(mirror.hits(cudart_path()), 1u); // downloaded: the entry was not this archive
    auto rec = store::read_store_record(planted);
    ASSERT_TRUE(rec) << rec.error().full_message();
    EXPECT_EQ(rec->sha256, pin);
    EXPECT_EQ(test::read_all(root.versions(test::native_platform()) /
                             "11.8.0/lib64/libcudart.so.11.8.89"),
              "not really ELF");
    expect_no_stages();
    EXPECT_EQ(names_in(root.trash()), std::vector<std::string>{});
}

TEST_F(Install, AVersionWrittenThroughItsHardLinkIsFoundAndRepaired) {
    ASSERT_TRUE(install::install(root, with_cudnn(), options));
    fs::path lib =
        root.versions(test::native_platform()) / k_with_cudnn / "lib64/libcudart.so.11.8.89";
    write_in_place(lib, 'X');
    // verify's check names it, in the version and as the store's object
    auto check = install::check_version(root, k_with_cudnn, install::Depth::content);
    ASSERT_TRUE(check) << check.error().full_message();
    ASSERT_EQ(check->damage.size(), 1u);
    EXPECT_EQ(check->damage[0].path, "lib64/libcudart.so.11.8.89");
    EXPECT_EQ(check->damage[0].kind, install::Damage::Kind::modified);
    EXPECT_TRUE(check->damage[0].in_store);
    EXPECT_EQ(check->damaged_entries(), std::set<std::string>{cudart_entry()});

    auto got = install::install(root, with_cudnn(), options);
    ASSERT_TRUE(got) << got.error().full_message();
    EXPECT_TRUE(got->changed); // not a silent "already installed"
    ASSERT_EQ(got->repaired.size(), 1u);
    EXPECT_EQ(got->repaired[0].path, "lib64/libcudart.so.11.8.89");
    EXPECT_EQ(test::read_all(lib), "not really ELF");
    EXPECT_EQ(mirror.hits(cudart_path()), 2u); // extracted again: downloaded again
    EXPECT_EQ(mirror.hits(cudnn_path()), 1u);  // the intact entry is reused
    auto after = install::check_version(root, k_with_cudnn, install::Depth::content);
    ASSERT_TRUE(after) << after.error().full_message();
    EXPECT_TRUE(after->intact());
    expect_no_stages();
}

TEST_F(Install, AWriteWithItsTimePutBackIsFoundByRehashingOnly) {
    ASSERT_TRUE(install::install(root, cuda_only(), options));
    fs::path lib = root.versions(test::native_platform()) / "11.8.0/lib64/libcudart.so.11.8.89";
    auto when = fs::last_write_time(lib);
    write_in_place(lib, 'Y');
    fs::last_write_time(lib, when);
    auto quick = install::check_version(root, "11.8.0", install::Depth::metadata);
    ASSERT_TRUE(quick) << quick.error().full_message();
    EXPECT_TRUE(quick->intact()); // what install checks: metadata only
    auto deep = install::check_version(root, "11.8.0", install::Depth::content);
    ASSERT_TRUE(deep) << deep.error().full_message();
    ASSERT_EQ(deep->damage.size(), 1u);
    EXPECT_NE(deep->damage[0].what.find("content changed"), std::string::npos);

    auto plain = install::install(root, cuda_only(), options);
    ASSERT_TRUE(plain) << plain.error().full_message();
    EXPECT_FALSE(plain->changed);
    options.repair = true;
    auto repaired = install::install(root, cuda_only(), options);
    ASSERT_TRUE(repaired) << repaired.error().full_message();
    EXPECT_TRUE(repaired->changed);
    EXPECT_EQ(test::read_all(lib), "not really ELF");
}

namespace {

constexpr const char* k_orin_top = "cuda_compat_orin-linux-sbsa-13.2.44290101-archive";

std::string compat_orin_path() {
    return std::string("cuda/redist/cuda_compat_orin/linux-sbsa/") + k_orin_top + ".tar.xz";
}

/// cuda_compat_orin as its redistrib archive is named; its files in compat_orin/ (as NVIDIA's
/// cuda-compat-orin package puts them in cuda-X.Y/compat_orin), or elsewhere when `where` says.
std::string compat_orin_archive(const std::string& where = "compat_orin") {
    std::string t = k_orin_top;
    TarWriter w;
    w.dir(t).dir(t + "/" + where);
    w.file(t + "/LICENSE", "license\n");
    w.file(t + "/" + where + "/libcuda.so.1.1", "orin's user-mode driver", 0755);
    w.symlink(t + "/" + where + "/libcuda.so.1", "libcuda.so.1.1");
    return xz(w.bytes());
}

} // namespace

/// `r` plus cuda_compat_orin from `bytes`, as resolve makes it on an Orin with CUDA 13.2 or later.
Resolution with_compat_orin(Resolution r, const std::string& bytes) {
    r.platform_compat = "cuda_compat_orin";
    r.archives.push_back(
        archive_for("cuda_compat_orin", "13.2.44290101", compat_orin_path(), bytes));
    return r;
}

// On a Jetson Orin a CUDA 13 version carries cuda_compat_orin (resolve adds it): its libcuda stays
// in <version>/compat_orin, which exec and the shim put first on an Orin only (compat_test.cpp);
// never in lib64, where `global` would hand it to the machine-wide loader.
TEST_F(Install, CompatOrinIsLaidOutInItsOwnFolderAndRecorded) {
    auto bytes = compat_orin_archive();
    mirror.put(compat_orin_path(), bytes);
    auto got = install::install(root, with_compat_orin(cuda_only(), bytes), options);
    ASSERT_TRUE(got) << got.error().full_message();
    fs::path v = got->prefix;
    EXPECT_EQ(test::read_all(v / "compat_orin/libcuda.so.1.1"), "orin's user-mode driver");
    EXPECT_EQ(fs::read_symlink(v / "compat_orin/libcuda.so.1"), "libcuda.so.1.1");
    EXPECT_FALSE(fs::exists(v / "lib64/libcuda.so.1"));
    auto rec = store::read_version_record(v);
    ASSERT_TRUE(rec) << rec.error().full_message();
    ASSERT_EQ(rec->components.size(), 2u);
    EXPECT_EQ(rec->components[1].component, "cuda_compat_orin");
    EXPECT_EQ(rec->components[1].sha256, sha256_hex(bytes));
}

TEST_F(Install, CompatOrinOutsideItsFolderIsNotPublished) {
    auto bytes = compat_orin_archive("lib");
    mirror.put(compat_orin_path(), bytes);
    auto got = install::install(root, with_compat_orin(cuda_only(), bytes), options);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::integrity) << got.error().full_message();
    EXPECT_NE(got.error().full_message().find("outside compat_orin/"), std::string::npos)
        << got.error().full_message();
    EXPECT_EQ(names_in(root.versions()), std::vector<std::string>{});
    expect_no_stages();
}
