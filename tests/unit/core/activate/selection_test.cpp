// Which version a process uses (activate/selection): the precedence CUDAENV_VERSION > nearest
// .cuda-version > global (state.json) > system, what each origin says, malformed version files,
// and how a SPEC is matched to what is installed (this root and its upstreams).
#include "core/activate/selection.hpp"
#include "core/spec.hpp"
#include "core/store/records.hpp"
#include "core/store/state.hpp"
#include "support/catalogs.hpp"
#include "support/platform.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

using namespace cudaenv;
using activate::Selection;
using test::ver;

namespace fs = std::filesystem;

namespace {

/// The version matched, or the error as text: a failed match fails the comparison, not the run.
std::string picked(const Result<std::string>& r) {
    return r ? *r : "error: " + r.error().full_message();
}

/// Installs (as far as selection can tell) a version `name` under `root_dir`: its folder and its
/// record, nothing else.
void add_version(const fs::path& root_dir,
                 const std::string& name,
                 const std::string& cuda,
                 const std::string& cudnn = "") {
    auto dir = root_dir / "versions" / name;
    fs::create_directories(dir);
    store::VersionRecord r;
    r.name = name;
    r.cuda = cuda;
    r.cudnn = cudnn;
    r.profile = "runtime";
    r.platform = test::native_platform();
    ASSERT_TRUE(store::write_version_record(dir, r));
}

void set_global(const fs::path& root_dir, const std::string& version) {
    store::State s;
    s.global = version;
    ASSERT_TRUE(store::save_state(store::Root{root_dir}, s));
}

std::vector<manifest::Framework> frameworks() {
    auto r25 = test::framework_row("2.5", "2.5.1", "12.1", "9.1");
    manifest::FrameworkVariant cu121;
    cu121.tag = "cu121";
    cu121.cuda = ver("12.1");
    cu121.cudnn = ver("9.1.0.70");
    manifest::FrameworkVariant cu118;
    cu118.tag = "cu118";
    cu118.cuda = ver("11.8");
    cu118.cudnn = ver("9.1.0.70");
    r25.variants = {cu121, cu118};
    r25.default_variant = "cu121";
    return {test::tensorflow_2_13(), test::framework("torch", {}, {r25})};
}

/// A root with a few versions, a project tree and no global choice.
class Selection_ : public ::testing::Test {
  protected:
    void SetUp() override {
        fs::create_directories(root_dir());
        add_version(root_dir(), "11.8.0", "11.8.0");
        add_version(root_dir(), "11.8.0+cudnn8.6.0.163", "11.8.0", "8.6.0.163");
        add_version(root_dir(), "11.8.0+cudnn9.1.0.70", "11.8.0", "9.1.0.70");
        add_version(root_dir(), "12.1.1+cudnn9.1.0.70", "12.1.1", "9.1.0.70");
        add_version(root_dir(), "12.4.1", "12.4.1");
        add_version(root_dir(), "12.10.0", "12.10.0");
        fs::create_directories(project() / "src" / "deep");
    }

    fs::path root_dir() const { return tmp.path() / "root"; }

    fs::path project() const { return tmp.path() / "project"; }

    store::Root root() const { return store::Root{root_dir()}; }

    Result<Selection> select(const std::map<std::string, std::string>& env,
                             const fs::path& cwd) const {
        return activate::select(root(), fws, env, cwd);
    }

    Result<std::string> match(const std::string& written) const {
        return activate::match_installed(root(), fws, written);
    }

    test::TempDir tmp;
    std::vector<manifest::Framework> fws = frameworks();
};

// ---- precedence ----

TEST_F(Selection_, NothingSelectedIsTheSystem) {
    auto s = select({}, project());
    ASSERT_TRUE(s) << s.error().full_message();
    EXPECT_EQ(s->origin, Selection::Origin::system);
    EXPECT_FALSE(s->version);
    EXPECT_EQ(s->origin_text(), "system");
}

TEST_F(Selection_, GlobalWhenNoFileAndNoVariable) {
    set_global(root_dir(), "12.4.1");
    auto s = select({}, project());
    ASSERT_TRUE(s) << s.error().full_message();
    EXPECT_EQ(s->origin, Selection::Origin::global);
    EXPECT_EQ(s->written, "12.4.1");
    EXPECT_EQ(s->version, "12.4.1");
    EXPECT_EQ(s->source, root_dir() / "state.json");
    EXPECT_EQ(s->origin_text(), (root_dir() / "state.json").string() + " (global)");
}

TEST_F(Selection_, AFileBeatsTheGlobalChoice) {
    set_global(root_dir(), "12.4.1");
    tmp.write("project/.cuda-version", "11.8\n");
    auto s = select({}, project() / "src" / "deep");
    ASSERT_TRUE(s) << s.error().full_message();
    EXPECT_EQ(s->origin, Selection::Origin::file);
    EXPECT_EQ(s->written, "11.8");
    EXPECT_EQ(s->version, "11.8.0");
    EXPECT_EQ(s->source, project() / ".cuda-version");
    EXPECT_EQ(s->origin_text(), (project() / ".cuda-version").string());
}

TEST_F(Selection_, TheVariableBeatsFileAndGlobal) {
    set_global(root_dir(), "12.4.1");
    tmp.write("project/.cuda-version", "11.8\n");
    auto s = select({{"CUDAENV_VERSION", "  12.1.1+cudnn9.1.0.70 \n"}}, project());
    ASSERT_TRUE(s) << s.error().full_message();
    EXPECT_EQ(s->origin, Selection::Origin::environment);
    EXPECT_EQ(s->written, "12.1.1+cudnn9.1.0.70"); // trimmed
    EXPECT_EQ(s->version, "12.1.1+cudnn9.1.0.70");
    EXPECT_EQ(s->origin_text(), "CUDAENV_VERSION");
}

TEST_F(Selection_, ABlankVariableIsNoSelection) {
    tmp.write("project/.cuda-version", "11.8\n");
    auto s = select({{"CUDAENV_VERSION", " \t "}}, project());
    ASSERT_TRUE(s) << s.error().full_message();
    EXPECT_EQ(s->origin, Selection::Origin::file);
    EXPECT_EQ(s->version, "11.8.0");
}

TEST_F(Selection_, TheNearestFileWins) {
    tmp.write("project/.cuda-version", "11.8\n");
    tmp.write("project/src/.cuda-version", "12.4\n");
    auto deep = select({}, project() / "src" / "deep");
    ASSERT_TRUE(deep) << deep.error().full_message();
    EXPECT_EQ(deep->source, project() / "src" / ".cuda-version");
    EXPECT_EQ(deep->version, "12.4.1");
    auto top = select({}, project());
    ASSERT_TRUE(top) << top.error().full_message();
    EXPECT_EQ(top->version, "11.8.0");
}

TEST_F(Selection_, SystemWrittenAnywhereSelectsNoVersion) {
    tmp.write("project/.cuda-version", "system\n");
    auto f = select({}, project());
    ASSERT_TRUE(f) << f.error().full_message();
    EXPECT_EQ(f->origin, Selection::Origin::file);
    EXPECT_FALSE(f->version);
    auto e = select({{"CUDAENV_VERSION", "system"}}, project());
    ASSERT_TRUE(e) << e.error().full_message();
    EXPECT_EQ(e->origin, Selection::Origin::environment);
    EXPECT_FALSE(e->version);
}

TEST_F(Selection_, AVersionNotInstalledIsNotFoundAndSaysWhoSetIt) {
    tmp.write("project/.cuda-version", "10.2\n");
    auto s = select({}, project());
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::not_found);
    EXPECT_EQ(exit_code(s.error().code), 9);
    EXPECT_NE(s.error().message.find("'10.2' is not installed"), std::string::npos)
        << s.error().message;
    EXPECT_NE(s.error().message.find("(set by " + (project() / ".cuda-version").string() + ")"),
              std::string::npos)
        << s.error().message;
    ASSERT_FALSE(s.error().hints.empty());
    EXPECT_EQ(s.error().hints[0], "cudaenv install 10.2");

    set_global(root_dir(), "10.2");
    fs::remove(project() / ".cuda-version");
    auto g = select({}, project());
    ASSERT_FALSE(g);
    EXPECT_NE(g.error().message.find("(global)"), std::string::npos) << g.error().message;
}

// ---- the version file itself ----

TEST(VersionFile, FindsTheNearestRegularFileWalkingUp) {
    test::TempDir tmp;
    fs::create_directories(tmp.path() / "a" / "b" / "c");
    EXPECT_FALSE(activate::find_version_file(tmp.path() / "a" / "b" / "c"));
    tmp.write("a/.cuda-version", "11.8");
    EXPECT_EQ(activate::find_version_file(tmp.path() / "a" / "b" / "c"),
              tmp.path() / "a" / ".cuda-version");
    // a directory of that name is no version file: the walk goes on upwards
    fs::create_directories(tmp.path() / "a" / "b" / ".cuda-version");
    EXPECT_EQ(activate::find_version_file(tmp.path() / "a" / "b" / "c"),
              tmp.path() / "a" / ".cuda-version");
}

TEST(VersionFile, ReadsTheFirstWordOfTheFirstLineThatIsNoComment) {
    auto v = activate::parse_version_file(
        "# pinned for the lab\n\n   \t 12.4  trailing words\n11.8\n", "f");
    ASSERT_TRUE(v) << v.error().full_message();
    EXPECT_EQ(*v, "12.4");
    auto crlf = activate::parse_version_file("tf-2.13\r\n", "f");
    ASSERT_TRUE(crlf) << crlf.error().full_message();
    EXPECT_EQ(*crlf, "tf-2.13");
    auto spec = activate::parse_version_file("11.8+cudnn-8.6", "f");
    ASSERT_TRUE(spec) << spec.error().full_message();
    EXPECT_EQ(*spec, "11.8+cudnn-8.6");
}

TEST(VersionFile, AnEmptyOrCommentOnlyFileNamesNoVersion) {
    for (const char* text : {"", "\n\n", "# nothing\n  # still nothing\n"}) {
        auto v = activate::parse_version_file(text, "'/p/.cuda-version'");
        ASSERT_FALSE(v) << text;
        EXPECT_EQ(v.error().code, ErrorCode::usage);
        EXPECT_EQ(v.error().message, "'/p/.cuda-version' names no version");
    }
}

TEST(VersionFile, ControlBytesAndStrangeCharactersAreRefusedAndNeverEchoedRaw) {
    using namespace std::string_literals;
    for (std::string text : {"11.8\x1b[2J\n"s,
                             "11.8\0../../etc\n"s,
                             "..\n"s,
                             ".\n"s,
                             "../11.8\n"s,
                             "11.8;rm\n"s,
                             "\x7f"s}) {
        auto v = activate::parse_version_file(text, "'f'");
        ASSERT_FALSE(v) << printable(text);
        EXPECT_EQ(v.error().code, ErrorCode::usage) << printable(text);
        for (char c : v.error().message) {
            auto u = static_cast<unsigned char>(c);
            EXPECT_FALSE(u < 0x20 || u == 0x7f) << "raw control byte in: " << v.error().message;
        }
    }
}

TEST_F(Selection_, AMalformedFileIsAUsageErrorNamingIt) {
    tmp.write("project/.cuda-version", std::string("11.8\x1b]0;owned\x07\n"));
    auto s = select({}, project());
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::usage);
    EXPECT_NE(s.error().message.find((project() / ".cuda-version").string()), std::string::npos)
        << s.error().message;
    EXPECT_EQ(s.error().message.find('\x1b'), std::string::npos);
}

TEST_F(Selection_, AMalformedVariableIsAUsageError) {
    auto s = select({{"CUDAENV_VERSION", "11.8/../../x"}}, project());
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::usage);
    EXPECT_NE(s.error().message.find("CUDAENV_VERSION"), std::string::npos) << s.error().message;
}

TEST_F(Selection_, ADirectoryNamedLikeTheFileIsPassedOver) {
    tmp.write("project/.cuda-version", "11.8\n");
    fs::create_directories(project() / "src" / ".cuda-version");
    auto s = select({}, project() / "src");
    ASSERT_TRUE(s) << s.error().full_message();
    EXPECT_EQ(s->source, project() / ".cuda-version");
    EXPECT_EQ(s->version, "11.8.0");
}

// A .cuda-version whose first word is long plain text (60 KiB of letters, within the file's
// bound) is no version: the error quotes 120 bytes of it, never the whole word (every shim in
// that tree prints it). The same word as a SPEC on the command line is quoted as short.
TEST_F(Selection_, AHugeWordIsEchoedCutShort) {
    tmp.write("project/.cuda-version", std::string(60 << 10, 'a'));
    auto s = select({}, project());
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::usage);
    EXPECT_LT(s.error().full_message().size(), 1024u) << s.error().full_message().substr(0, 300);
    EXPECT_NE(s.error().message.find("too long"), std::string::npos) << s.error().message;
    auto spec = parse_spec(std::string(1 << 20, 'a'));
    ASSERT_FALSE(spec);
    EXPECT_LT(spec.error().full_message().size(), 1024u);
}

// A huge .cuda-version (a sparse 1 GiB file that starts "system") is refused by its size, after
// reading at most 64 KiB + 1 of it: the shim reads this file at every call. Just under the bound
// it is read as usual.
TEST_F(Selection_, AFileLargerThanTheBoundIsRefusedNotReadWhole) {
    auto f = tmp.write("project/.cuda-version", "system\n");
    fs::resize_file(f, std::uintmax_t{1} << 30);
    auto s = select({}, project());
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::usage);
    EXPECT_NE(s.error().message.find("larger than 64 KiB"), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find(f.string()), std::string::npos);
    std::string text = "system\n" + std::string(activate::k_max_version_file - 7, '#');
    tmp.write("project/.cuda-version", text);
    ASSERT_EQ(fs::file_size(f), activate::k_max_version_file);
    auto ok = select({}, project());
    ASSERT_TRUE(ok) << ok.error().full_message();
    EXPECT_FALSE(ok->version);
    tmp.write("project/.cuda-version", text + "#");
    EXPECT_FALSE(select({}, project()));
}

TEST_F(Selection_, AnUnreadableFileIsAnErrorNotTheNextOrigin) {
    set_global(root_dir(), "12.4.1");
    auto f = tmp.write("project/.cuda-version", "11.8\n");
    fs::permissions(f, fs::perms::none);
    if (::geteuid() == 0) {
        GTEST_SKIP() << "root reads any file";
    }
    auto s = select({}, project());
    EXPECT_FALSE(s);
    if (!s) {
        EXPECT_EQ(s.error().code, ErrorCode::filesystem);
    }
}

TEST_F(Selection_, ADamagedStateJsonIsAnIntegrityError) {
    tmp.write("root/state.json", "{ not json");
    auto s = select({}, project());
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::integrity);
    // a file or the variable is read first: state.json is not needed then
    tmp.write("project/.cuda-version", "11.8\n");
    EXPECT_TRUE(select({}, project()));
}

// ---- matching what was written to what is installed ----

TEST_F(Selection_, AnInstalledNameMatchesItself) {
    EXPECT_EQ(picked(match("11.8.0+cudnn8.6.0.163")), "11.8.0+cudnn8.6.0.163");
    EXPECT_EQ(picked(match("12.4.1")), "12.4.1");
}

TEST_F(Selection_, ABareCudaPrefersTheBareVersion) {
    // 11.8 matches three versions; without a cuDNN asked for, the one without cuDNN wins
    EXPECT_EQ(picked(match("11.8")), "11.8.0");
    EXPECT_EQ(picked(match("cuda-11.8")), "11.8.0");
    EXPECT_EQ(picked(match("11")), "11.8.0");
}

TEST_F(Selection_, ABareCudaWithoutABareVersionTakesTheNewestCudnn) {
    fs::remove_all(root_dir() / "versions" / "11.8.0");
    EXPECT_EQ(picked(match("11.8")), "11.8.0+cudnn9.1.0.70");
}

TEST_F(Selection_, ThePrefixIsByComponentAndTheNewestWins) {
    EXPECT_EQ(picked(match("12")), "12.10.0");                // 12.10 > 12.4 numerically
    EXPECT_EQ(picked(match("12.1")), "12.1.1+cudnn9.1.0.70"); // 12.1 is no prefix of 12.10
    EXPECT_EQ(picked(match("12.4")), "12.4.1");
    auto none = match("12.2");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, ErrorCode::not_found);
    auto longer = match("12.4.1.5"); // no CUDA version has four parts: not a SPEC
    ASSERT_FALSE(longer);
    EXPECT_EQ(longer.error().code, ErrorCode::usage);
}

TEST_F(Selection_, APairMatchesBothPrefixes) {
    EXPECT_EQ(picked(match("11.8+cudnn-8.6")), "11.8.0+cudnn8.6.0.163");
    EXPECT_EQ(picked(match("11.8+cudnn-9")), "11.8.0+cudnn9.1.0.70");
    EXPECT_EQ(picked(match("11+cudnn-8")), "11.8.0+cudnn8.6.0.163");
    auto none = match("11.8+cudnn-8.9");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, ErrorCode::not_found);
    auto no_cudnn = match("12.4+cudnn-9"); // 12.4.1 has no cuDNN
    ASSERT_FALSE(no_cudnn);
    EXPECT_EQ(no_cudnn.error().code, ErrorCode::not_found);
}

TEST_F(Selection_, ACudnnAloneNamesNoVersion) {
    auto m = match("cudnn-8.6");
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, ErrorCode::not_found);
}

TEST_F(Selection_, AFrameworkGoesThroughItsTestedPair) {
    EXPECT_EQ(picked(match("tf-2.13")), "11.8.0+cudnn8.6.0.163");
    EXPECT_EQ(picked(match("tensorflow==2.13.1")), "11.8.0+cudnn8.6.0.163");
    auto unknown_row = match("tf-2.99");
    ASSERT_FALSE(unknown_row);
    EXPECT_EQ(unknown_row.error().code, ErrorCode::not_found);
    // a framework the tables do not know is no SPEC here (a usage error), not "not installed"
    auto unknown_fw = match("mxnet-1.9");
    ASSERT_FALSE(unknown_fw);
    EXPECT_EQ(unknown_fw.error().code, ErrorCode::usage);
    EXPECT_NE(unknown_fw.error().message.find("no framework named 'mxnet'"), std::string::npos)
        << unknown_fw.error().message;
}

TEST_F(Selection_, AFrameworkVariantPicksItsBuildsCuda) {
    EXPECT_EQ(picked(match("torch-2.5")), "12.1.1+cudnn9.1.0.70");       // the default cu121
    EXPECT_EQ(picked(match("torch-2.5+cu118")), "11.8.0+cudnn9.1.0.70"); // cuDNN 9 by major
    auto no_such_variant = match("torch-2.5+cu999");
    ASSERT_FALSE(no_such_variant);
    EXPECT_EQ(no_such_variant.error().code, ErrorCode::not_found);
}

TEST_F(Selection_, TextThatIsNoSpecIsAUsageError) {
    auto m = match("not a version");
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, ErrorCode::usage);
    auto dots = match("..");
    ASSERT_FALSE(dots);
    EXPECT_EQ(dots.error().code, ErrorCode::usage);
}

TEST_F(Selection_, AVersionFolderWithoutItsRecordIsNotInstalled) {
    fs::create_directories(root_dir() / "versions" / "13.0.0");
    auto m = match("13.0.0");
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, ErrorCode::not_found);
    EXPECT_FALSE(match("13"));
}

// ---- upstream (machine-wide) roots ----

class SelectionUpstream : public ::testing::Test {
  protected:
    void SetUp() override {
        add_version(user(), "12.4.1", "12.4.1");
        add_version(machine(), "11.8.0", "11.8.0");
        add_version(machine(), "12.4.1", "12.4.1");
        add_version(machine(), "12.6.0", "12.6.0");
        fs::create_directories(tmp.path() / "cwd");
    }

    fs::path user() const { return tmp.path() / "user"; }

    fs::path machine() const { return tmp.path() / "machine"; }

    store::Root root() const { return store::Root{user(), {machine()}}; }

    test::TempDir tmp;
};

TEST_F(SelectionUpstream, AnUpstreamVersionCanBeSelected) {
    auto m = activate::match_installed(root(), {}, "11.8");
    ASSERT_TRUE(m) << m.error().full_message();
    EXPECT_EQ(*m, "11.8.0");
    EXPECT_EQ(picked(activate::match_installed(root(), {}, "12")), "12.6.0");
}

TEST_F(SelectionUpstream, TheUpstreamsGlobalAppliesWhenTheUserHasNone) {
    set_global(machine(), "12.6.0");
    auto s = activate::select(root(), {}, {}, tmp.path() / "cwd");
    ASSERT_TRUE(s) << s.error().full_message();
    EXPECT_EQ(s->origin, Selection::Origin::global);
    EXPECT_EQ(s->version, "12.6.0");
    EXPECT_EQ(s->source, machine() / "state.json");

    set_global(user(), "12.4.1");
    auto own = activate::select(root(), {}, {}, tmp.path() / "cwd");
    ASSERT_TRUE(own) << own.error().full_message();
    EXPECT_EQ(own->version, "12.4.1");
    EXPECT_EQ(own->source, user() / "state.json");
}

TEST_F(SelectionUpstream, ADamagedUpstreamStateIsPassedOverButTheUsersIsNot) {
    tmp.write("machine/state.json", "garbage");
    auto s = activate::select(root(), {}, {}, tmp.path() / "cwd");
    ASSERT_TRUE(s) << s.error().full_message();
    EXPECT_EQ(s->origin, Selection::Origin::system);

    tmp.write("user/state.json", "garbage");
    auto u = activate::select(root(), {}, {}, tmp.path() / "cwd");
    ASSERT_FALSE(u);
    EXPECT_EQ(u.error().code, ErrorCode::integrity);
}

TEST_F(SelectionUpstream, AShadowedCopyIsNotMatchedTwice) {
    // the machine's 12.4.1 record says another CUDA; the user's copy is the one the name means
    fs::remove_all(machine() / "versions" / "12.4.1");
    add_version(machine(), "12.4.1", "12.9.9");
    auto m = activate::match_installed(root(), {}, "12.9");
    ASSERT_FALSE(m) << "matched the shadowed copy: " << *m;
    EXPECT_EQ(m.error().code, ErrorCode::not_found);
    EXPECT_EQ(picked(activate::match_installed(root(), {}, "12.4")), "12.4.1");
}

// ---- the framework a selection names ----

TEST(SelectedFrameworkName, FromTheVariableElseTheFile) {
    test::TempDir tmp;
    fs::create_directories(tmp.path() / "p" / "q");
    EXPECT_EQ(activate::selected_framework_name({}, tmp.path() / "p" / "q"), "");
    tmp.write("p/.cuda-version", "tf-2.13\n");
    EXPECT_EQ(activate::selected_framework_name({}, tmp.path() / "p" / "q"), "tf");
    EXPECT_EQ(
        activate::selected_framework_name({{"CUDAENV_VERSION", "torch-2.5"}}, tmp.path() / "p"),
        "torch");
    EXPECT_EQ(activate::selected_framework_name({{"CUDAENV_VERSION", "11.8"}}, tmp.path() / "p"),
              "");
    tmp.write("p/.cuda-version", "\x1b[31m\n");
    EXPECT_EQ(activate::selected_framework_name({}, tmp.path() / "p"), "");
}

} // namespace
