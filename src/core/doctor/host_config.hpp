// What a doctor run is pointed at: the machine (a sysroot, an environment), cudaenv's root and
// manifests, and how children are run. Every view of the Host reads its settings from here.
#pragma once

#include "../advisory/match.hpp"
#include "../channel/sets.hpp"
#include "../store/root.hpp"
#include "../sys/process.hpp"

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace cudaenv::doctor {

class Answers;

struct HostConfig {
    std::filesystem::path sysroot = "/";
    std::map<std::string, std::string> env;
    std::filesystem::path cwd;
    /// This cudaenv binary: runs the library queries (`__doctor-query`).
    std::filesystem::path self_exe;
    store::Root root;
    /// The root whose journal owns /usr/local/cuda: `root`, or for a user without a global of
    /// their own, the machine-wide root below it. Empty: `root`.
    store::Root machine_root;

    const store::Root& link_root() const { return machine_root.dir.empty() ? root : machine_root; }

    std::filesystem::path manifests;
    /// Which manifests those are: serial, origin, age (the self probe says when they are old).
    channel::ManifestsInUse manifests_in_use;
    /// What the channel's trust stands on (ops: root metadata version, site keys, revocations,
    /// the rollback floor), said by the self probe; a trust state that cannot be read, a warning.
    std::vector<std::string> trust_details;
    /// The advisories this machine's config acknowledges (`acknowledge = ID reason`).
    std::vector<advisory::Acknowledgement> acknowledged;
    std::string trust_problem;
    std::filesystem::path ldconfig; ///< empty: /sbin/ldconfig
    std::chrono::milliseconds child_timeout{std::chrono::seconds(10)};
    /// `doctor --deep`: launch a kernel on every GPU (the smoke probe); off, that probe skips.
    bool deep = false;
    /// How every child is run (the machine's programs, the query child, ldconfig); null: for real
    /// (sys::real_processes()). Unit tests play them.
    const sys::ProcessRunner* processes = nullptr;
    /// What programs and libraries answered before (answers.hpp): each asked at most once per
    /// run, and not again while its files are the same. Null: every child runs.
    Answers* answers = nullptr;
};

} // namespace cudaenv::doctor
