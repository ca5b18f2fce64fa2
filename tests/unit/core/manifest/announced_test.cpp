// announced.json and driver-indexes.json: the generator on the reference's
// cuda-2026-12-supplement.json (what is known, each value's basis, what is not known), the
// codecs' checks, and the rule of which driver's cuda_compat a release takes.
#include "core/channel/diff.hpp"
#include "core/manifest/announced.hpp"
#include "core/manifest/codec.hpp"
#include "core/manifest/driver_indexes.hpp"
#include "core/manifest/generate.hpp"
#include "core/manifest/generate_cuda_supplement.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace cudaenv;
using namespace cudaenv::manifest;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const Catalog& catalog() {
    static const Catalog c = [] {
        auto r = load_catalog(CUDAENV_TEST_MANIFESTS);
        return r ? *r : Catalog{};
    }();
    return c;
}

Version v(const char* s) {
    return *Version::try_parse(s);
}

json doc_of(const char* kind, const char* key, const json& entry) {
    return json{{"schema", "cudaenv.manifest/1"}, {"kind", kind}, {key, json::array({entry})}};
}

json announced_entry() {
    return json::parse(R"x({"version": "13.5", "status": "released", "status_source": "notes",
        "index": "NOT FOUND", "driver": {"branch": 620, "basis": "inferred", "source": "seen"},
        "components": [{"name": "CUDA Runtime (cudart)", "version": "13.5.37"}],
        "components_source": "Table 1", "not_known": [{"what": "SM support", "text": "NOT FOUND"}]})x");
}

json driver_entry() {
    return json::parse(R"({"driver": "620.70.10", "release_date": "2026-11-23",
        "index": "nvidia-driver/redist/redistrib_620.70.10.json", "source": "page",
        "cuda_compat": {"cuda": "13.5", "platforms": {"linux-x86_64": {
        "path": "nvidia-driver/redist/cuda_compat/linux-x86_64/x.tar.xz", "sha256": ")" +
                       std::string(64, 'a') + R"(", "size": 5}}}})");
}

} // namespace

// The real reference: 13.5 released, its index, date, SM list and host compilers not known, its
// driver branch inferred; 13.4.0 a preview superseded by 13.4.1; three driver indexes with
// NVIDIA's hashes for cuda_compat.
TEST(CudaSupplement, TheGeneratorSaysWhatIsKnownAndOnWhatBasis) {
    const auto& c = catalog();
    ASSERT_EQ(c.announced.size(), 2u);
    const auto& preview = c.announced[0];
    EXPECT_EQ(preview.version.str(), "13.4.0");
    EXPECT_TRUE(preview.preview);
    EXPECT_EQ(preview.superseded_by, v("13.4.1"));
    const auto& r = c.announced[1];
    EXPECT_EQ(r.version.str(), "13.5");
    EXPECT_FALSE(r.preview);
    EXPECT_TRUE(r.release_date.empty());
    EXPECT_EQ(r.release_date_text.rfind("NOT READ", 0), 0u);
    EXPECT_EQ(r.driver_branch, 620u);
    EXPECT_TRUE(r.driver_branch_inferred);
    EXPECT_NE(r.driver_source.find("INFERRED"), std::string::npos);
    EXPECT_EQ(r.driver_compat_min, v("580.65.06"));
    auto cudart = std::find_if(r.components.begin(), r.components.end(), [](const auto& p) {
        return p.first == "CUDA Runtime (cudart)";
    });
    ASSERT_NE(cudart, r.components.end());
    EXPECT_EQ(cudart->second, "13.5.37");
    std::vector<std::string> unknown;
    for (const auto& [what, text] : r.not_known) {
        unknown.push_back(what);
        EXPECT_EQ(text.rfind("NOT ", 0), 0u) << what;
    }
    EXPECT_EQ(unknown,
              (std::vector<std::string>{
                  "the driver branch its release notes name", "SM support", "host compilers"}));
    ASSERT_EQ(c.driver_indexes.size(), 3u);
    EXPECT_EQ(c.driver_indexes[0].driver.str(), "610.57.04");
    EXPECT_EQ(c.driver_indexes[0].compat_cuda.str(), "13.3");
    EXPECT_EQ(c.driver_indexes[2].driver.str(), "620.70.10");
    EXPECT_EQ(c.driver_indexes[2].index, "nvidia-driver/redist/redistrib_620.70.10.json");
    EXPECT_EQ(c.driver_indexes[2].compat.at("linux-sbsa").sha256,
              "7cb88c8a2db8a7394efe612f06c60f828dd6d2e93106de1a4268a74c92187d2b");
    EXPECT_EQ(c.driver_indexes[2].compat.at("linux-sbsa").size, 94936444u);
}

// A reference that carries the release's index drops its announcement; an archive whose sha256
// the reference lacks is left out (not known), never guessed.
TEST(CudaSupplement, AKnownReleaseIsNotAnnouncedAndAnArchiveWithoutItsHashIsLeftOut) {
    test::TempDir dir;
    json doc = json::parse(
        std::ifstream(std::string(CUDAENV_TEST_REFERENCE) + "/cuda-2026-12-supplement.json"));
    auto& entries = doc["nvidia_driver_redist_index"]["entries_seen"];
    entries[2]["cuda_compat_linux-sbsa"].erase("sha256");
    std::ofstream(dir.path() / "cuda-2026-12-supplement.json") << doc.dump();
    std::vector<CudaRelease> cuda;
    for (const char* known : {"13.4.1", "13.5.0"}) {
        CudaRelease r;
        r.version = v(known);
        cuda.push_back(r);
    }
    GenerateReport report;
    auto out = cuda_supplement_from_reference(dir.path(), cuda, report);
    ASSERT_TRUE(out) << out.error().message;
    ASSERT_TRUE(out->announced);
    ASSERT_EQ(out->announced->size(), 1u); // 13.4.0 only: 13.5.0 is described
    EXPECT_EQ(out->announced->front().version.str(), "13.4.0");
    ASSERT_TRUE(out->driver_indexes);
    const auto& last = out->driver_indexes->back();
    EXPECT_EQ(last.driver.str(), "620.70.10");
    EXPECT_EQ(last.compat.count("linux-sbsa"), 0u);
    EXPECT_EQ(last.compat.count("linux-x86_64"), 1u);
    // a preview whose GA release the reference does not describe stops the generator
    auto none = cuda_supplement_from_reference(dir.path(), {}, report);
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("superseded by 13.4.1"), std::string::npos);
}

TEST(CudaSupplement, TheCodecsRoundTripAndRefuseWhatTheyCannotTrust) {
    auto a = parse_announced(doc_of("announced", "cuda", announced_entry()), "announced.json");
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_EQ(announced_to_json(*a).dump(),
              nlohmann::ordered_json(announced_to_json(*parse_announced(
                                         json::parse(announced_to_json(*a).dump()), "x")))
                  .dump());
    auto bad = [](json e, const char* key, json value) {
        if (value.is_null()) {
            e.erase(key);
        } else {
            e[key] = value;
        }
        return e;
    };
    for (const auto& e : {bad(announced_entry(), "status", "rumoured"),
                          bad(announced_entry(), "status", "preview"), // no superseded_by
                          bad(announced_entry(), "index", nullptr),
                          bad(announced_entry(), "version", "13"),
                          bad(announced_entry(),
                              "driver",
                              json{{"branch", 620}, {"basis", "guess"}, {"source", "x"}})}) {
        auto r = parse_announced(doc_of("announced", "cuda", e), "announced.json");
        EXPECT_FALSE(r) << e.dump();
    }
    auto d = parse_driver_indexes(doc_of("driver-indexes", "drivers", driver_entry()), "d.json");
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(d->front().compat.at("linux-x86_64").size, 5u);
    auto plat = driver_entry();
    plat["cuda_compat"]["platforms"]["windows-x86_64"] =
        plat["cuda_compat"]["platforms"]["linux-x86_64"];
    auto unsafe = driver_entry();
    unsafe["cuda_compat"]["platforms"]["linux-x86_64"]["path"] = "../etc/passwd";
    auto line = driver_entry();
    line["cuda_compat"]["cuda"] = "13";
    auto nosha = driver_entry();
    nosha["cuda_compat"]["platforms"]["linux-x86_64"].erase("sha256");
    for (const auto& e : {plat, unsafe, line, nosha}) {
        EXPECT_FALSE(parse_driver_indexes(doc_of("driver-indexes", "drivers", e), "d.json"))
            << e.dump();
    }
}

// The rule: a redistrib release from 13.4 without its own cuda_compat takes the newest known
// driver's for its minor and platform; older releases, and those with their own, never.
TEST(CudaSupplement, WhichDriversCudaCompatAReleaseTakes) {
    const auto& c = catalog();
    CudaRelease r135 = *c.find_cuda(v("13.4.2"));
    r135.version = v("13.5.0");
    const auto* d = driver_compat_for(c.driver_indexes, r135, "linux-sbsa");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->driver.str(), "620.70.10");
    EXPECT_EQ(driver_compat_for(c.driver_indexes, r135, "linux-aarch64"), nullptr);
    EXPECT_EQ(driver_compat_any(c.driver_indexes, r135).size(), 2u);
    EXPECT_EQ(driver_compat_for(c.driver_indexes, *c.find_cuda(v("13.4.2")), "linux-x86_64"),
              nullptr); // no R615 index known
    EXPECT_EQ(driver_compat_for(c.driver_indexes, *c.find_cuda(v("13.3.1")), "linux-x86_64"),
              nullptr); // 13.3.1's own index has cuda_compat
}

// A set that carries CUDA 13.5 drops its announcement; a new driver index is said, and its
// cuda_compat sha256s are pins like every other archive's.
TEST(CudaSupplement, ASetsDiffAndPinsNameAnnouncementsAndDriverIndexes) {
    Catalog before = catalog();
    Catalog after = catalog();
    after.announced.pop_back(); // 13.5: the set carries the release instead
    before.driver_indexes.pop_back();
    auto changes = channel::diff_sets(before, {}, after, {});
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_EQ(changes[0].subject, "CUDA 13.5 (announced, not installable)");
    EXPECT_EQ(changes[1].subject, "driver index 620.70.10");
    EXPECT_EQ(changes[1].detail, "cuda_compat for CUDA 13.5 (linux-sbsa, linux-x86_64)");
    auto pins = channel::pins_of(after);
    EXPECT_TRUE(std::any_of(pins.begin(), pins.end(), [](const channel::Pin& p) {
        return p.what == "nvidia-driver 620.70.10 cuda_compat linux-x86_64" &&
               p.sha256 == "103b8788dced53b16701fd10b2037ac9fa4c6de3a6e672dc95ee731f55d45a07";
    }));
}
