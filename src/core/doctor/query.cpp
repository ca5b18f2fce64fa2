#include "query.hpp"

#include <dlfcn.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cudaenv::doctor {

namespace {

// NVML's C interface, as nvml.h declares it (only what the doctor calls).
using nvmlDevice_t = void*;
constexpr int k_nvml_success = 0;
constexpr unsigned k_nvml_temperature_gpu = 0;
constexpr unsigned k_nvml_threshold_slowdown = 1;

struct NvmlPciInfo { // nvmlPciInfo_t
    char bus_id_legacy[16];
    unsigned domain;
    unsigned bus;
    unsigned device;
    unsigned pci_device_id;
    unsigned pci_subsystem_id;
    char bus_id[32];
};

struct NvmlGpuFabricInfo { // nvmlGpuFabricInfo_t (R525 on): the GPU's NVLink fabric registration
    unsigned char cluster_uuid[16];
    int status; ///< an nvmlReturn_t; meaningful once state is completed
    unsigned clique_id;
    unsigned char state; ///< 0 not supported, 1 not started, 2 in progress, 3 completed
};

template <typename F> F sym(void* h, const char* name) {
    return reinterpret_cast<F>(::dlsym(h, name));
}

void query_nvml(void* h, std::ostream& out) {
    auto init = sym<int (*)()>(h, "nvmlInit_v2");
    if (!init) {
        init = sym<int (*)()>(h, "nvmlInit");
    }
    auto error_string = sym<const char* (*)(int)>(h, "nvmlErrorString");
    if (!init) {
        out << "error=nvmlInit_v2 is missing\n";
        return;
    }
    if (int rc = init(); rc != k_nvml_success) {
        out << "error=nvmlInit failed: " << (error_string ? error_string(rc) : "code") << " (" << rc
            << ")\ninit_code=" << rc << "\n";
        return;
    }
    char buf[256] = {};
    if (auto f = sym<int (*)(char*, unsigned)>(h, "nvmlSystemGetDriverVersion");
        f && f(buf, sizeof buf) == k_nvml_success) {
        out << "driver_version=" << buf << "\n";
    }
    int cuda = 0;
    if (auto f = sym<int (*)(int*)>(h, "nvmlSystemGetCudaDriverVersion_v2");
        f && f(&cuda) == k_nvml_success) {
        out << "cuda_driver_version=" << cuda << "\n";
    }
    unsigned count = 0;
    auto get_count = sym<int (*)(unsigned*)>(h, "nvmlDeviceGetCount_v2");
    auto by_index = sym<int (*)(unsigned, nvmlDevice_t*)>(h, "nvmlDeviceGetHandleByIndex_v2");
    if (!get_count || !by_index || get_count(&count) != k_nvml_success) {
        out << "gpu_count=0\n";
        return;
    }
    out << "gpu_count=" << count << "\n";
    auto name = sym<int (*)(nvmlDevice_t, char*, unsigned)>(h, "nvmlDeviceGetName");
    auto pci = sym<int (*)(nvmlDevice_t, NvmlPciInfo*)>(h, "nvmlDeviceGetPciInfo_v3");
    auto cc = sym<int (*)(nvmlDevice_t, int*, int*)>(h, "nvmlDeviceGetCudaComputeCapability");
    auto mig = sym<int (*)(nvmlDevice_t, unsigned*, unsigned*)>(h, "nvmlDeviceGetMigMode");
    auto mig_max = sym<int (*)(nvmlDevice_t, unsigned*)>(h, "nvmlDeviceGetMaxMigDeviceCount");
    auto mig_at = sym<int (*)(nvmlDevice_t, unsigned, nvmlDevice_t*)>(
        h, "nvmlDeviceGetMigDeviceHandleByIndex");
    auto temp = sym<int (*)(nvmlDevice_t, unsigned, unsigned*)>(h, "nvmlDeviceGetTemperature");
    auto threshold =
        sym<int (*)(nvmlDevice_t, unsigned, unsigned*)>(h, "nvmlDeviceGetTemperatureThreshold");
    auto persistence = sym<int (*)(nvmlDevice_t, unsigned*)>(h, "nvmlDeviceGetPersistenceMode");
    // (device, error type: 1 uncorrected, counter: 0 volatile / 1 aggregate, count)
    auto ecc = sym<int (*)(nvmlDevice_t, unsigned, unsigned, unsigned long long*)>(
        h, "nvmlDeviceGetTotalEccErrors");
    auto remapped = sym<int (*)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*)>(
        h, "nvmlDeviceGetRemappedRows");
    auto retired_pending =
        sym<int (*)(nvmlDevice_t, unsigned*)>(h, "nvmlDeviceGetRetiredPagesPendingStatus");
    auto fabric = sym<int (*)(nvmlDevice_t, NvmlGpuFabricInfo*)>(h, "nvmlDeviceGetGpuFabricInfo");
    auto reasons = sym<int (*)(nvmlDevice_t, unsigned long long*)>(
        h, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!reasons) {
        reasons = sym<int (*)(nvmlDevice_t, unsigned long long*)>(
            h, "nvmlDeviceGetCurrentClocksThrottleReasons");
    }
    for (unsigned i = 0; i < count && i < 64; ++i) {
        nvmlDevice_t dev = nullptr;
        if (by_index(i, &dev) != k_nvml_success) {
            continue;
        }
        std::string k = "gpu." + std::to_string(i) + ".";
        if (name && name(dev, buf, sizeof buf) == k_nvml_success) {
            out << k << "name=" << buf << "\n";
        }
        NvmlPciInfo info{};
        if (pci && pci(dev, &info) == k_nvml_success) {
            info.bus_id[sizeof info.bus_id - 1] = '\0';
            out << k << "bus_id=" << info.bus_id << "\n";
        }
        int major = 0, minor = 0;
        if (cc && cc(dev, &major, &minor) == k_nvml_success) {
            out << k << "cc=" << major << "." << minor << "\n";
        }
        unsigned current = 0, pending = 0;
        if (mig && mig(dev, &current, &pending) == k_nvml_success) {
            out << k << "mig_current=" << current << "\n" << k << "mig_pending=" << pending << "\n";
            unsigned max = 0;
            if (current && mig_max && mig_at && mig_max(dev, &max) == k_nvml_success) {
                unsigned n = 0;
                for (unsigned j = 0; j < max && j < 64; ++j) {
                    nvmlDevice_t m = nullptr;
                    if (mig_at(dev, j, &m) == k_nvml_success && name &&
                        name(m, buf, sizeof buf) == k_nvml_success) {
                        out << k << "mig." << n++ << "=" << buf << "\n";
                    }
                }
            }
        }
        unsigned t = 0;
        if (temp && temp(dev, k_nvml_temperature_gpu, &t) == k_nvml_success) {
            out << k << "temperature=" << t << "\n";
        }
        if (threshold && threshold(dev, k_nvml_threshold_slowdown, &t) == k_nvml_success) {
            out << k << "slowdown_temperature=" << t << "\n";
        }
        unsigned long long r = 0;
        if (reasons && reasons(dev, &r) == k_nvml_success) {
            out << k << "throttle_reasons=" << r << "\n";
        }
        unsigned state = 0;
        if (persistence && persistence(dev, &state) == k_nvml_success) {
            out << k << "persistence=" << state << "\n";
        }
        unsigned long long n = 0;
        if (ecc && ecc(dev, 1, 0, &n) == k_nvml_success) {
            out << k << "ecc_uncorrected_volatile=" << n << "\n";
        }
        if (ecc && ecc(dev, 1, 1, &n) == k_nvml_success) {
            out << k << "ecc_uncorrected_aggregate=" << n << "\n";
        }
        unsigned corr = 0, unc = 0, pending_remap = 0, failed = 0;
        if (remapped && remapped(dev, &corr, &unc, &pending_remap, &failed) == k_nvml_success) {
            out << k << "remapped_rows=" << corr + unc << "\n"
                << k << "remap_pending=" << pending_remap << "\n"
                << k << "remap_failed=" << failed << "\n";
        } else if (retired_pending && retired_pending(dev, &state) == k_nvml_success) {
            out << k << "retired_pages_pending=" << state << "\n";
        }
        NvmlGpuFabricInfo fi{};
        if (fabric && fabric(dev, &fi) == k_nvml_success && fi.state != 0) {
            out << k << "fabric_state=" << static_cast<unsigned>(fi.state) << "\n"
                << k << "fabric_status=" << fi.status << "\n";
        }
    }
    if (auto shutdown = sym<int (*)()>(h, "nvmlShutdown")) {
        shutdown();
    }
}

/// The smoke test's kernel: out[i] = 2i + 1 for i < n. PTX for sm_50, which the driver compiles
/// for whatever GPU it has (checked with CUDA 13's ptxas for sm_80 and sm_100).
constexpr const char* k_smoke_ptx = ".version 6.0\n"
                                    ".target sm_50\n"
                                    ".address_size 64\n"
                                    "\n"
                                    ".visible .entry cudaenv_smoke(\n"
                                    "    .param .u64 out,\n"
                                    "    .param .u32 n\n"
                                    ")\n"
                                    "{\n"
                                    "    .reg .pred %p;\n"
                                    "    .reg .b32 %r<8>;\n"
                                    "    .reg .b64 %rd<4>;\n"
                                    "\n"
                                    "    ld.param.u64 %rd1, [out];\n"
                                    "    ld.param.u32 %r1, [n];\n"
                                    "    mov.u32 %r2, %ctaid.x;\n"
                                    "    mov.u32 %r3, %ntid.x;\n"
                                    "    mov.u32 %r4, %tid.x;\n"
                                    "    mad.lo.s32 %r5, %r2, %r3, %r4;\n"
                                    "    setp.ge.u32 %p, %r5, %r1;\n"
                                    "    @%p bra DONE;\n"
                                    "    cvta.to.global.u64 %rd2, %rd1;\n"
                                    "    mul.wide.u32 %rd3, %r5, 4;\n"
                                    "    add.s64 %rd2, %rd2, %rd3;\n"
                                    "    shl.b32 %r6, %r5, 1;\n"
                                    "    add.s32 %r7, %r6, 1;\n"
                                    "    st.global.u32 [%rd2], %r7;\n"
                                    "DONE:\n"
                                    "    ret;\n"
                                    "}\n";

constexpr unsigned k_smoke_n = 4096;

/// `doctor --deep`: on every device, through the driver API only (no nvcc, no runtime): the
/// primary context, the PTX loaded (JIT-compiled by the driver), the kernel launched, its output
/// copied back and checked, and how long that took.
void query_smoke(void* h, std::ostream& out) {
    using Dev = int;
    using Ptr = unsigned long long;
    auto init = sym<int (*)(unsigned)>(h, "cuInit");
    auto count = sym<int (*)(int*)>(h, "cuDeviceGetCount");
    auto get = sym<int (*)(Dev*, int)>(h, "cuDeviceGet");
    auto name = sym<int (*)(char*, int, Dev)>(h, "cuDeviceGetName");
    auto retain = sym<int (*)(void**, Dev)>(h, "cuDevicePrimaryCtxRetain");
    auto release = sym<int (*)(Dev)>(h, "cuDevicePrimaryCtxRelease_v2");
    auto set_current = sym<int (*)(void*)>(h, "cuCtxSetCurrent");
    auto load = sym<int (*)(void**, const void*)>(h, "cuModuleLoadData");
    auto unload = sym<int (*)(void*)>(h, "cuModuleUnload");
    auto function = sym<int (*)(void**, void*, const char*)>(h, "cuModuleGetFunction");
    auto alloc = sym<int (*)(Ptr*, std::size_t)>(h, "cuMemAlloc_v2");
    auto free_mem = sym<int (*)(Ptr)>(h, "cuMemFree_v2");
    auto launch = sym<int (*)(void*,
                              unsigned,
                              unsigned,
                              unsigned,
                              unsigned,
                              unsigned,
                              unsigned,
                              unsigned,
                              void*,
                              void**,
                              void**)>(h, "cuLaunchKernel");
    auto sync = sym<int (*)()>(h, "cuCtxSynchronize");
    auto copy = sym<int (*)(void*, Ptr, std::size_t)>(h, "cuMemcpyDtoH_v2");
    auto error_name = sym<int (*)(int, const char**)>(h, "cuGetErrorName");
    if (!init || !count || !get || !retain || !release || !set_current || !load || !unload ||
        !function || !alloc || !free_mem || !launch || !sync || !copy) {
        out << "error=this libcuda lacks a driver API function the smoke test calls\n";
        return;
    }
    auto said = [&](int rc) {
        const char* n = nullptr;
        return error_name && error_name(rc, &n) == 0 && n ? std::string(n) : std::to_string(rc);
    };
    int rc = init(0);
    out << "init_rc=" << rc << "\ninit_error=" << said(rc) << "\n";
    int devices = 0;
    if (rc != 0 || count(&devices) != 0) {
        return;
    }
    out << "device_count=" << devices << "\n";
    for (int i = 0; i < devices; ++i) {
        std::string k = "dev." + std::to_string(i) + ".";
        Dev dev = 0;
        char buf[256] = {0};
        if (get(&dev, i) == 0 && name && name(buf, sizeof buf, dev) == 0) {
            out << k << "name=" << buf << "\n";
        }
        auto started = std::chrono::steady_clock::now();
        void* ctx = nullptr;
        void* module = nullptr;
        void* kernel = nullptr;
        Ptr mem = 0;
        std::vector<unsigned> host(k_smoke_n, 0);
        unsigned n = k_smoke_n;
        void* params[] = {&mem, &n};
        const char* step = nullptr;
        if ((rc = retain(&ctx, dev)) != 0) {
            step = "cuDevicePrimaryCtxRetain";
        } else if ((rc = set_current(ctx)) != 0) {
            step = "cuCtxSetCurrent";
        } else if ((rc = load(&module, k_smoke_ptx)) != 0) {
            step = "cuModuleLoadData";
        } else if ((rc = function(&kernel, module, "cudaenv_smoke")) != 0) {
            step = "cuModuleGetFunction";
        } else if ((rc = alloc(&mem, n * sizeof(unsigned))) != 0) {
            step = "cuMemAlloc";
        } else if ((rc = launch(kernel, n / 256, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr)) !=
                   0) {
            step = "cuLaunchKernel";
        } else if ((rc = sync()) != 0) {
            step = "cuCtxSynchronize";
        } else if ((rc = copy(host.data(), mem, n * sizeof(unsigned))) != 0) {
            step = "cuMemcpyDtoH";
        }
        auto ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                .count();
        if (step) {
            out << k << "step=" << step << "\n"
                << k << "rc=" << rc << "\n"
                << k << "error=" << said(rc) << "\n";
        } else {
            unsigned wrong = 0;
            for (unsigned j = 0; j < n; ++j) {
                wrong += host[j] != 2 * j + 1 ? 1u : 0u;
            }
            out << k << "checked=" << n << "\n" << k << "wrong=" << wrong << "\n";
        }
        out << k << "ms=" << static_cast<long long>(ms * 1000) / 1000.0 << "\n";
        if (mem) {
            free_mem(mem);
        }
        if (module) {
            unload(module);
        }
        if (ctx) {
            release(dev);
        }
    }
}

} // namespace

int query_library_here(std::string_view kind, const char* path, std::ostream& out) {
    void* h = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = ::dlerror();
        out << "loaded=0\nerror=" << (e ? e : "dlopen failed") << "\n";
        return 3;
    }
    out << "loaded=1\n";
    if (kind == "cudart") {
        if (auto f = sym<int (*)(int*)>(h, "cudaRuntimeGetVersion")) {
            int v = 0;
            int rc = f(&v);
            out << "rc=" << rc << "\nversion=" << v << "\n";
        } else {
            out << "error=cudaRuntimeGetVersion is missing\n";
        }
    } else if (kind == "cudnn") {
        if (auto f = sym<std::size_t (*)()>(h, "cudnnGetVersion")) {
            out << "version=" << f() << "\n";
        } else {
            out << "error=cudnnGetVersion is missing\n";
        }
        if (auto f = sym<std::size_t (*)()>(h, "cudnnGetCudartVersion")) {
            out << "cudart_version=" << f() << "\n";
        }
    } else if (kind == "cuda") {
        auto init = sym<int (*)(unsigned)>(h, "cuInit");
        auto version = sym<int (*)(int*)>(h, "cuDriverGetVersion");
        if (!init || !version) {
            out << "error=cuInit or cuDriverGetVersion is missing\n";
        } else {
            int v = 0;
            int rc = version(&v);
            out << "version_rc=" << rc << "\nversion=" << v << "\n";
            out << "init_rc=" << init(0) << "\n";
        }
    } else if (kind == "nvml") {
        query_nvml(h, out);
    } else if (kind == "smoke") {
        query_smoke(h, out);
    } else {
        out << "error=unknown query kind\n";
    }
    out.flush();
    // No dlclose: driver libraries are not made to be unloaded, and this process ends here.
    return 0;
}

} // namespace cudaenv::doctor
