// cublas.json: the generator on the reference's advisories.json, the codec's checks, the rule of
// which patch applies to which release, resolve's --patch, and what a channel set's diff and pins
// say of a patch.
#include "core/channel/diff.hpp"
#include "core/manifest/codec.hpp"
#include "core/manifest/cublas_patches.hpp"
#include "core/manifest/generate.hpp"
#include "core/manifest/generate_cublas.hpp"
#include "core/resolve/resolve.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

using namespace cudaenv;
using namespace cudaenv::manifest;
using nlohmann::json;

namespace {

json reference_patches() {
    std::ifstream in(std::string(CUDAENV_TEST_REFERENCE) + "/advisories.json");
    return json::parse(in)["cublas_patches"];
}

const Catalog& catalog() {
    static const Catalog c = [] {
        auto r = load_catalog(CUDAENV_TEST_MANIFESTS);
        return r ? *r : Catalog{};
    }();
    return c;
}

std::vector<std::string> labels(const std::vector<const CublasPatch*>& v) {
    std::vector<std::string> out;
    for (const auto* p : v) {
        out.push_back(p->label);
    }
    return out;
}

json one_patch() {
    return json::parse(R"({"label": "13.4.1", "version": "13.4.1.2", "release_date": "2026-04-28",
        "cuda_major": 13, "replaces": {"cuda": "13.2", "basis": "stated", "source": "notes"},
        "index": "cublas/redist/redistrib_13.4.1.json", "fixes": "not known",
        "archives": {"linux-x86_64": {"path": "cublas/redist/libcublas/linux-x86_64/x.tar.xz",
        "sha256": ")" + std::string(64, 'a') +
                       R"(", "size": 5}}, "source": "page"})");
}

Result<std::vector<CublasPatch>> parse_one(const json& patch) {
    json doc{{"schema", "cudaenv.manifest/1"}, {"kind", "cublas-patches"}, {"patches", {patch}}};
    return parse_cublas_patches(doc, "cublas.json");
}

} // namespace

TEST(CublasPatches, TheGeneratorTakesEveryPatchOfTheReferenceAndSaysWhichAreInferred) {
    auto patches = cublas_patches_from_json(reference_patches(), "advisories.json");
    ASSERT_TRUE(patches) << patches.error().message;
    ASSERT_EQ(patches->size(), 14u);
    EXPECT_EQ(patches->front().label, "12.8.5");
    EXPECT_EQ(patches->back().version.str(), "13.8.2.12");
    std::size_t inferred = 0;
    for (const auto& p : *patches) {
        inferred += p.replaces_inferred ? 1 : 0;
        EXPECT_EQ(p.platforms.size(), 2u) << p.label; // linux-x86_64 and linux-sbsa, no Jetson
        EXPECT_EQ(p.platforms.count("linux-aarch64"), 0u);
        for (const auto& [platform, a] : p.platforms) {
            EXPECT_EQ(a.path,
                      "cublas/redist/libcublas/" + platform + "/libcublas-" + platform + "-" +
                          p.version.str() + "_cuda" + std::to_string(p.cuda_major) +
                          "-archive.tar.xz");
            EXPECT_TRUE(a.size && *a.size > 100'000'000u) << p.label;
        }
        EXPECT_EQ(p.index, "cublas/redist/redistrib_" + p.label + ".json");
    }
    EXPECT_EQ(inferred, 12u);
    const auto& p1341 = *std::find_if(
        patches->begin(), patches->end(), [](const auto& p) { return p.label == "13.4.1"; });
    EXPECT_FALSE(p1341.replaces_inferred);
    EXPECT_EQ(p1341.replaces.str(), "13.2");
    EXPECT_NE(p1341.fixes.find("NVFP4"), std::string::npos);
    EXPECT_NE(p1341.fixes_source.find("PRIMARY"), std::string::npos);
    EXPECT_EQ(p1341.platforms.at("linux-x86_64").sha256,
              "7c2a8c9bab9e100a0f39ba1525f24f22bf7d82f7a7d5c5871b75ab43e35ab161");
    // a fix the reference could not read is not known, never the text of another patch's
    const auto& p1285 = patches->front();
    EXPECT_TRUE(p1285.fixes.empty());
    EXPECT_EQ(cublas_patches_to_json(*patches)["patches"][0]["fixes"], "not known");
}

TEST(CublasPatches, TheGeneratorRefusesWhatItCannotSay) {
    auto bad = [](auto change) {
        auto ref = reference_patches();
        change(ref["patches"][0]);
        return cublas_patches_from_json(ref, "advisories.json");
    };
    auto basis = bad([](json& p) { p["applies_basis"] = "GUESSED"; });
    ASSERT_FALSE(basis);
    EXPECT_NE(basis.error().message.find("neither INFERRED"), std::string::npos);
    auto host = bad([](json& p) { p["index_url"] = "https://example.com/redistrib_12.8.5.json"; });
    ASSERT_FALSE(host);
    EXPECT_NE(host.error().message.find("index_url"), std::string::npos);
    auto two = bad([](json& p) { p["cuda_variant"] = json::array({"12", "13"}); });
    ASSERT_FALSE(two);
    EXPECT_NE(two.error().message.find("one cuda_variant"), std::string::npos);
    auto variant = bad([](json& p) { p["cuda_variant"] = json::array({"13"}); });
    ASSERT_FALSE(variant); // its archives are cuda12's
    auto line = bad([](json& p) { p["applies_to_cuda_line"] = "13.2"; });
    ASSERT_FALSE(line); // a CUDA 12 patch for a CUDA 13 line: the codec refuses it
}

TEST(CublasPatches, TheCodecRoundTripsAndChecksEveryField) {
    auto ok = parse_one(one_patch());
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(json::parse(cublas_patches_to_json(*ok)["patches"][0].dump()), one_patch());
    auto refused = [](auto change, const std::string& says) {
        auto p = one_patch();
        change(p);
        auto r = parse_one(p);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code, ErrorCode::integrity);
        EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
    };
    refused([](json& p) { p["replaces"]["basis"] = "maybe"; }, "replaces.basis");
    refused([](json& p) { p["version"] = "13.4.2.1"; }, "not the label's full version");
    refused([](json& p) { p["cuda_major"] = 12; }, "cuda_major");
    refused([](json& p) { p["replaces"]["cuda"] = "13"; }, "replaces.cuda");
    refused([](json& p) { p.erase("fixes"); }, "fixes");
    refused([](json& p) { p["fixes"] = "it fixes things"; }, "fixes");
    refused([](json& p) { p["archives"]["linux-x86_64"]["path"] = "../x.tar.xz"; }, "unsafe");
    refused([](json& p) { p["archives"]["linux-x86_64"].erase("size"); }, "size");
    refused([](json& p) { p["archives"]["linux-x86_64"]["sha256"] = "abc"; }, "sha256");
    refused(
        [](json& p) {
            p["archives"] = {{"windows-x86_64", p["archives"]["linux-x86_64"]}};
        },
        "unknown platform");
    json doc{{"schema", "cudaenv.manifest/1"},
             {"kind", "cublas-patches"},
             {"patches", {one_patch(), one_patch()}}};
    auto twice = parse_cublas_patches(doc, "cublas.json");
    ASSERT_FALSE(twice);
    EXPECT_NE(twice.error().message.find("listed twice"), std::string::npos);
}

// 13.2.1 ships libcublas 13.4.0.1, 13.2.2 ships 13.4.1.3, 12.9.2 ships 12.9.2.10 (newer than
// patch 12.9.2's 12.9.2.7), 13.1.2 ships 13.2.2.2 (patch 13.2.2 itself): only newer patches apply
TEST(CublasPatches, APatchAppliesToItsLineWhereItIsNewerThanTheReleasesOwn) {
    ASSERT_EQ(catalog().cublas_patches.size(), 14u) << "manifests/cublas.json";
    auto of = [](const char* v) {
        const auto* r = catalog().find_cuda(*Version::try_parse(v));
        return r ? labels(applicable_cublas_patches(catalog(), *r)) : std::vector<std::string>{"?"};
    };
    EXPECT_EQ(of("13.2.1"), (std::vector<std::string>{"13.4.3", "13.4.2", "13.4.1"}));
    EXPECT_EQ(of("13.2.2"), (std::vector<std::string>{"13.4.3", "13.4.2"}));
    EXPECT_EQ(of("12.9.2"), (std::vector<std::string>{"12.9.3"}));
    EXPECT_EQ(of("12.9.1"), (std::vector<std::string>{"12.9.3", "12.9.2"}));
    EXPECT_EQ(of("13.1.2"), (std::vector<std::string>{}));
    EXPECT_EQ(of("13.3.1"), (std::vector<std::string>{"13.6.3", "13.6.2", "13.6.1"}));
    EXPECT_EQ(of("12.4.1"), (std::vector<std::string>{}));
    ASSERT_NE(find_cublas_patch(catalog(), "13.4.1.2"), nullptr);
    EXPECT_EQ(find_cublas_patch(catalog(), "13.4.1.2"), find_cublas_patch(catalog(), "13.4.1"));
    EXPECT_EQ(find_cublas_patch(catalog(), "13.4"), nullptr);
}

TEST(CublasPatches, ResolveTakesThePatchOrRefusesItInOneLine) {
    auto run = [](const char* spec, const char* platform, const std::string& patch) {
        ResolveOptions o;
        o.platform = platform;
        o.patch = patch;
        auto s = parse_spec(spec, {});
        return resolve(catalog(), *s, o);
    };
    auto r = run("13.2.1", "linux-sbsa", "cublas");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_NE(r->cublas_patch, nullptr);
    EXPECT_EQ(r->cublas_patch->label, "13.4.3");
    auto a = std::find_if(r->archives.begin(), r->archives.end(), [](const auto& x) {
        return x.component == "libcublas";
    });
    EXPECT_EQ(a->version.str(), "13.4.3.11");
    EXPECT_EQ(a->artifact.sha256, r->cublas_patch->platforms.at("linux-sbsa").sha256);
    EXPECT_TRUE(std::any_of(r->notes.begin(), r->notes.end(), [](const auto& n) {
        return n.find("by inference") != std::string::npos;
    }));
    auto plain = run("13.2.1", "linux-sbsa", "");
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->cublas_patch, nullptr);
    EXPECT_EQ(plain->cublas_patches.size(), 3u);
    EXPECT_EQ(r->total_size - plain->total_size,
              *r->cublas_patch->platforms.at("linux-sbsa").size -
                  *catalog()
                       .find_cuda(*Version::try_parse("13.2.1"))
                       ->component("libcublas")
                       ->platforms.at("linux-sbsa")
                       .size);
    auto stated = run("13.2.1", "linux-x86_64", "cublas=13.4.1");
    ASSERT_TRUE(stated);
    EXPECT_TRUE(stated->notes.empty() ||
                std::none_of(stated->notes.begin(), stated->notes.end(), [](const auto& n) {
                    return n.find("by inference") != std::string::npos;
                }));
    auto other = run("13.3.1", "linux-x86_64", "cublas=13.4.1");
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().code, ErrorCode::incompatible);
    EXPECT_EQ(other.error().message,
              "cuBLAS patch 13.4.1 is for the CUDA 13.2 line, not CUDA 13.3.1");
    auto older = run("12.9.2", "linux-x86_64", "cublas=12.9.2");
    ASSERT_FALSE(older);
    EXPECT_EQ(older.error().code, ErrorCode::incompatible);
    EXPECT_NE(older.error().message.find("not newer than CUDA 12.9.2's own libcublas 12.9.2.10"),
              std::string::npos);
    auto jetson = run("12.9.1", "linux-aarch64", "cublas");
    ASSERT_FALSE(jetson);
    EXPECT_EQ(jetson.error().code, ErrorCode::incompatible);
    EXPECT_NE(jetson.error().message.find("has no linux-aarch64 archive"), std::string::npos);
    auto none = run("12.4", "linux-x86_64", "cublas");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, ErrorCode::incompatible);
    auto unknown = run("13.2.1", "linux-x86_64", "cublas=13.9.9");
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().code, ErrorCode::not_found);
    EXPECT_TRUE(is_patch_request("cublas=13.4.1"));
    EXPECT_FALSE(is_patch_request("cublas="));
    EXPECT_FALSE(is_patch_request("cudnn"));
}

TEST(CublasPatches, ASetsDiffAndPinsNameItsPatches) {
    Catalog before = catalog();
    Catalog after = catalog();
    before.cublas_patches.pop_back(); // 13.8.2
    auto changes = channel::diff_sets(before, {}, after, {});
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].subject, "cuBLAS patch 13.8.2");
    EXPECT_EQ(changes[0].detail,
              "libcublas 13.8.2.12, released 2026-10-26, for CUDA 13.4 (inferred)");
    auto pins = channel::pins_of(after);
    EXPECT_TRUE(std::any_of(pins.begin(), pins.end(), [](const channel::Pin& p) {
        return p.what == "cublas 13.4.1.2 libcublas linux-x86_64" &&
               p.sha256 == "7c2a8c9bab9e100a0f39ba1525f24f22bf7d82f7a7d5c5871b75ab43e35ab161";
    }));
}
