// advisories.json: the codec (round trip of the committed manifest, every refusal) and the
// generator (NVIDIA's "affected" phrases as the reference holds them, the advisories it makes of
// particular bulletins, a phrase it does not read stopping it).
#include "core/manifest/advisories.hpp"
#include "core/manifest/codec.hpp"
#include "core/manifest/generate_advisories.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

using namespace cudaenv;
using namespace cudaenv::manifest;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// A version the test spells out.
Version V(const std::string& s) {
    return Version::try_parse(s).value();
}

json read_json(const fs::path& p) {
    std::ifstream in(p);
    return json::parse(in);
}

json committed() {
    return read_json(fs::path(CUDAENV_TEST_MANIFESTS) / "advisories.json");
}

/// The committed file with its keys in the order they were written.
nlohmann::ordered_json committed_ordered() {
    std::ifstream in(fs::path(CUDAENV_TEST_MANIFESTS) / "advisories.json");
    return nlohmann::ordered_json::parse(in);
}

/// A manifest of one advisory `a` (a valid one unless a test changes it).
json one(const json& a) {
    return {{"schema", "cudaenv.manifest/1"},
            {"kind", "advisories"},
            {"as_of", "2026-12-07"},
            {"sources", json::array({"test"})},
            {"advisories", json::array({a})}};
}

json valid_advisory() {
    return json::parse(R"({"id": "NVIDIA-9999", "kind": "security", "title": "t",
        "url": "https://nvidia.custhelp.com/app/answers/detail/a_id/9999",
        "published": "2026-01-02", "severity": "high", "cvss": 7.8,
        "cves": [{"id": "CVE-2026-0001", "cvss": 7.8, "severity": "high", "summary": "s"}],
        "affects": [{"product": "driver", "branch": 570, "fixed": "570.86.16",
                     "fixed_datacenter": "570.86.15"}],
        "source": "test"})");
}

/// The codec's refusal of `valid_advisory()` changed by `change`, or a failure.
::testing::AssertionResult refused(const std::function<void(json&)>& change,
                                   const std::string& says) {
    json a = valid_advisory();
    change(a);
    auto r = parse_advisories(one(a), "advisories.json");
    if (r) {
        return ::testing::AssertionFailure() << "accepted: " << a.dump();
    }
    if (r.error().message.find(says) == std::string::npos) {
        return ::testing::AssertionFailure() << "refused, but said: " << r.error().message;
    }
    if (r.error().message.find("advisories.json") == std::string::npos) {
        return ::testing::AssertionFailure() << "does not name the file: " << r.error().message;
    }
    return ::testing::AssertionSuccess();
}

const Advisories& generated() {
    static const Advisories a = [] {
        GenerateReport report;
        auto r = generate_advisories(CUDAENV_TEST_REFERENCE, report);
        return r && *r ? **r : Advisories{};
    }();
    return a;
}

const Advisory& adv(const std::string& id) {
    static const Advisory none;
    const auto* a = generated().find(id);
    EXPECT_NE(a, nullptr) << id;
    return a ? *a : none;
}

std::string ver(const std::optional<Version>& v) {
    return v ? v->str() : "-";
}

} // namespace

// -- the codec ------------------------------------------------------------------------------

TEST(AdvisoriesCodec, TheCommittedManifestReadsAndWritesBackByteForByte) {
    auto doc = committed();
    auto parsed = parse_advisories(doc, "advisories.json");
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(parsed->advisories.size(), 23u);
    EXPECT_EQ(parsed->as_of, "2026-12-07");
    EXPECT_EQ(advisories_to_json(*parsed).dump(), committed_ordered().dump());
    // the file on disk is the writer's output as the generator writes it
    auto loaded = load_advisories(CUDAENV_TEST_MANIFESTS);
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(advisories_to_json(*loaded), advisories_to_json(*parsed));
    // ids are unique and found case-insensitively
    std::set<std::string> ids;
    for (const auto& a : parsed->advisories) {
        EXPECT_TRUE(ids.insert(a.id).second) << a.id;
    }
    EXPECT_EQ(parsed->find("nvidia-5614"), parsed->find("NVIDIA-5614"));
    EXPECT_EQ(parsed->find("NVIDIA-0000"), nullptr);
}

TEST(AdvisoriesCodec, ALoneAdvisoryRoundTripsWithEveryField) {
    json a = valid_advisory();
    a["updated"] = "2026-02-03";
    a["affects"].push_back(json::parse(R"({"product": "cublas", "introduced": "13.0.0",
        "fixed": "13.1.1.2", "compute_capabilities": [100, 110], "note": "n"})"));
    a["affects"].push_back(json::parse(
        R"({"product": "container-toolkit", "fixed": "1.17.8", "last_affected": "1.17.7"})"));
    a["other_products"] = json::array({"vGPU 17: 550.144.02"});
    a["partial"] = "known in part";
    auto r = parse_advisories(one(a), "advisories.json");
    ASSERT_TRUE(r) << r.error().message;
    const auto& x = r->advisories.at(0);
    EXPECT_EQ(x.severity, Severity::high);
    EXPECT_EQ(*x.cvss, 7.8);
    ASSERT_EQ(x.affects.size(), 3u);
    EXPECT_EQ(x.affects[0].fixed_datacenter->str(), "570.86.15");
    EXPECT_EQ(x.affects[1].compute_capabilities, (std::vector<unsigned>{100, 110}));
    EXPECT_EQ(x.affects[2].product, AdvisoryProduct::container_toolkit);
    EXPECT_EQ(json::parse(advisories_to_json(*r).dump())["advisories"][0], a);
}

TEST(AdvisoriesCodec, RefusesWhatItCannotMatchOrSay) {
    EXPECT_TRUE(refused([](json& a) { a["affects"][0]["product"] = "nvjpeg"; }, "'product'"));
    EXPECT_TRUE(refused(
        [](json& a) {
            a["affects"][0].erase("fixed");
            a["affects"][0].erase("fixed_datacenter");
        },
        "needs 'fixed' or 'last_affected'"));
    EXPECT_TRUE(refused([](json& a) { a["affects"][0]["introduced"] = "570.86.16"; },
                        "'introduced' must come before 'fixed'"));
    EXPECT_TRUE(refused([](json& a) { a["affects"][0]["introduced"] = "580.65.06"; },
                        "'introduced' must come before 'fixed'"));
    EXPECT_TRUE(refused([](json& a) { a["id"] = "NVIDIA 5614"; }, "is not an id"));
    EXPECT_TRUE(refused([](json& a) { a["id"] = "N5"; }, "is not an id"));
    EXPECT_TRUE(refused([](json& a) { a["id"] = "../../x"; }, "is not an id"));
    EXPECT_TRUE(refused([](json& a) { a["published"] = "16 January 2025"; }, "YYYY-MM-DD"));
    EXPECT_TRUE(refused([](json& a) { a["updated"] = "2025-1-16"; }, "YYYY-MM-DD"));
    EXPECT_TRUE(refused([](json& a) { a.erase("published"); }, "published"));
    EXPECT_TRUE(refused(
        [](json& a) {
            a["affects"][0]["product"] = "toolkit";
            a["affects"][0].erase("branch");
        },
        "'fixed_datacenter' is for drivers only"));
    EXPECT_TRUE(refused([](json& a) { a["affects"][0].erase("branch"); }, "needs its 'branch'"));
    EXPECT_TRUE(refused([](json& a) { a["severity"] = "severe"; }, "'severity'"));
    EXPECT_TRUE(refused([](json& a) { a["cvss"] = 11; }, "'cvss'"));
    EXPECT_TRUE(refused([](json& a) { a["kind"] = "bug"; }, "'kind'"));
    EXPECT_TRUE(refused([](json& a) { a["url"] = "http://example.com/"; }, "https"));
    EXPECT_TRUE(refused([](json& a) { a["cves"][0]["id"] = "GHSA-1234"; }, "not a CVE id"));
    EXPECT_TRUE(refused([](json& a) { a["affects"] = json::array(); }, "affects"));
    EXPECT_TRUE(refused(
        [](json& a) {
            a["affects"][0] = json::parse(
                R"({"product": "cublas", "fixed": "13.1.1.2", "compute_capabilities": [10.0]})");
        },
        "compute capability"));
    // an advisory known only in part may lack its date
    json partial = valid_advisory();
    partial.erase("published");
    partial["partial"] = "only two CVE files were readable";
    EXPECT_TRUE(parse_advisories(one(partial), "advisories.json"));
}

TEST(AdvisoriesCodec, RefusesADuplicateIdAndAnotherKindOfManifest) {
    json doc = one(valid_advisory());
    json twice = valid_advisory();
    twice["id"] = "nvidia-9999"; // the same id, another case
    doc["advisories"].push_back(twice);
    auto r = parse_advisories(doc, "advisories.json");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("appears twice"), std::string::npos) << r.error().message;
    json other = one(valid_advisory());
    other["kind"] = "cublas-patches";
    EXPECT_FALSE(parse_advisories(other, "advisories.json"));
    json date = one(valid_advisory());
    date["as_of"] = "today";
    EXPECT_FALSE(parse_advisories(date, "advisories.json"));
}

TEST(AdvisoriesCodec, AFolderWithoutTheFileHasNoneAndABrokenFileIsAnError) {
    test::TempDir t;
    auto none = load_advisories(t.path());
    ASSERT_TRUE(none) << none.error().message;
    EXPECT_TRUE(none->advisories.empty());
    t.write("advisories.json", "{\"schema\": ");
    auto broken = load_advisories(t.path());
    ASSERT_FALSE(broken);
    EXPECT_NE(broken.error().message.find("advisories.json"), std::string::npos);
}

TEST(AdvisoriesCodec, ARangeHoldsNumericallyWithItsBoundsAndTheDataCenterFix) {
    AffectedRange r;
    r.product = AdvisoryProduct::driver;
    r.branch = 570;
    r.fixed = V("570.86.16");
    r.fixed_datacenter = V("570.86.15");
    EXPECT_TRUE(r.contains(V("570.86.15")));
    EXPECT_FALSE(r.contains(V("570.86.15"), true));
    EXPECT_FALSE(r.contains(V("570.86.16")));
    EXPECT_TRUE(r.contains(V("570.86.10"), true));
    AffectedRange last;
    last.product = AdvisoryProduct::container_toolkit;
    last.last_affected = V("1.17.7");
    last.introduced = V("1.17.0");
    EXPECT_TRUE(last.contains(V("1.17.7")));
    EXPECT_TRUE(last.contains(V("1.17")));    // 1.17 is 1.17.0
    EXPECT_FALSE(last.contains(V("1.16.2"))); // before introduced
    EXPECT_FALSE(last.contains(V("1.17.8")));
    EXPECT_FALSE(last.fix_for(false));
}

// -- the generator --------------------------------------------------------------------------

// Every "affected" phrase of every toolkit, container toolkit and Jetson row of the reference,
// with the bound NVIDIA's words give: the grammar reads them all, each as it means.
TEST(GenerateAdvisories, ParseAffectedReadsEveryPhraseOfTheReference) {
    struct Want {
        const char* version;
        bool inclusive;
        const char* note;
    };

    const std::map<std::string, Want> want{
        {"All versions up to CUDA Toolkit 12.8", {"12.8", false, ""}},
        {"All versions up to CUDA Toolkit 12.9", {"12.9", false, ""}},
        {"All versions prior to CUDA Toolkit 13.0", {"13.0", false, ""}},
        {"All versions prior to CUDA Toolkit 12.9 Update 1", {"12.9.1", false, ""}},
        {"All versions prior to CUDA Toolkit 13.1", {"13.1", false, ""}},
        {"All versions prior to nvJPEG 25.03", {nullptr, false, ""}},
        {"All versions prior to nvJPEG 13.0.0", {nullptr, false, ""}},
        {"All versions up to and including 1.17.0", {"1.17.0", true, ""}},
        {"All versions up to and including 1.17.3", {"1.17.3", true, ""}},
        {"All versions up to and including 1.17.7 (CDI mode only for versions prior to 1.17.5)",
         {"1.17.7", true, "CDI mode only for versions prior to 1.17.5"}},
        {"All versions up to and including 1.19.0", {"1.19.0", true, ""}},
        {"All versions up to and including 24.9.0", {"24.9.0", true, ""}},
        {"All versions up to and including 24.9.1", {"24.9.1", true, ""}},
        {"All versions up to and including 25.3.1 (CDI mode only for versions prior to 25.3.1)",
         {"25.3.1", true, "CDI mode only for versions prior to 25.3.1"}},
        {"All versions up to and including 0.17.2 (only when device-list-strategy is "
         "cdi-annotations and/or cdi-cri)",
         {"0.17.2", true, "only when device-list-strategy is cdi-annotations and/or cdi-cri"}},
        {"All versions up to and including 0.12.1 (only when CDI is enabled)",
         {"0.12.1", true, "only when CDI is enabled"}},
        {"All versions up to and including 26.3.1", {"26.3.1", true, ""}},
        {"All versions prior to IGX 1.1", {nullptr, false, ""}},
        {"All versions prior to IGX 1.1.2", {nullptr, false, ""}},
        {"IGX 1.1.2 and earlier", {nullptr, true, ""}},
        {"All versions prior to 35.6", {"35.6", false, ""}},
        {"All versions prior to 36.4", {"36.4", false, ""}},
        {"All versions prior to 36.4.3", {"36.4.3", false, ""}},
        {"All versions prior to JP5.x: 35.6.2", {"35.6.2", false, ""}},
        {"All versions prior to JP6.x: 36.4.4", {"36.4.4", false, ""}},
        {"35.6.2 and earlier", {"35.6.2", true, ""}},
        {"36.4.4 and earlier", {"36.4.4", true, ""}},
        {"38.2.1 and earlier", {"38.2.1", true, ""}},
        {"All versions prior to 35.6.4", {"35.6.4", false, ""}},
        {"All versions prior to 36.5", {"36.5", false, ""}},
        {"38.2", {"38.2", true, ""}},
    };
    auto ref = read_json(fs::path(CUDAENV_TEST_REFERENCE) / "advisories.json");
    std::set<std::string> seen;
    for (const char* key :
         {"cuda_toolkit_bulletins", "container_toolkit_bulletins", "jetson_bulletins"}) {
        for (const auto& b : ref[key]) {
            for (const auto& row : b["affected_and_fixed"]) {
                std::string phrase = row["affected"];
                seen.insert(phrase);
                auto it = want.find(phrase);
                ASSERT_NE(it, want.end()) << "a phrase this test does not know: " << phrase;
                auto got = parse_affected(phrase);
                if (!it->second.version) {
                    // another product's version (IGX, nvJPEG): not read as one of ours
                    EXPECT_FALSE(got) << phrase << " -> " << got->version.str();
                    continue;
                }
                ASSERT_TRUE(got) << phrase;
                EXPECT_EQ(got->version.str(), it->second.version) << phrase;
                EXPECT_EQ(got->inclusive, it->second.inclusive) << phrase;
                EXPECT_EQ(got->note, it->second.note) << phrase;
            }
        }
    }
    EXPECT_EQ(seen.size(), want.size()); // the table holds no phrase the reference lacks
}

TEST(GenerateAdvisories, ParseAffectedKnowsNoOtherWords) {
    EXPECT_FALSE(parse_affected("Versions before 1.17.8"));
    EXPECT_FALSE(parse_affected("All versions"));
    EXPECT_FALSE(parse_affected("All versions prior to JP6.x 36.4.4")); // no colon
    EXPECT_FALSE(parse_affected("All versions prior to CUDA Toolkit 12.9 Update one"));
    EXPECT_FALSE(parse_affected(""));
}

TEST(GenerateAdvisories, AnUnknownPhraseStopsTheGenerationNamingIt) {
    test::TempDir t;
    auto ref = read_json(fs::path(CUDAENV_TEST_REFERENCE) / "advisories.json");
    for (auto& b : ref["container_toolkit_bulletins"]) {
        if (b["bulletin"] == "5659") {
            b["affected_and_fixed"][0]["affected"] = "Versions 1.17.x before 1.17.8";
        }
    }
    t.write("advisories.json", ref.dump());
    GenerateReport report;
    auto r = generate_advisories(t.path(), report);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::integrity);
    const auto& msg = r.error().message;
    EXPECT_NE(msg.find("NVIDIA-5659"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'Versions 1.17.x before 1.17.8'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("NVIDIA Container Toolkit"), std::string::npos) << msg;
    EXPECT_NE(msg.find("does not read"), std::string::npos) << msg;
    // another product's row in unknown words is kept as text, not read
    ref = read_json(fs::path(CUDAENV_TEST_REFERENCE) / "advisories.json");
    for (auto& b : ref["container_toolkit_bulletins"]) {
        if (b["bulletin"] == "5659") {
            b["affected_and_fixed"][1]["affected"] = "Versions 25.x before 25.3.2";
        }
    }
    t.write("advisories.json", ref.dump());
    auto other = generate_advisories(t.path(), report);
    ASSERT_TRUE(other) << other.error().message;
    const auto* a = (*other)->find("NVIDIA-5659");
    ASSERT_NE(a, nullptr);
    EXPECT_NE(std::find(a->other_products.begin(),
                        a->other_products.end(),
                        "NVIDIA GPU Operator: Versions 25.x before 25.3.2 (fixed: 1.17.8, 25.3.2, "
                        "0.17.3, 0.12.2)"),
              a->other_products.end());
}

TEST(GenerateAdvisories, NoReferenceFileNoAdvisories) {
    test::TempDir t;
    GenerateReport report;
    auto r = generate_advisories(t.path(), report);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_FALSE(*r);
}

TEST(GenerateAdvisories, TheGeneratedSetIsTheCommittedOne) {
    GenerateReport report;
    auto r = generate_advisories(CUDAENV_TEST_REFERENCE, report);
    ASSERT_TRUE(r && *r);
    EXPECT_EQ(report.advisories, 23u);
    EXPECT_EQ(advisories_to_json(**r).dump(), committed_ordered().dump());
}

TEST(GenerateAdvisories, Driver5614PerBranchWithTheDataCenterFix) {
    const auto& a = adv("NVIDIA-5614");
    EXPECT_EQ(a.kind, "security");
    EXPECT_EQ(a.published, "2025-01-16");
    EXPECT_EQ(a.severity, Severity::high);
    EXPECT_EQ(a.url, "https://nvidia.custhelp.com/app/answers/detail/a_id/5614");
    ASSERT_EQ(a.affects.size(), 3u);
    std::map<unsigned, const AffectedRange*> by_branch;
    for (const auto& r : a.affects) {
        EXPECT_EQ(r.product, AdvisoryProduct::driver);
        by_branch[*r.branch] = &r;
    }
    EXPECT_EQ(ver(by_branch.at(535)->fixed), "535.230.02");
    EXPECT_FALSE(by_branch.at(535)->fixed_datacenter); // the same for every product
    EXPECT_EQ(ver(by_branch.at(550)->fixed), "550.144.03");
    const auto& r570 = *by_branch.at(570);
    EXPECT_EQ(ver(r570.fixed), "570.86.16");
    EXPECT_EQ(ver(r570.fixed_datacenter), "570.86.15");
    EXPECT_NE(r570.note.find("data-center (Tesla) products in 570.86.15"), std::string::npos);
    EXPECT_FALSE(a.cves.empty());
    for (const auto& c : a.cves) {
        EXPECT_TRUE(c.id.starts_with("CVE-")) << c.id;
        EXPECT_LE(c.severity, a.severity);
        EXPECT_LE(c.cvss.value_or(0), a.cvss.value_or(0));
    }
}

TEST(GenerateAdvisories, Toolkit5661HasBothLinesFixes) {
    const auto& a = adv("NVIDIA-5661");
    ASSERT_EQ(a.affects.size(), 2u); // the repeated 13.0 row once
    EXPECT_EQ(a.affects[0].product, AdvisoryProduct::toolkit);
    EXPECT_EQ(ver(a.affects[0].fixed), "13.0");
    EXPECT_EQ(ver(a.affects[1].fixed), "12.9.1");
    for (const auto& r : a.affects) {
        EXPECT_FALSE(r.last_affected);
        EXPECT_FALSE(r.introduced);
        EXPECT_FALSE(r.branch);
    }
    EXPECT_EQ(a.severity, Severity::medium);
    // nvJPEG's rows are another product's, kept as text
    ASSERT_FALSE(a.other_products.empty());
    EXPECT_TRUE(a.other_products[0].starts_with("nvJPEG: All versions prior to nvJPEG 25.03"))
        << a.other_products[0];
}

TEST(GenerateAdvisories, ContainerToolkit5659IsCriticalUpToAndIncluding1177) {
    const auto& a = adv("NVIDIA-5659");
    EXPECT_EQ(a.severity, Severity::critical);
    EXPECT_TRUE(a.critical());
    EXPECT_EQ(*a.cvss, 9.0);
    ASSERT_EQ(a.affects.size(), 1u);
    const auto& r = a.affects[0];
    EXPECT_EQ(r.product, AdvisoryProduct::container_toolkit);
    EXPECT_EQ(ver(r.last_affected), "1.17.7");
    EXPECT_EQ(ver(r.fixed), "1.17.8"); // the nearest on the same line of "1.17.8, 25.3.2, ..."
    EXPECT_EQ(r.note, "CDI mode only for versions prior to 1.17.5");
    EXPECT_EQ(a.other_products.size(), 3u); // GPU Operator, device plugin, MIG manager
}

TEST(GenerateAdvisories, Jetson5617TakesTheFixedListsLaterVersionAndSaysSo) {
    const auto& a = adv("NVIDIA-5617");
    ASSERT_EQ(a.affects.size(), 2u);
    const auto& r35 = a.affects[0];
    EXPECT_EQ(r35.product, AdvisoryProduct::jetson_l4t);
    EXPECT_EQ(*r35.branch, 35u);
    EXPECT_EQ(ver(r35.fixed), "35.6.1");
    EXPECT_EQ(r35.note, "the row says prior to 35.6, the fixed list 35.6.1: the later is taken");
    const auto& r36 = a.affects[1];
    EXPECT_EQ(*r36.branch, 36u);
    EXPECT_EQ(ver(r36.fixed), "36.4.3");
    EXPECT_TRUE(r36.note.empty());
    // IGX is another product
    ASSERT_EQ(a.other_products.size(), 1u);
    EXPECT_TRUE(a.other_products[0].starts_with("IGX Orin")) << a.other_products[0];
}

TEST(GenerateAdvisories, Jetson5797ABareVersionIsInclusiveWithTheLinesFix) {
    const auto& a = adv("NVIDIA-5797");
    const AffectedRange* r38 = nullptr;
    for (const auto& r : a.affects) {
        if (r.branch == 38u) {
            r38 = &r;
        }
    }
    ASSERT_NE(r38, nullptr);
    EXPECT_EQ(ver(r38->last_affected), "38.2");
    EXPECT_EQ(ver(r38->fixed), "38.4");
}

TEST(GenerateAdvisories, Driver5861IsKnownInPartWithoutADate) {
    const auto& a = adv("NVIDIA-5861");
    EXPECT_TRUE(a.published.empty());
    EXPECT_TRUE(a.partial.starts_with("PARTIAL")) << a.partial;
    EXPECT_EQ(a.severity, Severity::high);
    EXPECT_FALSE(a.cvss);
    ASSERT_EQ(a.affects.size(), 3u);
    EXPECT_EQ(*a.affects[0].branch, 580u);
    EXPECT_EQ(ver(a.affects[0].fixed), "580.178.04");
    EXPECT_EQ(*a.affects[1].branch, 595u);
    EXPECT_EQ(ver(a.affects[1].fixed), "595.91.07");
    EXPECT_EQ(*a.affects[2].branch, 610u);
    EXPECT_EQ(ver(a.affects[2].fixed), "610.57.04");
    EXPECT_NE(a.affects[0].note.find("from CVE-2026-47501 alone"), std::string::npos);
    // the Windows-only CVE is named, with no driver row of its own
    ASSERT_EQ(a.cves.size(), 2u);
    EXPECT_EQ(a.cves[1].id, "CVE-2026-47505");
}

TEST(GenerateAdvisories, CudaenvsCurationIsTakenAsWritten) {
    auto cur = read_json(fs::path(CUDAENV_TEST_REFERENCE) / "cudaenv-advisories.json");
    ASSERT_EQ(cur["advisories"].size(), 3u);
    for (const auto& c : cur["advisories"]) {
        const auto& a = adv(c["id"]);
        EXPECT_EQ(a.kind, "correctness");
        EXPECT_EQ(a.severity, Severity::none);
        auto out = json::parse(advisories_to_json(Advisories{"x", {}, {a}}).dump());
        EXPECT_EQ(out["advisories"][0], c) << c["id"];
    }
    const auto& algo = adv("CUBLAS-ALGO66");
    ASSERT_EQ(algo.affects.size(), 4u);
    EXPECT_EQ(algo.affects[2].compute_capabilities, (std::vector<unsigned>{100, 101, 103, 110}));
    EXPECT_EQ(ver(algo.affects[2].introduced), "13.0.0");
    EXPECT_EQ(ver(algo.affects[2].fixed), "13.1.1.2");
    // both sources are named
    ASSERT_EQ(generated().sources.size(), 2u);
    EXPECT_NE(generated().sources[1].find("cudaenv's curation"), std::string::npos);
}

TEST(GenerateAdvisories, ABrokenCurationStopsTheGeneration) {
    test::TempDir t;
    fs::copy_file(fs::path(CUDAENV_TEST_REFERENCE) / "advisories.json",
                  t.path() / "advisories.json");
    auto cur = read_json(fs::path(CUDAENV_TEST_REFERENCE) / "cudaenv-advisories.json");
    cur["advisories"][0]["affects"][0].erase("fixed");
    t.write("cudaenv-advisories.json", cur.dump());
    GenerateReport report;
    auto r = generate_advisories(t.path(), report);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("cudaenv-advisories.json"), std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find("CUBLAS-13.4.1"), std::string::npos) << r.error().message;
}
