// core/pyenv on real site-packages layouts, built in a temporary folder as pip lays them out.
#include "core/pyenv/pyenv.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace cudaenv::pyenv {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

/// A dist-info as pip writes it, with METADATA's Requires-Dist lines.
void dist(const fs::path& site,
          const std::string& name,
          const std::string& version,
          const std::vector<std::string>& requires_ = {}) {
    std::string meta = "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n";
    for (const auto& r : requires_) {
        meta += "Requires-Dist: " + r + "\n";
    }
    meta += "\nRequires-Dist: not-a-header (the description)\n";
    write(site / (name + "-" + version + ".dist-info") / "METADATA", meta);
}

TEST(PyEnv, TorchFromPyPIAndJaxPluginInAVenv) {
    test::TempDir t;
    fs::path venv = t.path() / "venv";
    fs::path site = venv / "lib/python3.11/site-packages";
    dist(site,
         "torch",
         "2.14.0+cu130",
         {"cuda-toolkit[cublas,cudart]==13.0.2; platform_system == \"Linux\"",
          "nvidia-cudnn-cu13==9.24.0.43; platform_system == \"Linux\"",
          "filelock"});
    write(site / "torch/version.py",
          "__version__ = '2.14.0+cu130'\ncuda: Optional[str] = '13.0'\n");
    dist(site, "nvidia_cudnn_cu13", "9.24.0.43");
    dist(site, "jax", "0.9.0");
    dist(site, "jaxlib", "0.9.0");
    dist(site,
         "jax_cuda12_plugin",
         "0.9.0",
         {"nvidia-cudnn-cu12>=9.8,<10.0; sys_platform == \"linux\""});
    dist(site, "nvidia_cuda_nvcc_cu12", "12.6.85");
    RealFiles files({{"VIRTUAL_ENV", venv.string()}, {"PATH", "/nonexistent"}});
    auto env = active_environment(files);
    ASSERT_TRUE(env);
    EXPECT_EQ(env->found_by, "VIRTUAL_ENV");
    ASSERT_EQ(env->sites.size(), 1u);
    auto fws = installed_frameworks(files, *env);
    ASSERT_EQ(fws.size(), 2u);
    EXPECT_EQ(fws[0].name, "pytorch");
    EXPECT_EQ(fws[0].version->str(), "2.14.0");
    EXPECT_EQ(fws[0].variant, "cu130");
    EXPECT_EQ(fws[0].cuda->str(), "13.0");
    ASSERT_EQ(fws[0].pins.size(), 2u); // filelock is not CUDA's, the description is not a header
    EXPECT_EQ(fws[0].pins[0], "cuda-toolkit[cublas,cudart]==13.0.2");
    EXPECT_EQ(fws[1].name, "jax");
    EXPECT_EQ(fws[1].variant, "cuda12");
    EXPECT_EQ(fws[1].cuda->str(), "12.6"); // the nvcc wheel the plugin installed
    EXPECT_NE(fws[1].cuda_from.find("jax-cuda12-plugin 0.9.0"), std::string::npos);
}

TEST(PyEnv, OldJaxlibLocalVersionAndCpuTorch) {
    test::TempDir t;
    fs::path conda = t.path() / "conda";
    fs::path site = conda / "lib/python3.10/site-packages";
    dist(site, "jaxlib", "0.4.25+cuda11.cudnn86");
    dist(site, "torch", "2.5.1+cpu");
    write(site / "torch/version.py", "cuda = None\n");
    RealFiles files({{"CONDA_PREFIX", conda.string()}});
    auto env = active_environment(files);
    ASSERT_TRUE(env);
    EXPECT_EQ(env->found_by, "CONDA_PREFIX");
    auto fws = installed_frameworks(files, *env);
    ASSERT_EQ(fws.size(), 2u);
    EXPECT_TRUE(fws[0].cpu_only);
    EXPECT_EQ(fws[1].variant, "cuda11");
    EXPECT_EQ(fws[1].cuda->str(), "11"); // the major alone: no CUDA wheel says more
    EXPECT_EQ(fws[1].version->str(), "0.4.25");
}

// A dist-info name is whatever is on disk: a local version that is no CUDA build is a CPU build,
// never an exception.
TEST(PyEnv, OddJaxlibLocalVersionsAreNotCudaBuilds) {
    for (const char* local : {"cuda99999999999999999999999", "cuda", "cuda.x", "cudaX12"}) {
        test::TempDir t;
        fs::path site = t.path() / "v/lib/python3.11/site-packages";
        dist(site, "jaxlib", std::string("0.4.20+") + local);
        RealFiles files(
            std::map<std::string, std::string>{{"VIRTUAL_ENV", (t.path() / "v").string()}});
        auto env = active_environment(files);
        ASSERT_TRUE(env);
        auto fws = installed_frameworks(files, *env);
        ASSERT_EQ(fws.size(), 1u) << local;
        EXPECT_TRUE(fws[0].cpu_only) << local;
    }
}

TEST(PyEnv, NoEnvironmentIsNone) {
    RealFiles files(std::map<std::string, std::string>{{"PATH", "/nonexistent"}});
    EXPECT_FALSE(active_environment(files));
}

// conda's pytorch channel installs torch with setuptools: an egg-info (torch-2.2.2-py3.10.egg-info,
// PKG-INFO inside, as astral-sh/uv#2928 printed it) and conda's own record; torch 2.2.2's real
// METADATA writes its pins in parentheses. A record alone is read too, and its build string
// names the CUDA (py3.10_cuda12.1_cudnn8.9.2_0).
TEST(PyEnv, CondasEggInfoAndRecordAndParenthesisedPins) {
    test::TempDir t;
    fs::path prefix = t.path() / "conda";
    fs::path site = prefix / "lib/python3.10/site-packages";
    write(site / "torch-2.2.2-py3.10.egg-info/PKG-INFO",
          "Metadata-Version: 2.1\nName: torch\nVersion: 2.2.2\n"
          "Requires-Dist: nvidia-cudnn-cu12 (==8.9.2.26) ; platform_system == \"Linux\"\n");
    write(site / "torch/version.py",
          "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', "
          "'git_version', 'hip']\n__version__ = '2.2.2'\ndebug = False\n"
          "cuda: Optional[str] = '12.1'\ngit_version = '39901f229520a5256505ec24782f716ee7ddc843'\n"
          "hip: Optional[str] = None\n");
    RealFiles files({{"CONDA_PREFIX", prefix.string()}, {"PATH", "/nonexistent"}});
    auto env = active_environment(files);
    ASSERT_TRUE(env);
    auto fws = installed_frameworks(files, *env);
    ASSERT_EQ(fws.size(), 1u);
    EXPECT_EQ(fws[0].dist.version, "2.2.2");
    EXPECT_FALSE(fws[0].cpu_only);
    EXPECT_EQ(fws[0].cuda->str(), "12.1");
    ASSERT_EQ(fws[0].pins.size(), 1u);
    EXPECT_EQ(fws[0].pins[0], "nvidia-cudnn-cu12==8.9.2.26");
    // only conda's record: its build string says the CUDA
    fs::remove_all(site / "torch-2.2.2-py3.10.egg-info");
    fs::remove(site / "torch/version.py");
    write(prefix / "conda-meta/pytorch-2.2.2-py3.10_cuda12.1_cudnn8.9.2_0.json",
          R"({"name": "pytorch", "version": "2.2.2", "build": "py3.10_cuda12.1_cudnn8.9.2_0"})");
    write(prefix / "conda-meta/pytorch-cuda-12.1-ha16c6d3_5.json",
          R"({"name": "pytorch-cuda", "version": "12.1", "build": "ha16c6d3_5"})");
    fws = installed_frameworks(files, *env);
    ASSERT_EQ(fws.size(), 1u);
    EXPECT_EQ(fws[0].dist.version, "2.2.2");
    ASSERT_TRUE(fws[0].cuda);
    EXPECT_EQ(fws[0].cuda->str(), "12.1");
    EXPECT_NE(fws[0].cuda_from.find("conda's record"), std::string::npos);
}

} // namespace
} // namespace cudaenv::pyenv
