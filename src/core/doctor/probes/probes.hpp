// One function per probe, one probe per file (the table that orders them is in doctor.cpp).
#pragma once

#include "../doctor.hpp"
#include "../host.hpp"

namespace cudaenv::doctor::checks {

Finding gpu(Host& h);
Finding arch(Host& h);
Finding pcie(Host& h);
Finding thermal(Host& h);
Finding mig(Host& h);
Finding driver(Host& h);
Finding libcuda(Host& h);
Finding driver_cuda(Host& h);
Finding cuda_link(Host& h);
Finding toolkit(Host& h);
Finding compiler(Host& h);
Finding loader(Host& h);
Finding cudnn(Host& h);
Finding environment(Host& h);
Finding container(Host& h);
Finding wsl(Host& h);
Finding frameworks(Host& h);
Finding self(Host& h);

// Small helpers the probes share.

/// "GPU 0 (NVIDIA A100-SXM4-40GB)"
std::string gpu_label(std::size_t index, const std::string& name);
/// 86 -> "sm_86"; 86 -> "8.6" with dotted
std::string sm(unsigned cc);
std::string cc_dotted(unsigned cc);
/// The CUDA major.minor a version number of the runtime API means: 11080 -> 11.8.
std::string cuda_from_int(long long v);
/// cuDNN's version number: 8 -> major*1000, 9 on -> major*10000 (+ minor*100 + patch).
std::string cudnn_from_int(long long v);
/// Joins with ", ".
std::string join(const std::vector<std::string>& parts, std::string_view sep = ", ");
/// The library folder of a toolkit prefix (lib64, else lib).
std::string lib_dir(Host& h, const std::string& prefix);

} // namespace cudaenv::doctor::checks
