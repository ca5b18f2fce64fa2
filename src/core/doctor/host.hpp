// The only way doctor probes see the machine: one object that owns the views they read through
// and hands them out. `files()` the machine as files under the sysroot, the environment and its
// programs; `loader()` the dynamic loader's view; `facts()` GPUs, driver, toolkit, containers and
// the library query child; `manifests()` what cudaenv's manifests say. Each view is a class of its
// own that a test can build and hold alone; every child any of them starts goes through the
// config's ProcessRunner.
#pragma once

#include "facts.hpp"
#include "files.hpp"
#include "host_config.hpp"
#include "loader.hpp"
#include "manifests.hpp"

#include <utility>

namespace cudaenv::doctor {

class Host {
  public:
    explicit Host(HostConfig config)
        : m_config(std::move(config)), m_files(m_config),
          m_manifests(m_config.manifests, m_files.env("CUDAENV_TODAY")), m_loader(m_files),
          m_facts(m_files, m_loader, m_manifests) {
        if (m_config.sysroot.empty()) {
            m_config.sysroot = "/"; // as Files reads it
        }
    }

    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;

    const HostConfig& config() const { return m_config; }

    const Files& files() const { return m_files; }

    Loader& loader() { return m_loader; }

    Facts& facts() { return m_facts; }

    Manifests& manifests() { return m_manifests; }

  private:
    HostConfig m_config; // the views read it: first made, last gone
    Files m_files;
    Manifests m_manifests;
    Loader m_loader;
    Facts m_facts;
};

} // namespace cudaenv::doctor
