// Project pins and requests (activate/project): the .cuda-version `use` writes and the record in
// <root>/pins/ that gc reads, what `install` with no SPEC asks for, the framework a project's
// requirement files pin, and the versions something still needs.
#include "core/activate/project.hpp"
#include "core/activate/selection.hpp"
#include "core/store/records.hpp"
#include "core/store/state.hpp"
#include "support/catalogs.hpp"
#include "support/platform.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

using namespace cudaenv;
using test::ver;

namespace fs = std::filesystem;

namespace {

manifest::Catalog catalog() {
    manifest::Catalog c;
    c.frameworks = {test::tensorflow_2_13(), test::framework("pytorch", {"torch"}, {})};
    return c;
}

void add_version(const fs::path& root_dir, const std::string& name, const std::string& cuda) {
    auto dir = root_dir / "versions" / name;
    fs::create_directories(dir);
    store::VersionRecord r;
    r.name = name;
    r.cuda = cuda;
    r.profile = "runtime";
    r.platform = test::native_platform();
    ASSERT_TRUE(store::write_version_record(dir, r));
}

class Project : public ::testing::Test {
  protected:
    void SetUp() override {
        fs::create_directories(root_dir());
        fs::create_directories(proj());
    }

    fs::path root_dir() const { return tmp.path() / "root"; }

    fs::path proj() const { return tmp.path() / "proj"; }

    store::Root root() const { return store::Root{root_dir()}; }

    test::TempDir tmp;
    manifest::Catalog cat = catalog();
};

TEST_F(Project, WritingAPinWritesTheFileAndRecordsIt) {
    auto w = activate::write_project_pin(root(), proj(), "12.4");
    ASSERT_TRUE(w) << w.error().full_message();
    EXPECT_TRUE(w->changed);
    EXPECT_EQ(w->file, proj() / ".cuda-version");
    EXPECT_EQ(test::read_all(proj() / ".cuda-version"), "12.4\n");
    auto pins = activate::recorded_pins(root());
    ASSERT_EQ(pins.size(), 1u);
    EXPECT_EQ(pins[0].dir, proj());
    EXPECT_EQ(pins[0].written, "12.4");
    EXPECT_EQ(pins[0].record.parent_path(), root_dir() / "pins");

    auto same = activate::write_project_pin(root(), proj(), "12.4");
    ASSERT_TRUE(same);
    EXPECT_FALSE(same->changed);
    auto other = activate::write_project_pin(root(), proj(), "tf-2.13");
    ASSERT_TRUE(other);
    EXPECT_TRUE(other->changed);
    ASSERT_EQ(activate::recorded_pins(root()).size(), 1u); // one record per project
    EXPECT_EQ(activate::recorded_pins(root())[0].written, "tf-2.13");
}

TEST_F(Project, RemovingAPinRemovesFileAndRecord) {
    ASSERT_TRUE(activate::write_project_pin(root(), proj(), "12.4"));
    auto removed = activate::remove_project_pin(root(), proj());
    ASSERT_TRUE(removed) << removed.error().full_message();
    EXPECT_TRUE(*removed);
    EXPECT_FALSE(fs::exists(proj() / ".cuda-version"));
    EXPECT_TRUE(fs::is_empty(root_dir() / "pins"));
    auto again = activate::remove_project_pin(root(), proj());
    ASSERT_TRUE(again);
    EXPECT_FALSE(*again);
}

TEST_F(Project, ARecordWhoseFileIsGoneOrDamagedIsStaleButANewerOneIsNot) {
    ASSERT_TRUE(activate::write_project_pin(root(), proj(), "12.4"));
    fs::remove(proj() / ".cuda-version"); // deleted by hand
    tmp.write("root/pins/damaged.json", "{ not json");
    tmp.write("root/pins/newer.json", R"({"schema": "cudaenv.pin/2", "dirs": ["/x"]})");
    tmp.write("root/pins/notes.txt", "not a record");
    std::vector<fs::path> stale;
    auto pins = activate::recorded_pins(root(), &stale);
    EXPECT_TRUE(pins.empty());
    std::vector<std::string> names;
    for (const auto& p : stale) {
        EXPECT_EQ(p.parent_path(), root_dir() / "pins");
        names.push_back(p.filename().string());
    }
    // the project's record (<24 hex digits>.json) and the damaged one, not the newer one
    ASSERT_EQ(names.size(), 2u);
    auto damaged = std::find(names.begin(), names.end(), "damaged.json");
    ASSERT_NE(damaged, names.end());
    names.erase(damaged);
    EXPECT_EQ(names[0].size(), 24u + 5u) << names[0];
    EXPECT_NE(names[0], "newer.json");
}

TEST_F(Project, TheFirstFormatOfARecordIsStillRead) {
    tmp.write("proj/.cuda-version", "11.8\n");
    tmp.write("root/pins/old.json", "{\"schema\": 1, \"dir\": \"" + proj().string() + "\"}");
    auto pins = activate::recorded_pins(root());
    ASSERT_EQ(pins.size(), 1u);
    EXPECT_EQ(pins[0].written, "11.8");
}

TEST_F(Project, TheRequestIsTheNearestVersionFile) {
    tmp.write("proj/.cuda-version", "# for the lab\n12.4+cudnn-9.1\n");
    fs::create_directories(proj() / "sub");
    auto r = activate::project_request(cat, proj() / "sub", {});
    ASSERT_TRUE(r) << r.error().full_message();
    ASSERT_TRUE(*r);
    EXPECT_EQ((*r)->spec, "12.4+cudnn-9.1");
    EXPECT_EQ((*r)->source, (proj() / ".cuda-version").string());
}

TEST_F(Project, AMalformedVersionFileIsTheRequestsError) {
    tmp.write("proj/.cuda-version", "\x1b[2J\n");
    tmp.write("proj/requirements.txt", "tensorflow==2.13.1\n");
    auto r = activate::project_request(cat, proj(), {});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ErrorCode::usage);
}

TEST_F(Project, WithoutAVersionFileTheRequirementsPinTheFramework) {
    tmp.write("proj/requirements.txt", "numpy==1.26\ntensorflow==2.13.1\n");
    auto r = activate::project_request(cat, proj(), {});
    ASSERT_TRUE(r) << r.error().full_message();
    ASSERT_TRUE(*r);
    EXPECT_EQ((*r)->spec, "tf-2.13"); // the framework's first alias, the series
    EXPECT_EQ((*r)->source, (proj() / "requirements.txt").string() + ":2");
    fs::remove(proj() / "requirements.txt");
    auto none = activate::project_request(cat, proj(), {});
    ASSERT_TRUE(none) << none.error().full_message();
    EXPECT_FALSE(*none);
}

TEST_F(Project, FrameworkPinPrefersTheVersionFileThenTheFirstPinInAFile) {
    tmp.write("proj/requirements.txt", "torch==2.5.1\ntensorflow==2.13.1\n");
    auto p = activate::framework_pin(cat, std::string("tf-2.13"), proj(), {});
    ASSERT_TRUE(p);
    EXPECT_EQ(p->framework, "tensorflow");
    EXPECT_EQ(p->source, ".cuda-version");
    // a .cuda-version naming no framework: the requirements decide, the earliest line first
    auto q = activate::framework_pin(cat, std::string("12.4"), proj(), {});
    ASSERT_TRUE(q);
    EXPECT_EQ(q->framework, "pytorch");
    EXPECT_EQ(q->version.str(), "2.5.1");
    EXPECT_EQ(q->source, (proj() / "requirements.txt").string() + ":1");
    // a framework the catalog does not know is no pin
    tmp.write("proj/requirements.txt", "jax==0.4.30\n");
    EXPECT_FALSE(activate::framework_pin(cat, std::nullopt, proj(), {}));
    // only requirement files are read, in name order
    tmp.write("proj/requirements.txt", "");
    tmp.write("proj/notes.txt", "tensorflow==2.13.1\n");
    EXPECT_FALSE(activate::framework_pin(cat, std::nullopt, proj(), {}));
    tmp.write("proj/pyproject.toml", "dependencies = [\"tensorflow==2.13.1\"]\n");
    auto t = activate::framework_pin(cat, std::nullopt, proj(), {});
    ASSERT_TRUE(t);
    EXPECT_EQ(t->source, (proj() / "pyproject.toml").string() + ":1");
}

TEST_F(Project, NeededVersionsSayWhy) {
    add_version(root_dir(), "11.8.0", "11.8.0");
    add_version(root_dir(), "12.1.1", "12.1.1");
    add_version(root_dir(), "12.4.1", "12.4.1");
    add_version(root_dir(), "12.6.0", "12.6.0");
    add_version(root_dir(), "13.0.0", "13.0.0");
    store::State s;
    s.global = "12.4.1";
    s.pending = "12.6.0";
    s.previous = store::Snapshot{};
    s.previous->global = "12.1.1";
    ASSERT_TRUE(store::save_state(root(), s));
    ASSERT_TRUE(activate::write_project_pin(root(), proj(), "11.8"));
    fs::create_directories(tmp.path() / "elsewhere");
    auto needed = activate::needed_versions(
        root(), {}, {{"CUDAENV_VERSION", "13"}}, tmp.path() / "elsewhere");
    ASSERT_TRUE(needed) << needed.error().full_message();
    std::map<std::string, std::string> want{
        {"11.8.0", "pinned by " + (proj() / ".cuda-version").string()},
        {"12.1.1", "what `cudaenv rollback` returns to"},
        {"12.4.1", "the global version"},
        {"12.6.0", "a `global` switch that did not finish"},
        {"13.0.0", "selected here (CUDAENV_VERSION)"},
    };
    EXPECT_EQ(*needed, want);
}

TEST_F(Project, NeededVersionsRefuseADamagedState) {
    tmp.write("root/state.json", "{ not json");
    auto needed = activate::needed_versions(root(), {}, {}, proj());
    ASSERT_FALSE(needed);
    EXPECT_EQ(needed.error().code, ErrorCode::integrity);
}

} // namespace
