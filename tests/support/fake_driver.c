/* Scripted stand-ins for the driver's user-space libraries, built by the doctor tests:
 *
 *   gcc -shared -fPIC -DFAKE_NVML -Wl,-soname,libnvidia-ml.so.1 -o libnvidia-ml.so.1 fake_driver.c
 *   gcc -shared -fPIC -DFAKE_CUDA -Wl,-soname,libcuda.so.1      -o libcuda.so.1      fake_driver.c
 *
 * Both read fake_gpu.conf next to themselves (found with dladdr), one setting per line:
 *   driver 535.104.05         nvmlSystemGetDriverVersion
 *   cuda 12020                cuDriverGetVersion, nvmlSystemGetCudaDriverVersion_v2
 *   init 0                    what cuInit returns (34: stub, 100: no device)
 *   nvml_init 0               what nvmlInit_v2 returns
 *   gpu NAME...               starts a GPU; the lines below apply to it
 *   bus 00000000:65:00.0      cc 8 0      mig CURRENT PENDING      mig_instance NAME...
 *   temp CURRENT SLOWDOWN     throttle REASONS
 *   persistence 0|1           ecc VOLATILE AGGREGATE   remap PENDING FAILED   retired_pending 0|1
 *   fabric STATE STATUS       nvmlDeviceGetGpuFabricInfo (3 0: registered; absent: not supported)
 *   smoke ok|wrong|launch RC  doctor --deep's kernel: computed right, wrong, or cuLaunchKernel
 * fails The driver API the smoke test calls runs the kernel on the CPU: device memory is host
 * memory. The NVML and CUDA entry points have their real names and C signatures.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 8
#define MAX_MIG 8

struct gpu {
    char name[96];
    char bus[32];
    int cc_major, cc_minor, has_cc;
    int mig_supported, mig_current, mig_pending;
    int mig_count;
    char mig_names[MAX_MIG][96];
    unsigned temp, slowdown;
    int has_temp;
    unsigned long long throttle;
    int has_throttle;
    unsigned persistence;
    int has_persistence;
    unsigned long long ecc_volatile, ecc_aggregate;
    int has_ecc;
    unsigned remap_pending, remap_failed;
    int has_remap;
    unsigned retired_pending;
    int has_retired;
    unsigned fabric_state;
    int fabric_status, has_fabric;
};

static struct {
    int loaded;
    char driver[64];
    int cuda;
    int init_rc;
    int nvml_init_rc;
    char smoke[32];
    int launch_rc;
    int count;
    struct gpu gpus[MAX_GPUS];
} conf;

static void load(void) {
    if (conf.loaded)
        return;
    conf.loaded = 1;
    Dl_info info;
    if (!dladdr((void*)&load, &info) || !info.dli_fname)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s", info.dli_fname);
    char* slash = strrchr(path, '/');
    if (!slash)
        return;
    snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "fake_gpu.conf");
    FILE* f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    struct gpu* g = NULL;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char* rest = strchr(line, ' ');
        if (!rest)
            continue;
        *rest++ = 0;
        if (!strcmp(line, "driver"))
            snprintf(conf.driver, sizeof conf.driver, "%s", rest);
        else if (!strcmp(line, "cuda"))
            conf.cuda = atoi(rest);
        else if (!strcmp(line, "init"))
            conf.init_rc = atoi(rest);
        else if (!strcmp(line, "nvml_init"))
            conf.nvml_init_rc = atoi(rest);
        else if (!strcmp(line, "smoke"))
            sscanf(rest, "%31s %d", conf.smoke, &conf.launch_rc);
        else if (!strcmp(line, "gpu") && conf.count < MAX_GPUS) {
            g = &conf.gpus[conf.count++];
            snprintf(g->name, sizeof g->name, "%s", rest);
        } else if (g && !strcmp(line, "bus"))
            snprintf(g->bus, sizeof g->bus, "%s", rest);
        else if (g && !strcmp(line, "cc"))
            g->has_cc = sscanf(rest, "%d %d", &g->cc_major, &g->cc_minor) == 2;
        else if (g && !strcmp(line, "mig"))
            g->mig_supported = sscanf(rest, "%d %d", &g->mig_current, &g->mig_pending) == 2;
        else if (g && !strcmp(line, "mig_instance") && g->mig_count < MAX_MIG)
            snprintf(g->mig_names[g->mig_count++], 96, "%s", rest);
        else if (g && !strcmp(line, "temp"))
            g->has_temp = sscanf(rest, "%u %u", &g->temp, &g->slowdown) == 2;
        else if (g && !strcmp(line, "throttle"))
            g->has_throttle = sscanf(rest, "%llx", &g->throttle) == 1;
        else if (g && !strcmp(line, "persistence"))
            g->has_persistence = sscanf(rest, "%u", &g->persistence) == 1;
        else if (g && !strcmp(line, "ecc"))
            g->has_ecc = sscanf(rest, "%llu %llu", &g->ecc_volatile, &g->ecc_aggregate) == 2;
        else if (g && !strcmp(line, "remap"))
            g->has_remap = sscanf(rest, "%u %u", &g->remap_pending, &g->remap_failed) == 2;
        else if (g && !strcmp(line, "retired_pending"))
            g->has_retired = sscanf(rest, "%u", &g->retired_pending) == 1;
        else if (g && !strcmp(line, "fabric"))
            g->has_fabric = sscanf(rest, "%u %d", &g->fabric_state, &g->fabric_status) == 2;
    }
    fclose(f);
}

#ifdef FAKE_CUDA
int cuDriverGetVersion(int* v) {
    load();
    *v = conf.cuda;
    return 0;
}

int cuInit(unsigned flags) {
    (void)flags;
    load();
    return conf.init_rc;
}

int cuGetErrorName(int rc, const char** s) {
    *s = rc == 34    ? "CUDA_ERROR_STUB_LIBRARY"
         : rc == 100 ? "CUDA_ERROR_NO_DEVICE"
         : rc == 719 ? "CUDA_ERROR_LAUNCH_FAILED"
         : rc == 802 ? "CUDA_ERROR_SYSTEM_NOT_READY"
                     : "CUDA_ERROR_UNKNOWN";
    return 0;
}

int cuDeviceGetCount(int* n) {
    load();
    *n = conf.count;
    return 0;
}

int cuDeviceGet(int* dev, int i) {
    *dev = i;
    return i < conf.count ? 0 : 101;
}

int cuDeviceGetName(char* buf, int len, int dev) {
    snprintf(buf, (size_t)len, "%s", conf.gpus[dev].name);
    return 0;
}

int cuDevicePrimaryCtxRetain(void** ctx, int dev) {
    *ctx = &conf.gpus[dev];
    return 0;
}

int cuDevicePrimaryCtxRelease_v2(int dev) {
    (void)dev;
    return 0;
}

int cuCtxSetCurrent(void* ctx) {
    (void)ctx;
    return 0;
}

static int module_token;

int cuModuleLoadData(void** mod, const void* image) {
    /* the driver would JIT the PTX: here, it must at least be the kernel the doctor sends */
    if (!strstr((const char*)image, ".entry cudaenv_smoke"))
        return 218;
    *mod = &module_token;
    return 0;
}

int cuModuleUnload(void* mod) {
    (void)mod;
    return 0;
}

int cuModuleGetFunction(void** f, void* mod, const char* name) {
    (void)mod;
    *f = &module_token;
    return strcmp(name, "cudaenv_smoke") ? 500 : 0;
}

int cuMemAlloc_v2(unsigned long long* p, size_t n) {
    *p = (unsigned long long)(size_t)calloc(1, n);
    return 0;
}

int cuMemFree_v2(unsigned long long p) {
    free((void*)(size_t)p);
    return 0;
}

int cuLaunchKernel(void* f,
                   unsigned gx,
                   unsigned gy,
                   unsigned gz,
                   unsigned bx,
                   unsigned by,
                   unsigned bz,
                   unsigned shared,
                   void* stream,
                   void** params,
                   void** extra) {
    (void)f;
    (void)gy;
    (void)gz;
    (void)by;
    (void)bz;
    (void)shared;
    (void)stream;
    (void)extra;
    if (!strcmp(conf.smoke, "launch"))
        return conf.launch_rc;
    unsigned* out = (unsigned*)(size_t) * (unsigned long long*)params[0];
    unsigned n = *(unsigned*)params[1];
    for (unsigned i = 0; i < gx * bx && i < n; ++i)
        out[i] = 2 * i + 1 + (!strcmp(conf.smoke, "wrong") && i % 7 == 0 ? 1 : 0);
    return 0;
}

int cuCtxSynchronize(void) {
    return 0;
}

int cuMemcpyDtoH_v2(void* dst, unsigned long long src, size_t n) {
    memcpy(dst, (void*)(size_t)src, n);
    return 0;
}
#endif

#ifdef FAKE_NVML
typedef struct {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} pci_info;

/* a device handle: a GPU, or one of its MIG instances (index >= 100) */
struct handle {
    int gpu;
    int mig;
};
static struct handle handles[MAX_GPUS * (MAX_MIG + 1)];

static struct handle* handle_for(int gpu, int mig) {
    struct handle* h = &handles[gpu * (MAX_MIG + 1) + (mig + 1)];
    h->gpu = gpu;
    h->mig = mig;
    return h;
}

int nvmlInit_v2(void) {
    load();
    return conf.nvml_init_rc;
}

int nvmlShutdown(void) {
    return 0;
}

const char* nvmlErrorString(int rc) {
    return rc == 9    ? "Driver Not Loaded"
           : rc == 18 ? "Driver/library version mismatch"
                      : "Unknown Error";
}

int nvmlSystemGetDriverVersion(char* buf, unsigned len) {
    snprintf(buf, len, "%s", conf.driver);
    return 0;
}

int nvmlSystemGetCudaDriverVersion_v2(int* v) {
    *v = conf.cuda;
    return 0;
}

int nvmlDeviceGetCount_v2(unsigned* n) {
    *n = (unsigned)conf.count;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** dev) {
    if ((int)i >= conf.count)
        return 2;
    *dev = handle_for((int)i, -1);
    return 0;
}

int nvmlDeviceGetName(void* dev, char* buf, unsigned len) {
    struct handle* h = dev;
    struct gpu* g = &conf.gpus[h->gpu];
    snprintf(buf, len, "%s", h->mig >= 0 ? g->mig_names[h->mig] : g->name);
    return 0;
}

int nvmlDeviceGetPciInfo_v3(void* dev, pci_info* p) {
    struct handle* h = dev;
    memset(p, 0, sizeof *p);
    snprintf(p->bus_id, sizeof p->bus_id, "%s", conf.gpus[h->gpu].bus);
    return 0;
}

int nvmlDeviceGetCudaComputeCapability(void* dev, int* major, int* minor) {
    struct gpu* g = &conf.gpus[((struct handle*)dev)->gpu];
    if (!g->has_cc)
        return 3;
    *major = g->cc_major;
    *minor = g->cc_minor;
    return 0;
}

int nvmlDeviceGetMigMode(void* dev, unsigned* current, unsigned* pending) {
    struct gpu* g = &conf.gpus[((struct handle*)dev)->gpu];
    if (!g->mig_supported)
        return 3; /* NVML_ERROR_NOT_SUPPORTED */
    *current = (unsigned)g->mig_current;
    *pending = (unsigned)g->mig_pending;
    return 0;
}

int nvmlDeviceGetMaxMigDeviceCount(void* dev, unsigned* n) {
    (void)dev;
    *n = MAX_MIG;
    return 0;
}

int nvmlDeviceGetMigDeviceHandleByIndex(void* dev, unsigned i, void** mig) {
    struct handle* h = dev;
    if ((int)i >= conf.gpus[h->gpu].mig_count)
        return 6; /* NVML_ERROR_NOT_FOUND */
    *mig = handle_for(h->gpu, (int)i);
    return 0;
}

int nvmlDeviceGetTemperature(void* dev, unsigned sensor, unsigned* t) {
    struct gpu* g = &conf.gpus[((struct handle*)dev)->gpu];
    if (sensor != 0 || !g->has_temp)
        return 3;
    *t = g->temp;
    return 0;
}

int nvmlDeviceGetTemperatureThreshold(void* dev, unsigned kind, unsigned* t) {
    struct gpu* g = &conf.gpus[((struct handle*)dev)->gpu];
    if (kind != 1 || !g->has_temp)
        return 3;
    *t = g->slowdown;
    return 0;
}

int nvmlDeviceGetCurrentClocksEventReasons(void* dev, unsigned long long* r) {
    struct gpu* g = &conf.gpus[((struct handle*)dev)->gpu];
    if (!g->has_throttle)
        return 3;
    *r = g->throttle;
    return 0;
}

/* 3 (NVML_ERROR_NOT_SUPPORTED) where the conf says nothing, as a GPU without the feature */
int nvmlDeviceGetPersistenceMode(void* dev, unsigned* mode) {
    struct gpu* g = &conf.gpus[((struct handle*)dev)->gpu];
    if (!g->has_persistence)
        return 3;
    *mode = g->persistence;
    return 0;
}

int nvmlDeviceGetTotalEccErrors(void* dev, unsigned type, unsigned counter, unsigned long long* n) {
    struct gpu* g = &conf.gpus[((struct handle*)dev)->gpu];
    if (!g->has_ecc || type != 1)
        return 3;
    *n = counter == 0 ? g->ecc_volatile : g->ecc_aggregate;
    return 0;
}

int nvmlDeviceGetRemappedRows(
    void* dev, unsigned* corr, unsigned* unc, unsigned* pending, unsigned* failed) {
    struct gpu* g = &conf.gpus[((struct handle*)dev)->gpu];
    if (!g->has_remap)
        return 3;
    *corr = 0;
    *unc = g->remap_pending;
    *pending = g->remap_pending;
    *failed = g->remap_failed;
    return 0;
}

int nvmlDeviceGetRetiredPagesPendingStatus(void* dev, unsigned* pending) {
    struct gpu* g = &conf.gpus[((struct handle*)dev)->gpu];
    if (!g->has_retired)
        return 3;
    *pending = g->retired_pending;
    return 0;
}

/* nvmlGpuFabricInfo_t as nvml.h lays it out (R525 on) */
struct fabric_info {
    unsigned char cluster_uuid[16];
    int status;
    unsigned clique_id;
    unsigned char state;
};

int nvmlDeviceGetGpuFabricInfo(void* dev, struct fabric_info* info) {
    struct gpu* g = &conf.gpus[((struct handle*)dev)->gpu];
    memset(info, 0, sizeof *info);
    if (!g->has_fabric)
        return 3;
    info->state = (unsigned char)g->fabric_state;
    info->status = g->fabric_status;
    return 0;
}

#endif
