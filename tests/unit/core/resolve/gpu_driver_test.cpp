// The driver verdict on the real manifests (gpu-support.json from NVIDIA's lists, gpus.json's
// family rule): each case is a GPU/driver pair whose answer NVIDIA's own lists give.
#include "core/manifest/codec.hpp"
#include "core/manifest/gpu_support.hpp"
#include "core/resolve/gpu_driver.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace cudaenv;
using namespace cudaenv::manifest;
using Kind = GpuDriverVerdict::Kind;

namespace {

const GpuSupport& support() {
    static const GpuSupport s = [] {
        auto r = load_gpu_support(CUDAENV_TEST_MANIFESTS);
        if (!r) {
            ADD_FAILURE() << r.error().message;
            return GpuSupport{};
        }
        return std::move(r).value();
    }();
    return s;
}

const std::vector<Gpu>& family() {
    static const std::vector<Gpu> g = [] {
        auto c = load_catalog(CUDAENV_TEST_MANIFESTS);
        return c ? c->gpus : std::vector<Gpu>{};
    }();
    return g;
}

GpuDriverVerdict check(const char* device,
                       const char* subsystem,
                       const char* driver,
                       const char* name = "",
                       unsigned cc = 0) {
    return check_gpu_driver(
        support(), family(), GpuId{device, subsystem, name, cc}, *Version::try_parse(driver));
}

} // namespace

TEST(GpuDriver, TheTablesAreLoaded) {
    EXPECT_EQ(support().newest_driver->str(), "595.45.04");
    EXPECT_GE(support().listings.size(), 293u);
    EXPECT_TRUE(support().known_branches().count(535));
}

// NVIDIA's open-module lists say when a GPU was first named, not what it needs (the first tag,
// 515.43.04, named every GPU of its day although R450 drove the A100; the Tesla T4 is named only
// from 575): a driver they name the GPU in drives it (ok), one they do not is unknown, never too
// old, and the first naming driver is kept as an upper bound (`listed_from`).
TEST(GpuDriver, TheListsAnswerYesOrCannotTellNeverTooOld) {
    auto h200 = check("0x2335", "10de:18be", "535.104.05", "NVIDIA H200");
    EXPECT_EQ(h200.kind, Kind::unknown);
    EXPECT_TRUE(h200.by_id);
    EXPECT_FALSE(h200.need);
    EXPECT_EQ(h200.listed_from->str(), "550.90.07");
    EXPECT_NE(h200.why.find("not a minimum"), std::string::npos) << h200.why;
    EXPECT_EQ(check("2335", "", "545.29.06").listed_from->str(), "550.90.07");
    EXPECT_EQ(check("2335", "", "550.90.07").kind, Kind::ok);
    EXPECT_EQ(check("2335", "", "550.54.14").listed_from->str(), "550.90.07");
    EXPECT_EQ(check("26b9", "", "520.61.05").listed_from->str(), "535.104.05"); // L40S
    EXPECT_EQ(check("2901", "", "570.26").listed_from->str(), "570.86.15");     // B200
    EXPECT_EQ(check("3182", "", "580.82.07").kind, Kind::ok);                   // B300
    // the field's cases: a Tesla T4 (1eb8) on R535 and R550, named by the lists only from 575,
    // and an A100 (20b0) on 570.86.10 (CUDA 12.8.0's bundled driver): never "too old"
    for (const char* d : {"535.104.05", "550.54.15", "570.86.10"}) {
        EXPECT_NE(check("1eb8", "10de:12a2", d, "Tesla T4").kind, Kind::too_old) << d;
        EXPECT_NE(check("20b0", "10de:134f", d, "NVIDIA A100-SXM4-40GB").kind, Kind::too_old) << d;
    }
}

// A laptop RTX 3050 (GA107M) is not an A10: models are matched as whole words.
TEST(GpuDriver, ModelsAreNamedAsWholeWords) {
    EXPECT_FALSE(names_model("GA107M [GeForce RTX 3050 Mobile]", "NVIDIA A10"));
    EXPECT_TRUE(names_model("GA107M [GeForce RTX 3050 Mobile]", "NVIDIA GeForce RTX 3050"));
    EXPECT_TRUE(names_model("NVIDIA A10", "NVIDIA A10"));
    EXPECT_FALSE(names_model("NVIDIA A100-SXM4-40GB", "NVIDIA A10"));
    const auto* row = family_row(family(), "GA107M [GeForce RTX 3050 Mobile]");
    EXPECT_TRUE(row == nullptr || row->name.find("A10") == std::string::npos) << row->name;
}

// One row per family cannot be right: the H100's PCIe, SXM5 and NVL parts are three device ids
// listed from three drivers, and some parts differ by subsystem alone.
TEST(GpuDriver, TheDeviceIdAndWhereItMattersTheSubsystemDecide) {
    EXPECT_EQ(check("2321", "10de:1839", "535.54.03").listed_from->str(), "535.104.05"); // H100 NVL
    EXPECT_EQ(check("2330", "10de:16c1", "520.61.05").listed_from->str(), "525.85.05");  // SXM5
    // the PCIe part is first listed by an off-mainline tag: that exact driver drives it
    EXPECT_EQ(check("2331", "10de:1626", "520.56.06").kind, Kind::ok);
    EXPECT_EQ(check("2331", "10de:1626", "520.61.05").listed_from->str(), "520.61.07");
    EXPECT_EQ(check("2331", "10de:1626", "520.61.07").kind, Kind::ok);
    // A100-SXM4-80GB (20b2 subsystem 10de:1622) was named after the 40 GB part of the same id
    auto a100 = check("20b2", "10de:1622", "515.48.07");
    EXPECT_TRUE(a100.exact);
    EXPECT_EQ(a100.listed_from->str(), "515.76");
    auto a100_40 = check("20b2", "10de:1463", "515.48.07");
    EXPECT_FALSE(a100_40.exact);
    EXPECT_EQ(a100_40.kind, Kind::ok);
    EXPECT_EQ(check("232c", "10de:2064", "535.216.03").listed_from->str(), "550.127.08");
    EXPECT_EQ(check("232c", "", "535.216.03").kind, Kind::ok);
}

TEST(GpuDriver, ABranchNewerThanTheListsIsTakenForTheGpusTheyStillList) {
    EXPECT_EQ(check("2335", "", "615.71.09").kind, Kind::ok);
    EXPECT_EQ(check("2335", "", "620.10.01").kind, Kind::ok);
}

TEST(GpuDriver, OldGpusOnDriversPastTheirLastBranch) {
    // GTX 1080 (Pascal, PCI 10de:1b80): not in the open modules' lists; R580 is its last branch
    auto p = check("1b80", "", "590.44.01", "NVIDIA GeForce GTX 1080");
    EXPECT_FALSE(p.by_id);
    EXPECT_EQ(p.kind, Kind::too_new);
    EXPECT_EQ(*p.last_branch, 580u);
    // on R580 it is driven; the family rule has no minimum for an SM older than its table
    EXPECT_EQ(check("1b80", "", "580.95.05", "NVIDIA GeForce GTX 1080").kind, Kind::unknown);
    // Tesla K80 (Kepler): R470
    auto k = check("102d", "", "525.60.13", "NVIDIA Tesla K80", 37);
    EXPECT_EQ(k.kind, Kind::too_new);
    EXPECT_EQ(*k.last_branch, 470u);
    EXPECT_NE(k.why.find("is not in NVIDIA's open-module lists"), std::string::npos) << k.why;
}

TEST(GpuDriver, AnUnknownIdFallsBackToTheFamilyRuleAndSaysSo) {
    // an id newer than the data, named like an H100 by NVML
    auto v = check("23ff", "", "470.57.02", "NVIDIA H100 80GB HBM3");
    EXPECT_FALSE(v.by_id);
    EXPECT_EQ(v.kind, Kind::too_old);
    EXPECT_EQ(v.need->str(), "520.61.05");
    EXPECT_NE(v.why.find("by family"), std::string::npos) << v.why;
    EXPECT_EQ(check("23ff", "", "470.57.02", "some device").kind, Kind::unknown);
}

TEST(GpuDriver, EndOfLifeBranches) {
    auto v = [](const char* d) { return *Version::try_parse(d); };
    EXPECT_NE(
        branch_end_of_life(support(), v("535.261.03"), "2026-12-05").find("end of life in 2026-06"),
        std::string::npos);
    EXPECT_EQ(branch_end_of_life(support(), v("535.261.03"), "2026-05-30"), "");
    EXPECT_EQ(branch_end_of_life(support(), v("580.95.05"), "2026-12-05"), "");
    EXPECT_NE(branch_end_of_life(support(), v("470.256.02"), "2026-12-05").find("older than every"),
              std::string::npos);
    // a branch between the ones the lifecycle names is not judged (R615 is new)
    EXPECT_EQ(branch_end_of_life(support(), v("615.71.09"), "2026-12-05"), "");
}

TEST(GpuSupportCodec, RoundTripsAndRefusesBadIds) {
    auto j = gpu_support_to_json(support());
    auto back = parse_gpu_support(nlohmann::json::parse(j.dump()), "t");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->listings.size(), support().listings.size());
    auto bad = nlohmann::json::parse(j.dump());
    bad["listings"][0]["device"] = "../x";
    EXPECT_FALSE(parse_gpu_support(bad, "t"));
    bad = nlohmann::json::parse(j.dump());
    bad["listings"][0]["first_per_branch"] = nlohmann::json::array({"abc"});
    EXPECT_FALSE(parse_gpu_support(bad, "t"));
    EXPECT_EQ(normalize_pci_id("0x2B8C"), "2b8c");
    EXPECT_EQ(normalize_pci_id("0x2B8"), "");
}
