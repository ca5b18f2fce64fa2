// The doctor's remembered answers (answers.hpp): asked once per run and not again while the files
// an answer comes from are the same; a changed file, a failure or a missing input is asked again.
#include "core/doctor/answers.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace cudaenv::doctor {
namespace {

namespace fs = std::filesystem;

/// Counts its runs and answers with `out` (and `status`).
class Counting : public sys::ProcessRunner {
  public:
    mutable int runs = 0;
    std::string out = "release 12.4\n";
    int status = 0;

    Result<sys::ProcessResult> run(const std::vector<std::string>&,
                                   const sys::ProcessOptions&) const override {
        ++runs;
        return sys::ProcessResult{status, out, "", false};
    }
};

class DoctorAnswers : public ::testing::Test {
  protected:
    test::TempDir dir;
    Counting child;
    fs::path nvcc = dir.write("cuda-12.4/bin/nvcc", "#!/bin/sh\n");
    fs::path file = dir.path() / "root" / "cache" / "doctor-answers.json";

    Result<sys::ProcessResult> ask(Answers& a, const fs::path& exe) {
        return a.run(child, {exe.string(), "--version"}, {}, {exe});
    }
};

TEST_F(DoctorAnswers, OncePerRunWhateverPathLeadsToTheProgram) {
    fs::create_directory_symlink(dir.path() / "cuda-12.4", dir.path() / "cuda");
    Answers a;
    EXPECT_EQ(ask(a, nvcc)->out, "release 12.4\n");
    EXPECT_EQ(ask(a, dir.path() / "cuda" / "bin" / "nvcc")->out, "release 12.4\n");
    EXPECT_EQ(child.runs, 1);
    EXPECT_EQ(a.asked(), 1u);
    EXPECT_EQ(a.known(), 1u);
}

TEST_F(DoctorAnswers, KeptBetweenRunsUntilTheProgramChanges) {
    {
        Answers a(file);
        ASSERT_TRUE(ask(a, nvcc));
        a.save();
    }
    Answers warm(file);
    EXPECT_EQ(ask(warm, nvcc)->out, "release 12.4\n");
    EXPECT_EQ(child.runs, 1); // nothing started
    // an upgrade: the same path, another file
    fs::remove(nvcc);
    dir.write("cuda-12.4/bin/nvcc", "#!/bin/sh\n# 12.4.1\n");
    child.out = "release 12.4, V12.4.131\n";
    Answers after(file);
    EXPECT_EQ(ask(after, nvcc)->out, "release 12.4, V12.4.131\n");
    EXPECT_EQ(child.runs, 2);
}

TEST_F(DoctorAnswers, ATouchedProgramIsAskedAgain) {
    Answers a(file);
    ASSERT_TRUE(ask(a, nvcc));
    a.save();
    auto later = fs::last_write_time(nvcc) + std::chrono::seconds(5);
    fs::last_write_time(nvcc, later);
    Answers b(file);
    ASSERT_TRUE(ask(b, nvcc));
    EXPECT_EQ(child.runs, 2);
}

TEST_F(DoctorAnswers, AMultiCallBinaryAnswersAsWhatItIsCalled) {
    // ccache is gcc and clang by the name it is run as
    fs::create_symlink(nvcc, dir.path() / "gcc");
    fs::create_symlink(nvcc, dir.path() / "clang");
    Answers a;
    ASSERT_TRUE(ask(a, dir.path() / "gcc"));
    ASSERT_TRUE(ask(a, dir.path() / "clang"));
    EXPECT_EQ(child.runs, 2);
}

TEST_F(DoctorAnswers, FailuresAndMissingInputsAreNotKept) {
    Answers a(file);
    child.status = 1;
    ASSERT_TRUE(ask(a, nvcc));
    ASSERT_TRUE(ask(a, nvcc));
    EXPECT_EQ(child.runs, 2);
    child.status = 0;
    ASSERT_TRUE(a.run(child, {"/nowhere/nvcc", "--version"}, {}, {"/nowhere/nvcc"}));
    ASSERT_TRUE(a.run(child, {"/nowhere/nvcc", "--version"}, {}, {"/nowhere/nvcc"}));
    EXPECT_EQ(child.runs, 4);
    a.save();
    EXPECT_FALSE(fs::exists(file)); // nothing learned, nothing written
}

TEST_F(DoctorAnswers, TheSaltSeparatesAnswers) {
    Answers a;
    ASSERT_TRUE(a.run(child, {"/q", "cudnn", nvcc.string()}, {}, {nvcc}, "LD_LIBRARY_PATH=/a"));
    ASSERT_TRUE(a.run(child, {"/q", "cudnn", nvcc.string()}, {}, {nvcc}, "LD_LIBRARY_PATH=/b"));
    EXPECT_EQ(child.runs, 2);
}

TEST_F(DoctorAnswers, ADamagedFileIsAnEmptyStartAndIsRewritten) {
    fs::create_directories(file.parent_path());
    for (const char* text :
         {"not json",
          R"({"schema": "other/1", "answers": []})",
          R"({"schema": "cudaenv.doctor-answers/1", "answers": [1, {"key": 2}]})"}) {
        std::ofstream(file) << text;
        Answers a(file);
        ASSERT_TRUE(ask(a, nvcc));
        a.save();
    }
    EXPECT_EQ(child.runs, 3);
    Answers warm(file);
    ASSERT_TRUE(ask(warm, nvcc));
    EXPECT_EQ(child.runs, 3);
}

} // namespace
} // namespace cudaenv::doctor
