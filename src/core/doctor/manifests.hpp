// What cudaenv's manifests say, for the probes: releases, rules, the GPU tables, the frameworks,
// and the day they are judged on. Each file is read once, on first use; a missing or invalid one
// reads as empty (the probes that need it then say the manifests do not know).
#pragma once

#include "../manifest/advisories.hpp"
#include "../manifest/model.hpp"
#include "../version.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cudaenv::doctor {

class Manifests {
  public:
    /// `today`: the date to judge on (YYYY-MM-DD, CUDAENV_TODAY); none or another length: the
    /// clock's.
    explicit Manifests(std::filesystem::path dir, std::optional<std::string> today = {});

    /// The release a toolkit of version `v` is: that release (12.6.1); a patch the manifests do
    /// not hold, the newest before it; a bare major.minor, the minor's first release (the lowest
    /// driver minimum). Null when the minor is unknown.
    const manifest::CudaRelease* cuda_release_for(const Version& v);
    const manifest::Rules* rules();
    const std::vector<manifest::Gpu>& gpu_table();
    /// gpu-support.json: GPUs by PCI id, architectures' last branches, branches' end of life.
    const manifest::GpuSupport& gpu_support();
    /// advisories.json (empty when absent); an error when it is there and does not load.
    const Result<manifest::Advisories>& advisories();
    /// Today as YYYY-MM-DD.
    std::string today() const;
    const std::vector<manifest::Framework>& frameworks();
    /// driver-indexes.json: NVIDIA's per-driver indexes with their cuda_compat (empty when absent
    /// or invalid).
    const std::vector<manifest::DriverIndex>& driver_indexes();

  private:
    std::filesystem::path m_dir;
    std::optional<std::string> m_today;
    std::map<std::string, std::optional<manifest::CudaRelease>, std::less<>> m_releases;
    std::optional<std::optional<manifest::Rules>> m_rules;
    std::optional<std::vector<manifest::Gpu>> m_gpus;
    std::optional<manifest::GpuSupport> m_gpu_support;
    std::optional<Result<manifest::Advisories>> m_advisories;
    std::optional<std::vector<manifest::Framework>> m_frameworks;
    std::optional<std::vector<manifest::DriverIndex>> m_driver_indexes;
};

} // namespace cudaenv::doctor
