// build_info.py and torch/version.py in every layout real wheels have shipped.
#include "core/pyenv/pyinfo.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

namespace cudaenv::pyenv {
namespace {

// TF 2.3 and later (gen_build_info.py writes the sorted pairs into an OrderedDict): TF 2.15's
// GPU wheel, as installed.
constexpr const char* k_tf215 = R"(
# Copyright 2020 The TensorFlow Authors. All Rights Reserved.
# ==============================================================================
"""Auto-generated module providing information about the build."""
import collections

build_info = collections.OrderedDict([('cpu_compiler', '/usr/lib/llvm-17/bin/clang'), ('cuda_compute_capabilities', ['sm_50', 'sm_60', 'sm_70', 'sm_75', 'compute_80']), ('cuda_version', '12.2'), ('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', True)])
)";

// TF 1.13 to 2.2: module constants, the CUDA keys passed as --key_value.
constexpr const char* k_tf21 = R"(
# Copyright 2017 The TensorFlow Authors. All Rights Reserved.
"""Generates a Python module containing information about the build."""
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

is_rocm_build = False
is_cuda_build = True

cuda_version_number = '10.1'
cudnn_version_number = '7'
)";

TEST(PyInfo, TensorFlowOrderedDict) {
    auto info = parse_tf_build_info(k_tf215);
    EXPECT_TRUE(info.cuda_build);
    EXPECT_EQ(info.cuda.value_or("-"), "12.2");
    EXPECT_EQ(info.cudnn.value_or("-"), "8");
}

TEST(PyInfo, TensorFlowModuleConstants) {
    auto info = parse_tf_build_info(k_tf21);
    EXPECT_TRUE(info.cuda_build);
    EXPECT_EQ(info.cuda.value_or("-"), "10.1");
    EXPECT_EQ(info.cudnn.value_or("-"), "7");
}

TEST(PyInfo, TensorFlowDictLiteral) {
    auto info = parse_tf_build_info(
        "build_info = {\n    'cuda_version': '11.2',\n    \"cudnn_version\": \"8.1\",\n"
        "    'is_cuda_build': True,\n}\n");
    EXPECT_TRUE(info.cuda_build);
    EXPECT_EQ(info.cuda.value_or("-"), "11.2");
    EXPECT_EQ(info.cudnn.value_or("-"), "8.1");
}

TEST(PyInfo, TensorFlowCpuBuilds) {
    // tensorflow-cpu 2.15: no CUDA keys, the flag False
    auto cpu = parse_tf_build_info(
        "build_info = collections.OrderedDict([('cpu_compiler', '/usr/bin/gcc'), "
        "('is_cuda_build', False), ('is_rocm_build', False), ('is_tensorrt_build', False)])\n");
    EXPECT_FALSE(cpu.cuda_build);
    EXPECT_FALSE(cpu.cuda);
    auto old = parse_tf_build_info("is_rocm_build = False\nis_cuda_build = False\n\n\n");
    EXPECT_FALSE(old.cuda_build);
    EXPECT_FALSE(old.cuda);
}

TEST(PyInfo, NamesInsideOtherNamesDoNotMatch) {
    // 'is_cuda_build' contains no binding for 'cuda'; a comparison is not an assignment
    EXPECT_FALSE(python_literal("is_cuda_build = True\nif cuda == '1': pass\n", "cuda"));
    EXPECT_FALSE(python_literal("x = info.cuda_version\n", "cuda_version"));
    EXPECT_EQ(python_literal("  cuda_version = '11.0'  # indented\n", "cuda_version").value_or("-"),
              "11.0");
}

TEST(PyInfo, TorchVersionPy) {
    // torch 2.x writes annotations; torch 1.x plain assignments; CPU wheels None
    EXPECT_EQ(parse_torch_cuda("__version__ = '2.3.1+cu121'\ndebug = False\n"
                               "cuda: Optional[str] = '12.1'\ngit_version = 'abc'\n"
                               "hip: Optional[str] = None\n")
                  .value_or("-"),
              "12.1");
    EXPECT_EQ(parse_torch_cuda("__version__ = '1.13.1+cu117'\ncuda = '11.7'\n").value_or("-"),
              "11.7");
    EXPECT_FALSE(parse_torch_cuda("__version__ = '2.3.1+cpu'\ncuda: Optional[str] = None\n"));
    EXPECT_FALSE(parse_torch_cuda("__version__ = '1.8.0+cpu'\ncuda = None\n"));
}

} // namespace
} // namespace cudaenv::pyenv

// The real files (tests/field/samples, each with its source in PROVENANCE.md): torch/version.py
// of every layout from 1.12 to 2.14 -- 2.x opens with `__all__ = ['__version__', 'debug',
// 'cuda', 'git_version', ...]`, which must not read as a pair -- and TensorFlow's build_info.py.
// The CUDA expected comes from the wheel's own tag in the folder name (+cu128 -> 12.8; +cpu and
// +rocm -> none), not from the file.
namespace {

std::string sample(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

TEST(PyInfoRealSamples, EveryTorchVersionPyReadsAsItsWheelsTag) {
    auto dir = std::filesystem::path(CUDAENV_TEST_FIELD) / "samples" / "pytorch";
    std::map<std::string, std::optional<std::string>> untagged{
        {"2.2.2", "12.1"},       // PyPI's default build of 2.2.2 is CUDA 12.1
        {"2.9.1", std::nullopt}, // PyPI's aarch64 wheel of 2.9.1 is a CPU build
    };
    int read = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        auto file = e.path() / "torch" / "version.py";
        if (!std::filesystem::exists(file)) {
            continue;
        }
        std::string name = e.path().filename().string();
        std::optional<std::string> want;
        if (auto cu = name.find("+cu"); cu != std::string::npos) {
            std::string digits = name.substr(cu + 3);
            want = digits.substr(0, digits.size() - 1) + "." + digits.substr(digits.size() - 1);
        } else if (name.find('+') == std::string::npos) {
            ASSERT_TRUE(untagged.count(name)) << name;
            want = untagged.at(name);
        }
        EXPECT_EQ(cudaenv::pyenv::parse_torch_cuda(sample(file)), want) << name;
        ++read;
    }
    EXPECT_GE(read, 15);
}

TEST(PyInfoRealSamples, TensorFlowBuildInfoInEveryLayout) {
    auto dir = std::filesystem::path(CUDAENV_TEST_FIELD) / "samples" / "tensorflow";
    auto info = [&](const char* name) {
        return cudaenv::pyenv::parse_tf_build_info(
            sample(dir / name / "tensorflow" / "python" / "platform" / "build_info.py"));
    };
    for (const char* n : {"2.1.0-linux-cuda", "2.2.0-linux-cuda", "2.3.0-linux-cuda"}) {
        EXPECT_EQ(info(n).cuda.value_or("-"), "10.1") << n;
    }
    EXPECT_TRUE(info("2.2.0-linux-cuda").cuda_build);
    EXPECT_EQ(info("2.8.0-linux-cuda").cuda.value_or("-"), "11.2");
    EXPECT_EQ(info("2.13.0-linux-cuda").cuda.value_or("-"), "11.8");
    EXPECT_EQ(info("2.16.1-linux-cuda").cuda.value_or("-"), "12.3");
    EXPECT_TRUE(info("2.16.1-linux-cuda").cuda_build);
    EXPECT_FALSE(info("2.16.1-tensorflow-cpu").cuda_build);
    // Windows wheels name the DLL suffix, not the version: read as written, never as 64.101
    EXPECT_EQ(info("2.3.0-windows-cuda-REAL").cuda.value_or("-"), "64_101");
}
