// The machine as files: paths are named as the machine sees them ("/proc/driver/nvidia/version")
// and read under the sysroot (CUDAENV_SYSROOT), links followed inside it, so a test points the
// whole doctor at a fixture tree. Also the run's environment and PATH, and the machine's programs
// run through the config's ProcessRunner. Holds no state but the config it reads and the machine's
// kind, read once from it.
#pragma once

#include "../error.hpp"
#include "../sys/platform.hpp"
#include "../sys/process.hpp"
#include "host_config.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudaenv::doctor {

class Files {
  public:
    /// Reads `config` for as long as it lives.
    explicit Files(const HostConfig& config);
    Files(HostConfig&&) = delete;

    const HostConfig& config() const { return m_config; }

    /// The sysroot ("/" for an empty one).
    const std::filesystem::path& sysroot() const { return m_sysroot; }

    /// The machine being diagnosed: x86_64, an Arm server or a Jetson (with its L4T release), as
    /// sys::read_sysroot_machine reads the sysroot (a sysroot other than "/" by its own files,
    /// not by how cudaenv was built or where it runs). Read once.
    const sys::HostMachine& machine() const;

    /// Its multiarch triplet: the folder Debian and Ubuntu name libraries and headers by
    /// (/usr/lib/aarch64-linux-gnu, /usr/include/x86_64-linux-gnu).
    std::string triplet() const { return sys::multiarch_triplet(machine()); }

    /// A Jetson's words for what the doctor cannot check on it: "cannot be checked on Jetson
    /// (L4T 36.4.3): " + why. Empty on any other machine.
    std::string jetson_cannot(std::string_view why) const;

    /// The real path of a machine path, every link followed inside the sysroot.
    std::filesystem::path at(std::string_view machine_path) const;
    /// Likewise, but the last component itself (a link is not followed): for lstat, readlink.
    std::filesystem::path at_entry(std::string_view machine_path) const;
    /// The machine path of a real path under the sysroot.
    std::string machine_path(const std::filesystem::path& real) const;
    std::optional<std::string> read(std::string_view machine_path,
                                    std::size_t max_bytes = 4u << 20) const;
    bool exists(std::string_view machine_path) const; ///< anything there, even a dangling link
    /// The file holds these bytes (a binary's strings: which environment variables it reads).
    bool file_contains(std::string_view machine_path, std::string_view needle) const;
    bool is_dir(std::string_view machine_path) const;
    /// Names in a folder, sorted; empty when it is not there.
    std::vector<std::string> list(std::string_view machine_path) const;
    std::optional<std::string> read_link(std::string_view machine_path) const;
    /// Follows every link as the machine would (absolute targets stay in the sysroot).
    std::string canonical(std::string_view machine_path) const;

    /// The kernel's log since boot (/dev/kmsg): each record's message, oldest first (a record's
    /// "KEY=value" continuation lines left out). A character device is read a record per
    /// read(2), as the kernel hands them out; a plain file (a fixture, a saved log) a line per
    /// record. `why` says why it could not be read: reading it needs CAP_SYSLOG where
    /// kernel.dmesg_restrict is 1.
    struct KernelLog {
        bool readable = false;
        std::string why;
        /// one line each: a printk of several lines is joined, its continuations' "NVRM:" off
        std::vector<std::string> messages;
    };

    KernelLog kernel_log() const;

    std::optional<std::string> env(std::string_view name) const;
    /// The first executable `tool` on PATH, as a machine path.
    std::optional<std::string> which(std::string_view tool) const;
    std::vector<std::string> path_list(std::string_view var) const;

    /// How children are run: the config's runner, else the real one.
    const sys::ProcessRunner& processes() const;
    /// Options for a child: the run's environment (every child sees what the user runs with) and
    /// the config's deadline.
    sys::ProcessOptions child_options() const;
    /// Runs a program of the machine (argv[0] a machine path).
    Result<sys::ProcessResult> run(std::vector<std::string> argv) const;
    /// Runs a program whose answer is live (a service's state): never remembered.
    Result<sys::ProcessResult> run_live(std::vector<std::string> argv) const;
    /// Starts what run(argv) would run, early (Answers::prefetch); nothing without answers.
    void prefetch(std::vector<std::string> argv) const;

  private:
    const HostConfig& m_config;
    std::filesystem::path m_sysroot;
    mutable std::optional<sys::HostMachine> m_machine;
};

} // namespace cudaenv::doctor
