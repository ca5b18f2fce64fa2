// One function per probe, one probe per file (the table that orders them is in doctor.cpp).
#pragma once

#include "../../text.hpp"
#include "../doctor.hpp"
#include "../host.hpp"

#include <map>
#include <string>
#include <string_view>

namespace cudaenv::doctor::checks {

Finding gpu(Host& h);
Finding arch(Host& h);
Finding pcie(Host& h);
Finding thermal(Host& h);
Finding mig(Host& h);
Finding xid(Host& h);
Finding fabric(Host& h);
Finding cdi(Host& h);
Finding health(Host& h);
Finding grace(Host& h);
Finding smoke(Host& h);
Finding driver(Host& h);
Finding libcuda(Host& h);
Finding driver_cuda(Host& h);
Finding compat(Host& h);
Finding cuda_link(Host& h);
Finding toolkit(Host& h);
Finding integrity(Host& h);
Finding compiler(Host& h);
Finding loader(Host& h);
Finding cudnn(Host& h);
Finding environment(Host& h);
Finding container(Host& h);
Finding container_compat(Host& h);
Finding wsl(Host& h);
Finding frameworks(Host& h);
Finding advisories(Host& h);
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
/// ASCII lowercase.
std::string lower(std::string s);
/// A loader configuration entry about CUDA, cuDNN or NVIDIA (its file or folder names one).
bool gpu_related(const ConfEntry& c);
using cudaenv::join; // core/text.hpp
/// `section.key` -> value of a TOML file's plain `key = value` lines under `[section]` headers
/// (quotes and trailing comments taken off; arrays of tables skipped): enough for the NVIDIA
/// Container Toolkit's config.toml, not a TOML parser.
std::map<std::string, std::string> toml_keys(std::string_view text);
/// The library folder of a toolkit prefix (lib64, else lib).
std::string lib_dir(Host& h, const std::string& prefix);

/// `path` is `dir` or inside it (both as strings: real paths, or machine paths).
bool under_or_at(const std::string& path, const std::string& dir);

/// A Jetson's integrated GPU as the doctor names it: "Jetson Orin integrated GPU
/// (nvidia,tegra234)"; empty on another machine.
std::string jetson_gpu_name(const sys::HostMachine& m);
/// Its compute capability by SoC (Orin 8.7, Thor 11.0, as 87 and 110); 0 when not known.
unsigned jetson_compute_capability(const sys::HostMachine& m);

/// How the compiler probe asks a host compiler its version (gcc: the full one).
std::vector<std::string> compiler_version_command(const std::string& exe, bool gcc);
/// clang's version read from its own layout, without running it (`clang -dumpversion` is the
/// doctor's slowest child: ~40 ms). clang finds its resource folder at <its real folder>/../lib/
/// clang/<version>, and clang 15 and older name that folder with the very string -dumpversion
/// prints (Debian's /usr/lib/llvm-14/lib/clang/14.0.6). None -- so clang is asked -- when the
/// file is not a clang (a ccache link), the folder is missing or not alone, or it names only a
/// major version (clang 16 and later).
std::optional<Version> clang_version_from_layout(const Files& files, const std::string& exe);

/// Starts, all at once, the remembered children a full run will ask (Answers::prefetch): `ldconfig
/// -p`, the toolkit's nvcc, the host compilers, its libcudart and libcudnn queries. The probes
/// then take their answers in their order; a child started for nothing costs nothing but itself.
void start_children(Host& h);

/// The manifests' GPU whose model name (without "NVIDIA "/"GeForce ") a PCI or NVML name contains;
/// the longest such wins ("RTX 3060 Ti" over "RTX 3060"). Null when none does.
const manifest::Gpu* gpu_model(Host& h, const std::string& name);

/// The GPUs on the PCI bus NVIDIA's forward compatibility does not run on (CUDA fails on them
/// with error 804 through a compat libcuda), by gpu-support.json's `forward_compat` marks ("NVIDIA
/// GeForce RTX 4090 (0000:01:00.0)"); an id the marks do not cover (pre-Turing) counts only when
/// its name says GeForce, TITAN or Quadro -- a V100 is a data-center part.
std::vector<std::string> gpus_without_forward_compat(Host& h);

/// The version a CUDA library file says it is: cuDNN and the runtime are asked in the query
/// child, others (and a runtime without a driver) are read from the real file's name
/// (libcublas.so.12.4.5.8 -> 12.4.5.8). Empty when neither tells.
std::string library_version(Host& h, const std::string& soname, const std::string& path);
/// "cuDNN", "the CUDA runtime", "cuBLAS", else the SONAME.
std::string library_label(const std::string& soname);
/// The fix when programs load `p` instead of the selected toolkit's copy: what puts that copy
/// first (LD_LIBRARY_PATH, a package, a conf file, a copy nobody owns) and how to undo it, or
/// `cudaenv exec`.
std::string wrong_copy_fix(Host& h, const LoaderPick& p);

} // namespace cudaenv::doctor::checks
