// The refresh converters on NVIDIA's real bulletins (tests/refresh, NVIDIA/product-security @
// dbb4ada0) against what data/reference/advisories.json records for them, the cuBLAS index
// converter against the reference's cublas_patches, and the reference's own text round-tripping.
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/refresh/cublas_index.hpp"
#include "core/refresh/psirt.hpp"
#include "core/refresh/refresh.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace cudaenv::refresh {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

const fs::path k_inputs = fs::path(CUDAENV_TEST_FIELD).parent_path() / "refresh";

std::string read(const fs::path& p) {
    auto t = read_text_file(p);
    EXPECT_TRUE(t) << p;
    return t ? *t : std::string();
}

ojson reference() {
    return ojson::parse(read(fs::path(CUDAENV_TEST_REFERENCE) / "advisories.json"));
}

ojson recorded(const ojson& ref, const std::string& list, const std::string& id) {
    for (const auto& b : ref[list]) {
        if (b["bulletin"] == id) {
            return b;
        }
    }
    ADD_FAILURE() << "no bulletin " << id << " in " << list;
    return {};
}

Bulletin convert(const std::string& rel) {
    auto b = bulletin_from_csaf(read(k_inputs / "psirt" / rel), rel, "test source");
    EXPECT_TRUE(b) << (b ? "" : b.error().message);
    return b ? *b : Bulletin{};
}

/// Every field the reference records, but its source (ours names the file and the converter) and
/// the raw vGPU rows (checked apart).
void expect_same(const ojson& got, const ojson& want) {
    for (const auto& [key, value] : want.items()) {
        if (key == "source" || key == "vgpu_and_other_platforms_raw") {
            continue;
        }
        ASSERT_TRUE(got.contains(key)) << key;
        EXPECT_EQ(got[key], value) << key;
    }
    for (const auto& [key, value] : got.items()) {
        EXPECT_TRUE(want.contains(key)) << "not in the reference: " << key;
    }
}

TEST(Psirt, ADriverBulletinReadsAsTheReferenceRecordsIt) {
    auto b = convert("2025/5614/5614.json");
    EXPECT_EQ(b.list, "driver_bulletins");
    EXPECT_EQ(b.id, "5614");
    auto want = recorded(reference(), "driver_bulletins", "5614");
    expect_same(b.entry, want);
    EXPECT_EQ(b.entry["linux_first_fixed"]["R570"]["by_product"]["Tesla"], "570.86.15");
    EXPECT_TRUE(b.entry["linux_first_fixed"]["R570"]["first_fixed"].is_null());
    EXPECT_EQ(b.entry["source"], "test source");
    // every vGPU row the reference kept is there; NVIDIA lists Citrix and Ubuntu hypervisors too,
    // which the reference's reading left out
    for (const auto& [platform, parts] : want["vgpu_and_other_platforms_raw"].items()) {
        for (const auto& [part, rows] : parts.items()) {
            EXPECT_EQ(b.entry["vgpu_and_other_platforms_raw"][platform][part], rows) << platform;
        }
    }
    EXPECT_TRUE(
        b.entry["vgpu_and_other_platforms_raw"].contains("Citrix Hypervisor(R550 vGPU 17)"));
}

TEST(Psirt, ContainerToolkitJetsonAndToolkitBulletinsReadAsTheReferenceRecordsThem) {
    auto ref = reference();
    for (const auto& [rel, list, id] :
         {std::tuple{"2025/5599/5599.json", "container_toolkit_bulletins", "5599"},
          std::tuple{"2025/5611/5611.json", "jetson_bulletins", "5611"},
          std::tuple{"2025/5661/5661.json", "cuda_toolkit_bulletins", "5661"}}) {
        SCOPED_TRACE(rel);
        auto b = convert(rel);
        EXPECT_EQ(b.list, list);
        expect_same(b.entry, recorded(ref, list, id));
    }
}

TEST(Psirt, ABulletinAboutAnotherProductIsNotCudaenvs) {
    auto text = read(k_inputs / "psirt/2025/5599/5599.json");
    auto doc = nlohmann::json::parse(text);
    doc["document"]["title"] = "Security Bulletin: NVIDIA NeMo Framework - January 2025";
    auto b = bulletin_from_csaf(doc.dump(), "x.json", "s");
    ASSERT_TRUE(b);
    EXPECT_TRUE(b->list.empty());
    EXPECT_TRUE(b->entry.is_null());
}

TEST(Psirt, AMalformedBulletinIsRefusedNamingTheFile) {
    auto text = read(k_inputs / "psirt/2025/5599/5599.json");
    auto doc = nlohmann::json::parse(text);
    auto refused = [](const nlohmann::json& d) {
        auto b = bulletin_from_csaf(d.dump(), "2025/5599/5599.json", "s");
        EXPECT_FALSE(b);
        if (!b) {
            EXPECT_EQ(b.error().code, ErrorCode::integrity);
            EXPECT_NE(b.error().message.find("2025/5599/5599.json"), std::string::npos)
                << b.error().message;
        }
    };
    EXPECT_FALSE(bulletin_from_csaf("{not json", "a.json", "s"));
    auto no_vulns = doc;
    no_vulns.erase("vulnerabilities");
    refused(no_vulns);
    auto no_score = doc;
    no_score["vulnerabilities"][0].erase("scores");
    refused(no_score);
    auto unknown_product = doc;
    unknown_product["vulnerabilities"][0]["product_status"]["known_affected"][0] = "nowhere";
    refused(unknown_product);
    auto no_id = doc;
    no_id["document"]["tracking"]["id"] = "../5599";
    refused(no_id);
}

TEST(CublasIndex, APatchIndexBecomesTheReferencesEntry) {
    auto bundled = bundled_cublas(CUDAENV_TEST_REFERENCE);
    ASSERT_TRUE(bundled);
    EXPECT_EQ(bundled->at("13.4.2"), "13.8.0.4");
    auto text = read(k_inputs / "nvidia/cublas/redist/redistrib_13.8.2.json");
    auto e = cublas_patch_from_index(text, "13.8.2", *bundled, "src");
    ASSERT_TRUE(e) << e.error().message;
    ojson want;
    const ojson ref = reference();
    for (const auto& p : ref["cublas_patches"]["patches"]) {
        if (p["release_label"] == "13.8.2") {
            want = p;
        }
    }
    for (const char* key : {"release_label",
                            "version",
                            "release_date",
                            "cuda_variant",
                            "index_url",
                            "applies_to_cuda_line",
                            "applies_basis",
                            "archives"}) {
        EXPECT_EQ((*e)[key], want[key]) << key;
    }
    EXPECT_TRUE((*e)["fixes"]["source"].is_null()); // not known: said so, not guessed
}

TEST(CublasIndex, APatchWhoseToolkitNoIndexBundlesIsNotKnown) {
    auto text = read(k_inputs / "nvidia/cublas/redist/redistrib_13.8.2.json");
    BundledCublas bundled{{"13.3.1", "13.6.0.2"}};
    auto e = cublas_patch_from_index(text, "13.8.2", bundled, "src");
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().code, ErrorCode::not_found);
    EXPECT_NE(e.error().message.find("not known"), std::string::npos) << e.error().message;
    auto wrong =
        cublas_patch_from_index(text, "13.8.3", *bundled_cublas(CUDAENV_TEST_REFERENCE), "s");
    ASSERT_FALSE(wrong); // the file name and its release_label disagree
    EXPECT_EQ(wrong.error().code, ErrorCode::integrity);
}

TEST(Refresh, TheReferencesAdvisoriesTextReadsBackByteForByte) {
    auto text = read(fs::path(CUDAENV_TEST_REFERENCE) / "advisories.json");
    EXPECT_EQ(advisories_text(ojson::parse(text)), text);
}

TEST(Refresh, AnIndexThatChangedForAKnownVersionIsARepin) {
    test::TempDir tmp;
    fs::path nvidia = tmp.path() / "nvidia";
    ASSERT_TRUE(make_dirs(nvidia / "cuda/redist"));
    auto text = read(fs::path(CUDAENV_TEST_REFERENCE) / "cuda-redistrib_13.4.2.json");
    ASSERT_TRUE(write_file_atomic(nvidia / "cuda/redist/redistrib_13.4.2.json", text));
    // the same bytes: nothing new
    auto same = plan_reference(CUDAENV_TEST_REFERENCE, {nvidia, {}, {}});
    ASSERT_TRUE(same) << same.error().message;
    EXPECT_TRUE(same->added.empty());
    // one byte more: refused, naming both hashes
    ASSERT_TRUE(write_file_atomic(nvidia / "cuda/redist/redistrib_13.4.2.json", text + " "));
    auto changed = plan_reference(CUDAENV_TEST_REFERENCE, {nvidia, {}, {}});
    ASSERT_FALSE(changed);
    EXPECT_EQ(changed.error().code, ErrorCode::integrity);
    EXPECT_NE(changed.error().message.find("CUDA 13.4.2"), std::string::npos);
    EXPECT_NE(changed.error().message.find("sha256"), std::string::npos);
}

} // namespace
} // namespace cudaenv::refresh
