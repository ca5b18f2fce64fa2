// What the machine's programs and libraries answered the doctor -- `nvcc --version`, `gcc
// -dumpversion`, `ldconfig -p`, a libcudart's or libcudnn's version in the query child -- kept by
// the identity of the files each answer comes from (each file's real path, device, inode, size,
// modification and change times) and the command line. A run asks each at most once (nvcc is
// reached by three paths on a machine with /usr/local/cuda, CUDA_HOME and PATH); the answers
// are kept between runs in <root>/cache/doctor-answers.json, so a warm run starts no child it
// already knows the answer of. A program replaced, upgraded or touched has another identity and
// is asked again. Only answers of commands that exited 0 in time are kept. Live state (libcuda's
// cuInit, NVML) is never asked through here. A command the run will need can be started early
// (prefetch): it runs on a thread of its own while the run goes on, and the run() that asks for it
// takes its answer instead of starting it again, so a cold run waits about as long as its slowest
// child, not their sum. Only the runner's run() is called on those threads; everything else here
// belongs to the thread that made the object.
#pragma once

#include "../sys/process.hpp"

#include <cstddef>
#include <filesystem>
#include <future>
#include <map>
#include <string>
#include <vector>

namespace cudaenv::doctor {

class Answers {
  public:
    /// `file`: where answers are kept between runs; empty: this run only. A file that is
    /// missing, damaged or of another schema is an empty start.
    explicit Answers(std::filesystem::path file = {});
    /// Waits for every child started early that nobody asked for.
    ~Answers();
    Answers(const Answers&) = delete;
    Answers& operator=(const Answers&) = delete;

    /// `argv` through `runner` unless an answer for it and `inputs` (the files the answer comes
    /// from) is known; `salt` is anything else the answer depends on (LD_LIBRARY_PATH for a
    /// library). An input that cannot be stat'ed makes the command run, and its answer is not
    /// kept.
    Result<sys::ProcessResult> run(const sys::ProcessRunner& runner,
                                   const std::vector<std::string>& argv,
                                   const sys::ProcessOptions& options,
                                   const std::vector<std::filesystem::path>& inputs,
                                   const std::string& salt = {});

    /// Starts what run() with the same arguments would start, now, on a thread of its own,
    /// unless its answer is known or it was started already; run() then takes its answer. The
    /// runner must be safe to call from several threads and outlive this object.
    void prefetch(const sys::ProcessRunner& runner,
                  const std::vector<std::string>& argv,
                  const sys::ProcessOptions& options,
                  const std::vector<std::filesystem::path>& inputs,
                  const std::string& salt = {});

    /// `argv` through `runner`, never remembered: what is live (libcuda's cuInit, NVML), counted.
    Result<sys::ProcessResult> ask(const sys::ProcessRunner& runner,
                                   const std::vector<std::string>& argv,
                                   const sys::ProcessOptions& options);

    /// The same as a ProcessRunner: the program (argv[0]) and fixed `inputs` (for code that
    /// takes a runner: ldconfig, whose answer is the cache file's content). A `prefetch` runner
    /// only starts the command early and answers an error at once (for code that builds the
    /// command line itself: what the plain runner would run is what gets started).
    class Runner : public sys::ProcessRunner {
      public:
        Runner(Answers& answers,
               const sys::ProcessRunner& inner,
               std::vector<std::filesystem::path> inputs,
               bool prefetch = false)
            : m_answers(answers), m_inner(inner), m_inputs(std::move(inputs)),
              m_prefetch(prefetch) {}

        Result<sys::ProcessResult> run(const std::vector<std::string>& argv,
                                       const sys::ProcessOptions& options) const override;

      private:
        Answers& m_answers;
        const sys::ProcessRunner& m_inner;
        std::vector<std::filesystem::path> m_inputs;
        bool m_prefetch;
    };

    /// Writes what this run learned (atomically; a cache: failing to write is not an error).
    void save() const;

    std::size_t asked() const { return m_asked; } ///< children started through here this run

    std::size_t known() const { return m_known; } ///< answers given without a child

  private:
    /// The key of a command and its inputs; `keep`: every input could be stat'ed.
    static std::string key_of(const std::vector<std::string>& argv,
                              const std::vector<std::filesystem::path>& inputs,
                              const std::string& salt,
                              bool& keep);

    std::filesystem::path m_file;
    /// Started early, not yet asked for: key -> its answer to come.
    std::map<std::string, std::future<Result<sys::ProcessResult>>> m_pending;
    std::vector<std::pair<std::string, sys::ProcessResult>> m_entries; ///< oldest first
    std::map<std::string, std::size_t> m_index;                        ///< key -> m_entries
    bool m_dirty = false;
    std::size_t m_asked = 0;
    std::size_t m_known = 0;
};

} // namespace cudaenv::doctor
