// Which advisories apply to which subjects, against the committed advisories.json (NVIDIA's
// bulletins as the generator made them) and small hand-made ranges: a driver below and at each
// branch's fix, a branch a bulletin does not list, the data-center fix, toolkits known by their
// major.minor only, cuBLAS ranges limited to some GPUs, acknowledgements, and the branches the
// later bulletins stopped listing.
#include "core/advisory/match.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

using namespace cudaenv;
using namespace cudaenv::advisory;
using manifest::AdvisoryProduct;

namespace {

/// A version the test spells out.
Version V(const std::string& s) {
    return Version::try_parse(s).value();
}

const manifest::Advisories& known() {
    static const manifest::Advisories a = [] {
        auto r = manifest::load_advisories(CUDAENV_TEST_MANIFESTS);
        return r ? *r : manifest::Advisories{};
    }();
    return a;
}

Subject subject(AdvisoryProduct p, const std::string& v, bool datacenter = false) {
    Subject s;
    s.product = p;
    s.version = V(v);
    s.where = "this machine";
    s.datacenter = datacenter;
    return s;
}

Subject driver(const std::string& v, bool datacenter = false) {
    return subject(AdvisoryProduct::driver, v, datacenter);
}

Subject cublas(const std::string& v, std::vector<unsigned> ccs) {
    auto s = subject(AdvisoryProduct::cublas, v);
    s.gpu_ccs = std::move(ccs);
    s.cuda = "13.0.2";
    s.version_name = "13.0.2";
    return s;
}

/// advisory id -> its fix for the subject ("-" when NVIDIA names none).
std::map<std::string, std::string> hits(const Subject& s,
                                        const std::vector<Acknowledgement>& acks = {}) {
    std::map<std::string, std::string> out;
    for (const auto& h : match(known(), {s}, acks)) {
        out[h.advisory->id] = h.fix ? h.fix->str() : "-";
    }
    return out;
}

using Fixes = std::map<std::string, std::string>;

} // namespace

TEST(AdvisoryMatch, TheCommittedAdvisoriesLoad) {
    ASSERT_EQ(known().advisories.size(), 23u);
}

TEST(AdvisoryMatch, R535BelowEveryFixIsAffectedByEachBulletinWithItsOwnFix) {
    EXPECT_EQ(hits(driver("535.104.05")),
              (Fixes{{"NVIDIA-5614", "535.230.02"},
                     {"NVIDIA-5630", "535.247.01"},
                     {"NVIDIA-5670", "535.261.03"},
                     {"NVIDIA-5703", "535.274.02"},
                     {"NVIDIA-5747", "535.288.01"},
                     {"NVIDIA-5821", "535.309.01"}}));
}

TEST(AdvisoryMatch, ADriverAtABranchsFixIsNoLongerAffectedByThatBulletin) {
    // at each R535 fix in turn: that bulletin and the older ones are gone, the later remain
    const std::vector<std::pair<std::string, std::string>> r535{{"NVIDIA-5614", "535.230.02"},
                                                                {"NVIDIA-5630", "535.247.01"},
                                                                {"NVIDIA-5670", "535.261.03"},
                                                                {"NVIDIA-5703", "535.274.02"},
                                                                {"NVIDIA-5747", "535.288.01"},
                                                                {"NVIDIA-5821", "535.309.01"}};
    for (std::size_t i = 0; i < r535.size(); ++i) {
        Fixes want;
        for (std::size_t j = i + 1; j < r535.size(); ++j) {
            want.insert(r535[j]);
        }
        EXPECT_EQ(hits(driver(r535[i].second)), want) << r535[i].second;
        // one below the fix: that bulletin applies again
        auto below = V(r535[i].second);
        auto one_less =
            below.str().substr(0, below.str().rfind('.')) + "." + std::to_string(below[2] - 1);
        want.insert(r535[i]);
        EXPECT_EQ(hits(driver(one_less)), want) << one_less;
    }
    EXPECT_EQ(hits(driver("535.309.01")), Fixes{});
    // R580 at 5821's fix: 5703, 5747 and 5821 are fixed, 5861 (known in part) is not
    EXPECT_EQ(hits(driver("580.159.03")), (Fixes{{"NVIDIA-5861", "580.178.04"}}));
    EXPECT_EQ(hits(driver("580.178.04")), Fixes{});
    EXPECT_EQ(hits(driver("580.65.06")),
              (Fixes{{"NVIDIA-5703", "580.95.05"},
                     {"NVIDIA-5747", "580.126.09"},
                     {"NVIDIA-5821", "580.159.03"},
                     {"NVIDIA-5861", "580.178.04"}}));
}

TEST(AdvisoryMatch, ABranchABulletinDoesNotListIsNotAffectedByIt) {
    // 5614 lists R535, R550 and R570; R590 came later
    auto r590 = hits(driver("590.44.01"));
    EXPECT_EQ(r590.count("NVIDIA-5614"), 0u);
    EXPECT_EQ(r590, (Fixes{{"NVIDIA-5747", "590.48.01"}}));
    // R550: 5614 and 5630 list it, nothing after
    EXPECT_EQ(hits(driver("550.54.15")),
              (Fixes{{"NVIDIA-5614", "550.144.03"}, {"NVIDIA-5630", "550.163.01"}}));
    EXPECT_EQ(hits(driver("550.163.01")), Fixes{});
    // a branch no bulletin names
    EXPECT_EQ(hits(driver("560.35.03")), Fixes{});
}

TEST(AdvisoryMatch, DataCenterProductsHaveTheirOwnFixOnR570) {
    // 5614 on R570: GeForce/RTX fixed in 570.86.16, Tesla in 570.86.15
    auto consumer = hits(driver("570.86.15"));
    EXPECT_EQ(consumer.at("NVIDIA-5614"), "570.86.16");
    auto tesla = hits(driver("570.86.15", true));
    EXPECT_EQ(tesla.count("NVIDIA-5614"), 0u);
    auto older = hits(driver("570.86.10", true));
    EXPECT_EQ(older.at("NVIDIA-5614"), "570.86.15"); // the fix a data-center host needs
    auto match_notes = match(known(), {driver("570.86.10", true)});
    auto it = std::find_if(match_notes.begin(), match_notes.end(), [](const Hit& h) {
        return h.advisory->id == "NVIDIA-5614";
    });
    ASSERT_NE(it, match_notes.end());
    ASSERT_EQ(it->notes.size(), 1u);
    EXPECT_NE(it->notes[0].find("data-center (Tesla)"), std::string::npos);
    EXPECT_EQ(it->fix_text(),
              "update the driver to 570.86.15 or newer on R570 (or a newer branch's fixed driver)");
    EXPECT_EQ(it->summary(),
              "NVIDIA-5614 (high, CVSS 7.8): driver 570.86.10 in this machine is affected");
}

TEST(AdvisoryMatch, AToolkitKnownByItsMinorOnlyIsAffectedWhenAllOfThatMinorIs) {
    auto tk = [](const std::string& v) { return subject(AdvisoryProduct::toolkit, v); };
    // 13.0 is before 13.1, whichever 13.0.x it is
    EXPECT_EQ(hits(tk("13.0")), (Fixes{{"NVIDIA-5755", "13.1"}}));
    EXPECT_EQ(hits(tk("13.0.2")), (Fixes{{"NVIDIA-5755", "13.1"}}));
    EXPECT_EQ(hits(tk("13.1")), Fixes{});
    EXPECT_EQ(hits(tk("13.1.0")), Fixes{});
    // 12.9.0 is before 12.9.1 (5661's CUDA 12 row) and 13.0; 12.9.1 before 13.0 only (the
    // nvdisasm/cuobjdump CVEs are fixed in 13.0 alone): the fix a host needs is 13.0 either way
    EXPECT_EQ(hits(tk("12.9.0")), (Fixes{{"NVIDIA-5661", "13.0"}, {"NVIDIA-5755", "13.1"}}));
    EXPECT_EQ(hits(tk("12.9.1")), (Fixes{{"NVIDIA-5661", "13.0"}, {"NVIDIA-5755", "13.1"}}));
    // 12.4.1: every toolkit bulletin; the highest fix of 5661's two ranges
    EXPECT_EQ(hits(tk("12.4.1")),
              (Fixes{{"NVIDIA-5594", "12.8"},
                     {"NVIDIA-5643", "12.9"},
                     {"NVIDIA-5661", "13.0"},
                     {"NVIDIA-5755", "13.1"}}));
    // "up to CUDA Toolkit 12.8, fixed in 12.8": 12.8 itself is fixed
    EXPECT_EQ(hits(tk("12.8")).count("NVIDIA-5594"), 0u);
    EXPECT_EQ(hits(tk("12.7")).count("NVIDIA-5594"), 1u);

    // a range alone: 12.9 (which 12.9.x unknown) is not affected by "prior to 12.9.1", since
    // 12.9.1 and later are not; 12.9.0 is
    manifest::Advisories one;
    one.as_of = "2026-12-07";
    manifest::Advisory a;
    a.id = "TEST-1";
    a.kind = "security";
    manifest::AffectedRange r;
    r.product = AdvisoryProduct::toolkit;
    r.fixed = V("12.9.1");
    a.affects.push_back(r);
    one.advisories.push_back(a);
    EXPECT_TRUE(match(one, {tk("12.9")}).empty());
    EXPECT_EQ(match(one, {tk("12.9.0")}).size(), 1u);
    EXPECT_EQ(match(one, {tk("12.8")}).size(), 1u); // all of 12.8 is before 12.9.1
}

TEST(AdvisoryMatch, ACublasRangeLimitedToSomeGpusAppliesWhereTheyAreOrUnknown) {
    // ALGO66: compute capability 10.x and 11.x; cuBLAS 13.0.x below the fix 13.1.1.2
    EXPECT_EQ(hits(cublas("13.0.2.2", {90})), Fixes{});                                 // H100 only
    EXPECT_EQ(hits(cublas("13.0.2.2", {100})), (Fixes{{"CUBLAS-ALGO66", "13.1.1.2"}})); // B200
    EXPECT_EQ(hits(cublas("13.0.2.2", {90, 110})), (Fixes{{"CUBLAS-ALGO66", "13.1.1.2"}}));
    EXPECT_EQ(hits(cublas("13.0.2.2", {})), (Fixes{{"CUBLAS-ALGO66", "13.1.1.2"}})); // unknown
    // at the patch's version: fixed
    EXPECT_EQ(hits(cublas("13.1.1.2", {100})), Fixes{});
    // the 12.8 line's inferred fix, with its note
    auto h = match(known(), {cublas("12.8.4.1", {100})});
    ASSERT_EQ(h.size(), 1u);
    EXPECT_EQ(h[0].fix->str(), "12.8.5.7");
    ASSERT_EQ(h[0].notes.size(), 1u);
    EXPECT_NE(h[0].notes[0].find("INFERRED"), std::string::npos);
    EXPECT_EQ(h[0].fix_text(),
              "take cuBLAS 12.8.5.7 or newer: cudaenv install 13.0.2 --patch cublas");
    EXPECT_EQ(h[0].summary(),
              "CUBLAS-ALGO66 (wrong results): cuBLAS 12.8.4.1 (CUDA 13.0.2) in this machine is "
              "affected");
    // before the bug came in (introduced 12.8.0)
    EXPECT_EQ(hits(cublas("12.6.4.1", {100})), Fixes{});
    // a range for every GPU: 13.4.0.1 (CUDA 13.2 Update 1) whatever the GPU
    EXPECT_EQ(hits(cublas("13.4.0.1", {90})), (Fixes{{"CUBLAS-13.4.1", "13.4.1.2"}}));
    EXPECT_EQ(hits(cublas("13.4.1.2", {90})), Fixes{});
    EXPECT_EQ(hits(cublas("13.4.1.3", {90})), Fixes{});
}

TEST(AdvisoryMatch, ContainerToolkitAndJetsonAndTheirFixes) {
    auto ctk = [](const std::string& v) { return subject(AdvisoryProduct::container_toolkit, v); };
    EXPECT_EQ(hits(ctk("1.17.7")), (Fixes{{"NVIDIA-5659", "1.17.8"}, {"NVIDIA-5850", "1.19.1"}}));
    EXPECT_EQ(hits(ctk("1.17.8")), (Fixes{{"NVIDIA-5850", "1.19.1"}}));
    EXPECT_EQ(hits(ctk("1.17.3")).count("NVIDIA-5616"), 1u);
    EXPECT_EQ(hits(ctk("1.17.4")).count("NVIDIA-5616"), 0u);
    EXPECT_EQ(hits(ctk("1.19.1")), Fixes{});
    auto m = match(known(), {ctk("1.17.7")});
    ASSERT_EQ(m.size(), 2u);
    EXPECT_TRUE(m[0].advisory->critical());
    EXPECT_EQ(m[0].fix_text(),
              "upgrade the NVIDIA Container Toolkit to 1.17.8 or newer (apt-get install "
              "nvidia-container-toolkit)");
    auto l4t = [](const std::string& v) { return subject(AdvisoryProduct::jetson_l4t, v); };
    // L4T 35.6: 5611 is fixed there, 5617 not (its fixed list says 35.6.1)
    auto r356 = hits(l4t("35.6"));
    EXPECT_EQ(r356.count("NVIDIA-5611"), 0u);
    EXPECT_EQ(r356.at("NVIDIA-5617"), "35.6.1");
    // 36.x ranges do not reach a 35.x L4T, nor 38.x ones
    auto r38 = hits(l4t("38.2.1"));
    EXPECT_EQ(r38, (Fixes{{"NVIDIA-5716", "38.2.2"}, {"NVIDIA-5797", "38.4"}}));
    EXPECT_EQ(hits(l4t("36.5")), Fixes{});
}

TEST(AdvisoryMatch, AnAcknowledgedAdvisoryIsReportedWithItsReasonAndNotCounted) {
    auto s = driver("535.104.05");
    std::vector<Acknowledgement> acks{{"nvidia-5614", "the R535 fleet is replaced in January"},
                                      {"NVIDIA-0001", "an advisory nobody knows"}};
    auto h = match(known(), {s}, acks);
    ASSERT_EQ(h.size(), 6u);
    EXPECT_EQ(counted(h), 5u);
    EXPECT_EQ(h[0].advisory->id, "NVIDIA-5614");
    EXPECT_FALSE(h[0].counts());
    EXPECT_EQ(h[0].acknowledged, "the R535 fleet is replaced in January");
    for (std::size_t i = 1; i < h.size(); ++i) {
        EXPECT_TRUE(h[i].counts()) << h[i].advisory->id;
    }
}

TEST(AdvisoryMatch, OneHitPerAdvisoryAndSubjectInIdOrder) {
    auto h = match(known(),
                   {driver("535.309.01"),
                    subject(AdvisoryProduct::toolkit, "12.8.1"),
                    cublas("13.0.2.2", {100}),
                    subject(AdvisoryProduct::container_toolkit, "1.17.8")});
    std::vector<std::string> ids;
    for (const auto& x : h) {
        ids.push_back(x.advisory->id + " " + x.subject.label());
    }
    EXPECT_EQ(ids,
              (std::vector<std::string>{"CUBLAS-ALGO66 cuBLAS 13.0.2.2 (CUDA 13.0.2)",
                                        "NVIDIA-5643 CUDA 12.8.1",
                                        "NVIDIA-5661 CUDA 12.8.1",
                                        "NVIDIA-5755 CUDA 12.8.1",
                                        "NVIDIA-5850 NVIDIA Container Toolkit 1.17.8"}));
}

TEST(AdvisoryMatch, BranchesTheLaterBulletinsStoppedListing) {
    // R550: listed by 5614 and 5630 (April 2025), by none after
    EXPECT_EQ(bulletins_not_listing(known(), 550),
              (std::vector<std::string>{
                  "NVIDIA-5670", "NVIDIA-5703", "NVIDIA-5747", "NVIDIA-5821", "NVIDIA-5861"}));
    // R570: listed up to 5747 (January 2026)
    EXPECT_EQ(bulletins_not_listing(known(), 570),
              (std::vector<std::string>{"NVIDIA-5821", "NVIDIA-5861"}));
    // R535 is in 5821 but not in 5861, which is known in part (the undated, newest)
    EXPECT_EQ(bulletins_not_listing(known(), 535), (std::vector<std::string>{"NVIDIA-5861"}));
    // R580 is listed by the newest; a branch never listed has no such note
    EXPECT_TRUE(bulletins_not_listing(known(), 580).empty());
    EXPECT_TRUE(bulletins_not_listing(known(), 560).empty());
}
