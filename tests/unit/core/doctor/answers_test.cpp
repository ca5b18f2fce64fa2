// The doctor's remembered answers (answers.hpp): asked once per run and not again while the files
// an answer comes from are the same; a changed file, a failure or a missing input is asked again.
#include "core/doctor/answers.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

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

/// Holds every child until `want` are running at once, or `patience` has passed (a test that
/// starts them one after the other then fails instead of hanging); counts each command. Safe to
/// call from several threads.
class Gate : public sys::ProcessRunner {
  public:
    explicit Gate(std::size_t want, std::chrono::milliseconds patience = std::chrono::seconds(5))
        : m_want(want), m_patience(patience) {}

    Result<sys::ProcessResult> run(const std::vector<std::string>& argv,
                                   const sys::ProcessOptions&) const override {
        std::unique_lock lock(m_mutex);
        ++m_asked[argv.back()];
        ++m_running;
        m_most = std::max(m_most, m_running);
        if (m_running >= m_want) {
            m_open = true; // the crowd met: every child passes from now on
            m_changed.notify_all();
        }
        if (!m_changed.wait_for(lock, m_patience, [&] { return m_open; })) {
            m_waited_out = true;
            m_open = true; // patience ran out: the rest pass, and the test fails
        }
        --m_running;
        return sys::ProcessResult{0, "answer to " + argv.back() + "\n", "", false};
    }

    std::size_t most() const {
        std::lock_guard lock(m_mutex);
        return m_most;
    }

    bool waited_out() const {
        std::lock_guard lock(m_mutex);
        return m_waited_out;
    }

    std::map<std::string, int> asked() const {
        std::lock_guard lock(m_mutex);
        return m_asked;
    }

  private:
    std::size_t m_want;
    std::chrono::milliseconds m_patience;
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_changed;
    mutable std::size_t m_running = 0;
    mutable std::size_t m_most = 0;
    mutable bool m_open = false;
    mutable bool m_waited_out = false;
    mutable std::map<std::string, int> m_asked;
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

TEST_F(DoctorAnswers, ChildrenStartedEarlyRunAtOnceAndAreAskedOnce) {
    Gate gate(3); // each child waits until all three run
    {
        Answers a(file);
        std::vector<std::string> what{"--version", "-dumpversion", "-p"};
        for (const auto& arg : what) {
            a.prefetch(gate, {nvcc.string(), arg}, {}, {nvcc});
            a.prefetch(gate, {nvcc.string(), arg}, {}, {nvcc}); // started once
        }
        EXPECT_EQ(a.asked(), 3u);
        for (const auto& arg : what) {
            auto r = a.run(gate, {nvcc.string(), arg}, {}, {nvcc});
            ASSERT_TRUE(r);
            EXPECT_EQ(r->out, "answer to " + arg + "\n");
        }
        EXPECT_FALSE(gate.waited_out()) << "the children ran one after the other";
        EXPECT_EQ(gate.most(), 3u);
        // asked again: remembered, nothing starts
        ASSERT_TRUE(a.run(gate, {nvcc.string(), "-p"}, {}, {nvcc}));
        a.prefetch(gate, {nvcc.string(), "-p"}, {}, {nvcc});
        EXPECT_EQ(a.asked(), 3u);
        EXPECT_EQ(a.known(), 1u);
        a.save();
    }
    EXPECT_EQ(gate.asked(),
              (std::map<std::string, int>{{"--version", 1}, {"-dumpversion", 1}, {"-p", 1}}));
    // a warm run prefetches nothing: every answer is known
    Answers warm(file);
    warm.prefetch(gate, {nvcc.string(), "--version"}, {}, {nvcc});
    EXPECT_EQ(warm.asked(), 0u);
    EXPECT_EQ(warm.run(gate, {nvcc.string(), "--version"}, {}, {nvcc})->out,
              "answer to --version\n");
    EXPECT_EQ(gate.asked()["--version"], 1);
}

TEST_F(DoctorAnswers, AChildStartedEarlyThatNobodyAsksForIsWaitedFor) {
    Gate gate(2, std::chrono::milliseconds(50));
    {
        Answers a;
        a.prefetch(gate, {nvcc.string(), "--version"}, {}, {nvcc});
    } // gone before the child ends: it waits, the child's thread outlives nothing
    EXPECT_EQ(gate.asked()["--version"], 1);
    EXPECT_TRUE(gate.waited_out());
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
