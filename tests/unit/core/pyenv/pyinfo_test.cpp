// build_info.py and torch/version.py in every layout real wheels have shipped.
#include "core/pyenv/pyinfo.hpp"

#include <gtest/gtest.h>

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
