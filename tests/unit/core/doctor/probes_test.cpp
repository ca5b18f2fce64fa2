// The doctor's probes against a fixture machine, without root: a sysroot of plain files in a temp
// folder and every child played through the Host's ProcessRunner (ldconfig -p, the
// `__doctor-query` child, nvcc), so no chroot, no real ldconfig and no library is loaded. Each
// test starts from a healthy machine and breaks the one thing it is about.
#include "core/doctor/advisory_subjects.hpp"
#include "core/doctor/answers.hpp"
#include "core/doctor/doctor.hpp"
#include "core/doctor/files.hpp"
#include "core/doctor/host.hpp"
#include "core/doctor/probes/probes.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

namespace cudaenv::doctor {
namespace {

namespace fs = std::filesystem;

sys::ProcessResult exited(int status, std::string out, std::string err = {}) {
    return {status, std::move(out), std::move(err), false};
}

/// A child killed at its deadline.
sys::ProcessResult timed_out() {
    return {137, "", "", true};
}

/// Plays every child the doctor starts. ldconfig prints `ld_cache` (or `ldconfig` when set); the
/// query child answers from `answers`, by kind and the machine path of the file it was given, and
/// like the real child cannot load a file it has no answer for; other programs answer from
/// `programs` by machine path. Every call is kept.
class PlayedChildren : public sys::ProcessRunner {
  public:
    fs::path sysroot;
    std::string ld_cache;
    std::optional<sys::ProcessResult> ldconfig;
    std::map<std::string, sys::ProcessResult> answers; ///< "kind /machine/path" -> answer
    std::map<std::string, sys::ProcessResult> programs;
    bool refuse_queries = false; ///< a query child cannot be started (fork fails)
    mutable std::vector<std::vector<std::string>> calls;
    mutable std::vector<std::chrono::milliseconds> timeouts;

    void answer(const std::string& kind, const std::string& path, std::string lines) {
        play(kind, path, exited(0, std::move(lines)));
    }

    /// The query child for `kind` and `path` ends as `result`.
    void play(const std::string& kind, const std::string& path, sys::ProcessResult result) {
        answers[kind + " " + path] = std::move(result);
    }

    /// The query child for `kind` and `path` cannot load it, as for a path it was never given.
    void forget(const std::string& kind, const std::string& path) {
        answers.erase(kind + " " + path);
    }

    std::string machine(const std::string& real) const {
        auto rel = fs::path(real).lexically_relative(sysroot);
        return rel.empty() || *rel.begin() == ".." ? real : "/" + rel.string();
    }

    Result<sys::ProcessResult> run(const std::vector<std::string>& argv,
                                   const sys::ProcessOptions& o) const override {
        calls.push_back(argv);
        timeouts.push_back(o.timeout);
        if (argv.size() == 4 && argv[1] == "__doctor-query") {
            if (refuse_queries) {
                return Error(ErrorCode::internal, "cannot fork: Resource temporarily unavailable");
            }
            auto it = answers.find(argv[2] + " " + machine(argv[3]));
            if (it == answers.end()) {
                return exited(3, "loaded=0\nerror=" + argv[3] + ": cannot open shared object\n");
            }
            return it->second;
        }
        if (argv[0] == "/sbin/ldconfig") {
            return ldconfig ? *ldconfig : exited(0, ld_cache);
        }
        if (auto it = programs.find(machine(argv[0])); it != programs.end()) {
            return it->second;
        }
        return Error(ErrorCode::internal, "no such program in the fixture: " + argv[0]);
    }

    bool ran(std::string_view what) const {
        for (const auto& c : calls) {
            for (const auto& a : c) {
                if (a == what) {
                    return true;
                }
            }
        }
        return false;
    }
};

constexpr const char* k_lib = "/usr/lib/x86_64-linux-gnu";
constexpr const char* k_cuda = "/usr/local/cuda-12.4";

/// cuDNN 9's libraries, all of which the fixture's toolkit holds.
constexpr std::array<const char*, 8> k_cudnn9_libraries{"libcudnn",
                                                        "libcudnn_graph",
                                                        "libcudnn_engines_precompiled",
                                                        "libcudnn_engines_runtime_compiled",
                                                        "libcudnn_heuristic",
                                                        "libcudnn_ops",
                                                        "libcudnn_cnn",
                                                        "libcudnn_adv"};

/// The NVML answer for the fixture's A100 with `extra` lines for GPU 0.
std::string nvml_with(const std::string& extra) {
    return "loaded=1\ndriver_version=550.54.15\ngpu_count=1\n"
           "gpu.0.name=NVIDIA A100-SXM4-40GB\ngpu.0.bus_id=00000000:65:00.0\n" +
           extra;
}

/// One A100 with driver 550.54.15; CUDA 12.4.1 with cuDNN 9.1.1 at /usr/local/cuda-12.4, linked
/// from /usr/local/cuda and listed by NVIDIA's 988_cuda-12.conf; the cache lists what is there.
class DoctorProbes : public ::testing::Test {
  protected:
    test::TempDir dir;
    fs::path sys = dir.path() / "sys";
    PlayedChildren children;
    std::map<std::string, std::string> env{{"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"}};
    const std::string libcuda = std::string(k_lib) + "/libcuda.so.550.54.15";
    const std::string libnvml = std::string(k_lib) + "/libnvidia-ml.so.1";

    void write(const std::string& machine_path, const std::string& text = {}) {
        fs::path p = sys / fs::path(machine_path).relative_path();
        fs::create_directories(p.parent_path());
        fs::remove(p);
        std::ofstream(p) << text;
    }

    /// A file at `machine_path` holding `text` that its owner may run.
    void executable(const std::string& machine_path, const std::string& text) {
        write(machine_path, text);
        fs::permissions(sys / fs::path(machine_path).relative_path(), fs::perms::owner_all);
    }

    /// An executable at `machine_path` whose run the children play as printing `out`.
    void program(const std::string& machine_path, const std::string& out) {
        executable(machine_path, "#!/bin/sh\n");
        children.programs[machine_path] = exited(0, out);
    }

    /// An NVIDIA device of PCI class `pci_class` in the sysfs folder `machine_dir` (ending in /).
    void pci_device(const std::string& machine_dir,
                    const std::string& pci_class,
                    const std::string& device) {
        write(machine_dir + "vendor", "0x10de\n");
        write(machine_dir + "class", pci_class + "\n");
        write(machine_dir + "device", device + "\n");
    }

    /// The nvidia kernel module not loaded: no /proc/driver/nvidia, no /sys/module/nvidia.
    void unload_driver() {
        remove("/proc/driver/nvidia");
        remove("/sys/module/nvidia");
    }

    /// NVML answers for the fixture's A100 with `extra` lines for GPU 0.
    void nvml_says(const std::string& extra) { children.answer("nvml", libnvml, nvml_with(extra)); }

    void link(const std::string& machine_path, const std::string& target) {
        fs::path p = sys / fs::path(machine_path).relative_path();
        fs::create_directories(p.parent_path());
        fs::remove(p);
        fs::create_symlink(target, p);
    }

    void remove(const std::string& machine_path) {
        fs::remove_all(sys / fs::path(machine_path).relative_path());
    }

    std::string cache_line(const std::string& soname, const std::string& path) {
        return "\t" + soname + " (libc6,x86-64) => " + path + "\n";
    }

    void SetUp() override {
        fs::create_directories(sys);
        sys = fs::canonical(sys);
        children.sysroot = sys;
        // the GPU and the driver
        std::string dev = "/sys/bus/pci/devices/0000:65:00.0/";
        pci_device(dev, "0x030200", "0x20b0");
        write(dev + "subsystem_vendor", "0x10de\n");
        write(dev + "subsystem_device", "0x134f\n");
        write("/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
        write("/proc/version", "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org)\n");
        write("/proc/driver/nvidia/version",
              "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 "
              "UTC 2024\n");
        fs::create_directories(sys / "sys/module/nvidia");
        for (const char* node : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0"}) {
            write(node);
        }
        write(libcuda, "elf");
        link(std::string(k_lib) + "/libcuda.so.1", "libcuda.so.550.54.15");
        write(libnvml, "elf");
        nvml_says("gpu.0.cc=8.0\n");
        children.answer("cuda", libcuda, "loaded=1\nversion_rc=0\nversion=12040\ninit_rc=0\n");
        // the toolkit
        std::string lib64 = std::string(k_cuda) + "/lib64/";
        write(std::string(k_cuda) + "/version.json", R"({"cuda": {"version": "12.4.1"}})");
        program(std::string(k_cuda) + "/bin/nvcc",
                "Cuda compilation tools, release 12.4, V12.4.131\n");
        write(lib64 + "libcudart.so.12.4.127", "elf");
        link(lib64 + "libcudart.so.12", "libcudart.so.12.4.127");
        write(lib64 + "libcublas.so.12", "elf");
        write(std::string(k_cuda) + "/include/cudnn_version.h",
              "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 1\n");
        for (const char* sub : k_cudnn9_libraries) {
            write(lib64 + sub + ".so.9", "elf");
        }
        children.answer(
            "cudart", lib64 + "libcudart.so.12.4.127", "loaded=1\nrc=0\nversion=12040\n");
        children.answer("cudnn",
                        lib64 + "libcudnn.so.9",
                        "loaded=1\nversion=90101\n"
                        "cudart_version=12020\n");
        link("/usr/local/cuda", k_cuda);
        // the loader
        write("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
        write("/etc/ld.so.conf.d/988_cuda-12.conf", lib64 + "\n");
        write("/etc/ld.so.cache", "");
        children.ld_cache = "6 libs found in cache `/etc/ld.so.cache'\n" +
                            cache_line("libcudnn.so.9", lib64 + "libcudnn.so.9") +
                            cache_line("libcudart.so.12", lib64 + "libcudart.so.12") +
                            cache_line("libcublas.so.12", lib64 + "libcublas.so.12") +
                            cache_line("libnvidia-ml.so.1", libnvml) +
                            cache_line("libcuda.so.1", std::string(k_lib) + "/libcuda.so.1");
    }

    HostConfig config() {
        HostConfig c;
        c.sysroot = sys;
        c.env = env;
        c.env["CUDAENV_TODAY"] = "2024-06-01";
        c.cwd = dir.path() / "work";
        c.self_exe = "/opt/cudaenv/bin/cudaenv";
        c.root.dir = dir.path() / "root";
        c.manifests = CUDAENV_TEST_MANIFESTS;
        c.ldconfig = "/sbin/ldconfig";
        c.child_timeout = std::chrono::milliseconds(2500);
        c.processes = &children;
        c.deep = deep;
        return c;
    }

    bool deep = false; ///< doctor --deep

    Finding probe(Finding (*p)(Host&)) {
        Host h(config());
        return p(h);
    }
};

#define EXPECT_STARTS(text, prefix) EXPECT_EQ((text).rfind(prefix, 0), 0u) << (text)

/// The finding's details, one a line, for a failure message.
std::string details_of(const Finding& f) {
    std::string out = "details:";
    for (const auto& d : f.details) {
        out += "\n  " + d;
    }
    return out;
}

/// Whether `line` is one of the finding's details.
::testing::AssertionResult has_detail(const Finding& f, const std::string& line) {
    if (std::find(f.details.begin(), f.details.end(), line) != f.details.end()) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "no detail '" << line << "'; " << details_of(f);
}

/// Whether the finding has one detail only, and it contains `part`.
::testing::AssertionResult one_detail_with(const Finding& f, const std::string& part) {
    if (f.details.size() == 1 && f.details[0].find(part) != std::string::npos) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "not one detail containing '" << part << "'; " << details_of(f);
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST_F(DoctorProbes, AHealthyMachineIsOkEverywhere) {
    struct Want {
        Finding (*probe)(Host&);
        const char* summary;
    };

    for (const auto& [p, summary] :
         std::vector<Want>{{checks::gpu, "1 NVIDIA GPU: NVIDIA A100-SXM4-40GB"},
                           {checks::driver, "driver 550.54.15 loaded;"},
                           {checks::libcuda,
                            "libcuda.so.1 from /usr/lib/x86_64-linux-gnu/libcuda.so.1: the "
                            "driver supports CUDA up to 12.4"},
                           {checks::driver_cuda, "driver 550.54.15 fully supports CUDA 12.4"},
                           {checks::toolkit, "CUDA 12.4 at /usr/local/cuda-12.4"},
                           {checks::loader,
                            "libcudart.so.12, libcudnn.so.9, libcublas.so.12 load from "
                            "/usr/local/cuda-12.4/lib64"},
                           {checks::cudnn,
                            "cuDNN 9.1.1 in /usr/local/cuda-12.4/lib64: header and library "
                            "agree, all 8 libraries present, built for CUDA 12"},
                           {checks::environment, "LD_LIBRARY_PATH, CUDA_HOME"},
                           {checks::cuda_link, "a link to /usr/local/cuda-12.4 (CUDA 12.4.1)"}}) {
        auto f = probe(p);
        EXPECT_EQ(f.status, Status::ok) << summary << ": " << f.summary;
        EXPECT_STARTS(f.summary, summary);
    }
    EXPECT_EQ(probe(checks::container).status, Status::skip);
    EXPECT_EQ(probe(checks::wsl).summary, "not WSL2");
    // nothing but the played children ran, each under the configured deadline
    EXPECT_TRUE(children.ran("-p"));
    for (const auto& t : children.timeouts) {
        if (t != std::chrono::seconds(120)) { // ldconfig keeps its own
            EXPECT_EQ(t, std::chrono::milliseconds(2500));
        }
    }
}

TEST_F(DoctorProbes, GpuFailsWithoutOneAndNamesTheContainerFix) {
    remove("/sys/bus/pci/devices");
    auto f = probe(checks::gpu);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_STARTS(f.summary, "no NVIDIA GPU: no PCI device with vendor 0x10de");
    EXPECT_HAS(f.fix, "lspci -d 10de:");
    write("/.dockerenv");
    f = probe(checks::gpu);
    EXPECT_HAS(f.fix, "docker run --gpus all");
}

TEST_F(DoctorProbes, GpuTakesItsNameFromNvmlWhenPciIdsDoesNot) {
    auto f = probe(checks::gpu);
    EXPECT_EQ(f.details,
              std::vector<std::string>{"0000:65:00.0: NVIDIA A100-SXM4-40GB (device 0x20b0)"});
}

TEST_F(DoctorProbes, DriverMismatchAndMissingNodesAreBothReported) {
    children.answer("nvml",
                    libnvml,
                    "loaded=1\ndriver_version=550.90.07\ngpu_count=1\n"
                    "gpu.0.bus_id=00000000:65:00.0\n");
    remove("/dev/nvidia-uvm");
    auto f = probe(checks::driver);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "driver/library version mismatch: kernel module 550.54.15, user-space libraries "
              "550.90.07 (NVML): the libraries are newer -- the driver was upgraded and the old "
              "module is still loaded");
    ASSERT_EQ(f.more.size(), 1u);
    EXPECT_HAS(f.more[0].summary, "device nodes are missing: /dev/nvidia-uvm");
    EXPECT_EQ(f.more[0].fix, "sudo modprobe nvidia-uvm && sudo nvidia-modprobe -u -c=0");
}

TEST_F(DoctorProbes, DriverNotLoadedButInstalledSaysModprobe) {
    unload_driver();
    auto f = probe(checks::driver);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary, "no NVIDIA kernel driver: the nvidia module is not loaded");
    write("/lib/modules/6.1.0-18-amd64/updates/dkms/nvidia.ko");
    // the libraries name 550.54.15, which drives an A100: not a GPU too new for it
    f = probe(checks::driver);
    EXPECT_EQ(f.summary, "the NVIDIA kernel module is installed but not loaded");
    EXPECT_STARTS(f.fix, "sudo modprobe nvidia");
}

// The classic "worked until reboot": a kernel upgrade, and DKMS built the module for the old
// kernel only. The root cause is named, with the headers for the running kernel as the fix.
TEST_F(DoctorProbes, DriverBuiltByDkmsForAnotherKernelOnlyNamesTheUpgrade) {
    unload_driver();
    fs::create_directories(sys / "var/lib/dkms/nvidia/550.54.15/6.1.0-17-amd64/x86_64/module");
    fs::create_directories(sys / "var/lib/dkms/nvidia/550.54.15/build");
    write("/lib/modules/6.1.0-17-amd64/updates/dkms/nvidia.ko");
    auto f = probe(checks::driver);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "the nvidia module is built for kernel 6.1.0-17-amd64 only, not the running kernel "
              "6.1.0-18-amd64: DKMS did not rebuild it after the kernel upgrade");
    EXPECT_STARTS(f.fix, "sudo apt install linux-headers-6.1.0-18-amd64 && sudo dkms autoinstall");
    // built for the running kernel too: that is not the cause
    write("/lib/modules/6.1.0-18-amd64/updates/dkms/nvidia.ko");
    f = probe(checks::driver);
    EXPECT_EQ(f.summary, "the NVIDIA kernel module is installed but not loaded");
}

// nouveau loaded holds the GPU: the nvidia module installed cannot bind it. Without an NVIDIA
// driver installed, nouveau is just the driver there is.
TEST_F(DoctorProbes, DriverNouveauHoldingTheGpuIsTheRootCause) {
    unload_driver();
    write("/proc/modules",
          "nouveau 2732032 0 - Live 0x0000000000000000\n"
          "drm_ttm_helper 16384 1 nouveau, Live 0x0000000000000000\n");
    write("/lib/modules/6.1.0-18-amd64/updates/dkms/nvidia.ko");
    auto f = probe(checks::driver);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "the nouveau driver is loaded and holds the GPU: the nvidia module cannot bind it");
    EXPECT_HAS(f.fix, "blacklist nouveau");
    EXPECT_HAS(f.fix, "update-initramfs -u");
    // no NVIDIA driver anywhere: nouveau is not the problem, the missing driver is
    remove("/lib/modules/6.1.0-18-amd64");
    remove(std::string(k_lib) + "/libcuda.so.1");
    remove(libcuda);
    remove(libnvml);
    remove(std::string(k_lib) + "/libnvidia-ml.so.550.54.15");
    remove("/var/lib/dkms");
    children.ld_cache.clear();
    f = probe(checks::driver);
    EXPECT_EQ(f.summary, "no NVIDIA kernel driver: the nvidia module is not loaded");
}

// Secure Boot on (efivarfs: 4 attribute bytes, then 1) and a module without the kernel's
// signature trailer: the kernel refuses it. Signed, or Secure Boot off, it is not the cause.
TEST_F(DoctorProbes, DriverUnsignedModuleUnderSecureBootIsRefused) {
    unload_driver();
    std::string ko = "/lib/modules/6.1.0-18-amd64/updates/dkms/nvidia.ko";
    std::string var = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";
    const std::string unsigned_module("\x7f"
                                      "ELF module code",
                                      16);
    write(ko, unsigned_module);
    write(var, std::string("\x06\x00\x00\x00\x01", 5));
    auto f = probe(checks::driver);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "Secure Boot is on and the nvidia module " + ko +
                  " is not signed: the kernel refuses to load it (modprobe: \"Key was rejected "
                  "by service\")");
    EXPECT_HAS(f.fix, "mokutil --import");
    write(ko, unsigned_module + "~Module signature appended~\n");
    f = probe(checks::driver);
    EXPECT_EQ(f.summary, "the NVIDIA kernel module is installed but not loaded");
    EXPECT_TRUE(has_detail(f,
                           "Secure Boot: on (the module's key must be enrolled: mokutil "
                           "--list-enrolled)"));
    write(ko, unsigned_module);
    write(var, std::string("\x06\x00\x00\x00\x00", 5));
    f = probe(checks::driver);
    EXPECT_EQ(f.summary, "the NVIDIA kernel module is installed but not loaded");
    EXPECT_TRUE(has_detail(f, "Secure Boot: off"));
}

/// Runs a shell command for a fixture (openssl, xz, gzip, zstd); false when it fails.
bool shell(const std::string& cmd) {
    return std::system(("(" + cmd + ") >/dev/null 2>&1").c_str()) == 0;
}

std::string file_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Keys and a signed module made the way the kernel's sign-file makes them: a self-signed
/// certificate per key (`openssl req`), a detached PKCS#7 without attributes or certificates
/// (`openssl cms -sign -binary -noattr -nocerts -outform DER`), then the module, the signature,
/// `struct module_signature` (id_type 2, sig_len big-endian) and the magic.
struct SigningFixture {
    fs::path dir;

    bool key(const std::string& name, const std::string& cn) {
        return shell("cd '" + dir.string() +
                     "' && openssl req -new -x509 -newkey rsa:2048 -nodes "
                     "-days 36500 -sha256 -subj '/CN=" +
                     cn + "' -keyout " + name + ".key -out " + name + ".pem && openssl x509 -in " +
                     name + ".pem -outform DER -out " + name + ".der");
    }

    std::string der(const std::string& name) { return file_bytes(dir / (name + ".der")); }

    std::string signed_module(const std::string& body, const std::string& key) {
        std::ofstream(dir / "body", std::ios::binary) << body;
        if (!shell("cd '" + dir.string() +
                   "' && openssl cms -sign -binary -noattr -nocerts "
                   "-outform DER -md sha256 -signer " +
                   key + ".pem -inkey " + key + ".key -in body -out body.p7s")) {
            return {};
        }
        std::string sig = file_bytes(dir / "body.p7s");
        auto n = static_cast<std::uint32_t>(sig.size());
        std::string info{0, 0, 2, 0, 0, 0, 0, 0};
        for (int shift : {24, 16, 8, 0}) {
            info += static_cast<char>((n >> shift) & 0xff);
        }
        return body + sig + info + "~Module signature appended~\n";
    }

    /// efivarfs's MokListRT: 4 attribute bytes, then one EFI_SIGNATURE_LIST of X.509 entries.
    static std::string mok_list(const std::vector<std::string>& certs) {
        auto le32 = [](std::size_t v) {
            std::string out;
            for (int i = 0; i < 4; ++i) {
                out += static_cast<char>((v >> (8 * i)) & 0xff);
            }
            return out;
        };
        std::string out("\x07\x00\x00\x00", 4);
        for (const auto& c : certs) {
            out += std::string("\xa1\x59\xc0\xa5\xe4\x94\xa7\x4a\x87\xb5\xab\x15\x5c\x2b\xf0\x72",
                               16) +
                   le32(28 + 16 + c.size()) + le32(0) + le32(16 + c.size()) +
                   std::string("\x50\xab\x5d\x60\x46\xe0\x00\x43\xab\xb6\x3d\xd8\x10\xdd\x8b\x23",
                               16) +
                   c;
        }
        return out;
    }
};

// Secure Boot on and a module signed by a key neither MOK nor db holds: the kernel refuses it,
// and the finding names the signer. Enrolled, the signer is named in the details; a MOK list the
// doctor cannot read is said, not guessed. The same module compressed as Debian's kmod does
// (xz --check=crc32), and with gzip and zstd, reads the same.
TEST_F(DoctorProbes, DriverForeignSignedModuleUnderSecureBootIsRefused) {
    SigningFixture keys{dir.path() / "keys"};
    fs::create_directories(keys.dir);
    if (!shell("command -v openssl") || !keys.key("mok", "Machine Owner Key") ||
        !keys.key("dkms", "DKMS module signing key")) {
        GTEST_SKIP() << "no openssl";
    }
    remove("/proc/driver/nvidia");
    remove("/sys/module/nvidia");
    std::string dkms = "/lib/modules/6.1.0-18-amd64/updates/dkms/";
    std::string mok = "/sys/firmware/efi/efivars/MokListRT-605dab50-e046-4300-abb8-bb99cb02c3b4";
    write("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
          std::string("\x06\x00\x00\x00\x01", 5));
    write(dkms + "nvidia.ko",
          keys.signed_module("\x7f"
                             "ELF nvidia module code",
                             "dkms"));
    write(mok, SigningFixture::mok_list({keys.der("mok")}));
    write("/var/lib/dkms/mok.pub", keys.der("dkms"));
    auto f = probe(checks::driver);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_STARTS(f.summary,
                  "Secure Boot is on and the nvidia module is signed by DKMS module signing key "
                  "(key serial ");
    EXPECT_HAS(f.summary, "), which is not enrolled in MOK or db: the kernel refuses it");
    EXPECT_EQ(f.fix,
              "sudo mokutil --import /var/lib/dkms/mok.pub and confirm at the next boot, or sign "
              "the module with an enrolled key");
    EXPECT_HAS(f.details.back(), "enrolled in MOK: Machine Owner Key (serial ");
    for (const char* tool : {"xz --check=crc32", "gzip", "zstd -q --rm"}) {
        SCOPED_TRACE(tool);
        fs::path ko = sys / fs::path(dkms + "nvidia.ko").relative_path();
        if (!fs::exists(ko)) {
            write(dkms + "nvidia.ko",
                  keys.signed_module("\x7f"
                                     "ELF nvidia module",
                                     "dkms"));
        }
        for (const auto& e : fs::directory_iterator(ko.parent_path())) {
            if (e.path() != ko) {
                fs::remove(e.path());
            }
        }
        if (!shell(std::string(tool) + " '" + ko.string() + "'")) {
            continue; // zstd not installed
        }
        EXPECT_FALSE(fs::exists(ko));
        f = probe(checks::driver);
        EXPECT_HAS(f.summary, "signed by DKMS module signing key");
    }
    // enrolled: not the cause, and said
    write(mok, SigningFixture::mok_list({keys.der("mok"), keys.der("dkms")}));
    f = probe(checks::driver);
    EXPECT_EQ(f.summary, "the NVIDIA kernel module is installed but not loaded");
    EXPECT_HAS(f.details.back(), "module signed by DKMS module signing key (key serial ");
    EXPECT_HAS(f.details.back(), "), enrolled in MOK");
    // signed by the key the kernel signs its own modules with: trusted built in, not a finding
    ASSERT_TRUE(keys.key("kernel", "Debian Secure Boot kernel key"));
    write(mok, SigningFixture::mok_list({keys.der("mok")}));
    write("/lib/modules/6.1.0-18-amd64/modules.dep",
          "kernel/fs/fat/fat.ko.xz:\nkernel/drivers/video/fbdev/core/fb_sys_fops.ko:\n"
          "updates/dkms/nvidia.ko:\n");
    write("/proc/modules",
          "fb_sys_fops 16384 0 - Live 0x0000000000000000\n"
          "fat 86016 1 vfat, Live 0x0000000000000000\n");
    write("/lib/modules/6.1.0-18-amd64/kernel/fs/fat/fat.ko.xz", "not xz");
    write("/lib/modules/6.1.0-18-amd64/kernel/drivers/video/fbdev/core/fb_sys_fops.ko",
          keys.signed_module("\x7f"
                             "ELF fb",
                             "kernel"));
    write(dkms + "nvidia.ko",
          keys.signed_module("\x7f"
                             "ELF nvidia",
                             "kernel"));
    f = probe(checks::driver);
    EXPECT_EQ(f.summary, "the NVIDIA kernel module is installed but not loaded");
    EXPECT_HAS(f.details.back(), "the key the running kernel signs its own modules with");
    write(dkms + "nvidia.ko",
          keys.signed_module("\x7f"
                             "ELF nvidia",
                             "dkms"));
    // a MOK list that cannot be read (root only): said, not guessed
    // (root reads any file, so the test stands for efivarfs's 0600 with a link to nothing)
    link(mok, "/sys/firmware/efi/efivars/gone");
    f = probe(checks::driver);
    EXPECT_EQ(f.summary, "the NVIDIA kernel module is installed but not loaded");
    EXPECT_HAS(f.details.back(),
               "; whether that key is enrolled needs " + mok +
                   ", which only root can read: sudo cudaenv doctor --only "
                   "driver");
}

// A compressed module whose stream is cut short, and one in a compression the doctor does not
// decode: not judged, and the details say why.
TEST_F(DoctorProbes, DriverCompressedModuleThatCannotBeReadIsNotJudged) {
    remove("/proc/driver/nvidia");
    remove("/sys/module/nvidia");
    write("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
          std::string("\x06\x00\x00\x00\x01", 5));
    std::string dkms = "/lib/modules/6.1.0-18-amd64/updates/dkms/";
    write(dkms + "nvidia.ko.xz",
          std::string("\xfd"
                      "7zXZ\0\0\x01",
                      8));
    auto f = probe(checks::driver);
    EXPECT_EQ(f.summary, "the NVIDIA kernel module is installed but not loaded");
    EXPECT_TRUE(has_detail(f,
                           "module signature: cannot tell (nvidia.ko.xz: the xz stream is "
                           "truncated)"))
        << f.details.back();
    remove(dkms + "nvidia.ko.xz");
    write(dkms + "nvidia.ko.bz2", "BZh9");
    f = probe(checks::driver);
    EXPECT_TRUE(has_detail(f,
                           "module signature: cannot tell (nvidia.ko.bz2: a compression the "
                           "doctor cannot decode)"))
        << f.details.back();
}

// The kernel log in /dev/kmsg's record format ("prio,seq,usec,flags;message", continuation
// lines " KEY=value"): each Xid with what it means and its fix, the worst first.
TEST_F(DoctorProbes, XidEventsInTheKernelLogAreNamedWithTheirFix) {
    std::string boot = "6,512,4183021,-;nvidia: loading out-of-tree module taints kernel.\n"
                       "6,530,4400100,-;NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  "
                       "550.54.15\n"
                       " SUBSYSTEM=pci\n"
                       " DEVICE=+pci:0000:65:00.0\n";
    write("/dev/kmsg", boot);
    auto f = probe(checks::xid);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_EQ(f.summary, "no Xid events since boot (2 kernel log records read)");
    write("/dev/kmsg",
          boot + "4,901,91234567,-;NVRM: Xid (PCI:0000:65:00): 13, pid=4242, name=python3, "
                 "Graphics Exception: ESR 0x405840=0x3\n"
                 "4,902,91300000,-;NVRM: Xid (PCI:0000:65:00): 79, pid='<unknown>', "
                 "name=<unknown>, GPU has fallen off the bus.\n"
                 "3,903,91300001,-;NVRM: GPU 0000:65:00.0: GPU has fallen off the bus.\n"
                 "4,904,95000000,-;NVRM: Xid (PCI:0000:65:00): 79, pid='<unknown>', "
                 "name=<unknown>, GPU has fallen off the bus.\n"
                 "4,905,96000000,-;NVRM: Xid (0000:17:00): 48, pid=77, An uncorrectable double "
                 "bit error\n");
    f = probe(checks::xid);
    EXPECT_EQ(f.status, Status::fail);
    // the fatal ones first, by GPU and Xid; then the application's
    EXPECT_EQ(f.summary,
              "Xid 48 on GPU 0000:17:00 (once since boot): an uncorrectable (double-bit) ECC "
              "memory error");
    EXPECT_HAS(f.fix, "nvidia-smi -r");
    ASSERT_EQ(f.more.size(), 2u);
    EXPECT_EQ(f.more[0].summary,
              "Xid 79 on GPU 0000:65:00 (2 times since boot): the GPU has fallen off the bus");
    EXPECT_HAS(f.more[0].fix, "reboot");
    EXPECT_EQ(f.more[1].status, Status::warn);
    EXPECT_HAS(f.more[1].summary, "Xid 13 on GPU 0000:65:00 (once since boot)");
    EXPECT_TRUE(has_detail(f, "7 kernel log records read"));
    // an application's Xid alone is a warning; one the table does not know points to the catalog
    write("/dev/kmsg",
          boot + "4,950,1,-;NVRM: Xid (PCI:0000:65:00): 31, pid=1, name=a.out\n" +
              "4,951,2,-;NVRM: Xid (PCI:0000:65:00): 999, something new\n");
    f = probe(checks::xid);
    EXPECT_EQ(f.status, Status::warn);
    ASSERT_EQ(f.more.size(), 1u);
    EXPECT_HAS(f.more[0].fix + f.fix, "docs.nvidia.com/deploy/xid-errors");
    // an older driver's "fallen off the bus" without an Xid line still counts as one
    write("/dev/kmsg", boot + "3,960,3,-;NVRM: GPU at 0000:01:00.0 has fallen off the bus.\n");
    f = probe(checks::xid);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "Xid 79 on GPU 0000:01:00 (once since boot): the GPU has fallen off the bus");
    // R570's open module prints it as one printk of three lines, which /dev/kmsg hands out as
    // one record with \x0a inside (the message of NVIDIA/NVSentinel#155, an L40)
    write("/dev/kmsg",
          boot + "3,961,4,-;NVRM: The NVIDIA GPU 0000:b3:00.0\\x0aNVRM: (PCI ID: 10de:26b5) "
                 "installed in this system has\\x0aNVRM: fallen off the bus and is not "
                 "responding to commands.\n");
    f = probe(checks::xid);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "Xid 79 on GPU 0000:b3:00 (once since boot): the GPU has fallen off the bus");
    Host h(config());
    EXPECT_EQ(h.files().kernel_log().messages.back(),
              "NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:26b5) installed in this system "
              "has fallen off the bus and is not responding to commands.");
}

TEST_F(DoctorProbes, XidWithoutAKernelLogSaysWhyAndSkips) {
    remove("/dev/kmsg");
    auto f = probe(checks::xid);
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_STARTS(f.summary, "no kernel log to read (/dev/kmsg: ");
    EXPECT_HAS(f.summary, "sudo cudaenv doctor --only xid");
}

// The machine's own /dev/kmsg, read as the kernel hands it out (a record per read); where this
// user may not read it (kernel.dmesg_restrict), the reason names root.
TEST(DoctorKernelLog, TheRealDeviceIsReadRecordByRecordOrSaysWhyNot) {
    HostConfig config;
    Files files(config);
    auto log = files.kernel_log();

    struct stat st {};

    if (::stat("/dev/kmsg", &st) != 0 || !S_ISCHR(st.st_mode)) {
        EXPECT_FALSE(log.readable);
        GTEST_SKIP() << "no /dev/kmsg device here";
    }
    if (!log.readable) {
        EXPECT_NE(log.why.find("needs root"), std::string::npos) << log.why;
        return;
    }
    EXPECT_FALSE(log.messages.empty());
    for (const auto& m : log.messages) {
        ASSERT_EQ(m.find('\n'), std::string::npos) << m; // one record, its message only
    }
}

// An HGX board: NVSwitches (NVIDIA, PCI class 0x0680) need the fabric manager running at the
// driver's exact version, or every CUDA call fails with 802. One child: its --version.
TEST_F(DoctorProbes, FabricManagerOnAnNvswitchSystem) {
    auto f = probe(checks::fabric);
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_EQ(f.summary, "no NVSwitch on the PCI bus: no fabric manager needed");
    for (const char* sw : {"0000:05:00.0", "0000:06:00.0"}) {
        pci_device(std::string("/sys/bus/pci/devices/") + sw + "/", "0x068000", "0x22a3");
    }
    f = probe(checks::fabric);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "this NVSwitch system has no fabric manager installed: every CUDA call fails with "
              "error 802 (system not ready)");
    EXPECT_HAS(f.fix, "nvidia-fabricmanager-550=550.54.15-1");
    // installed, the driver's version, not running
    program("/usr/bin/nv-fabricmanager", "Fabric Manager version is : 550.54.15\n");
    f = probe(checks::fabric);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "the fabric manager is installed but not running (no nv-fabricmanager process "
              "runs): every CUDA call fails with error 802 (system not ready)");
    EXPECT_STARTS(f.fix, "sudo systemctl enable --now nvidia-fabricmanager");
    EXPECT_TRUE(has_detail(f, "2 NVSwitches: 0000:05:00.0, 0000:06:00.0"));
    // another program whose name Linux cuts to the same 15 bytes is not the fabric manager
    write("/proc/4243/comm", "nv-fabricmanage\n");
    write("/proc/4243/cmdline", std::string("/opt/x/nv-fabricmanage-helper\0", 30));
    EXPECT_EQ(probe(checks::fabric).status, Status::fail);
    // running, as Linux shows it: comm cut to 15 bytes (TASK_COMM_LEN), argv[0] whole
    write("/proc/4242/comm", "nv-fabricmanage\n");
    write("/proc/4242/cmdline",
          std::string(
              "/usr/bin/nv-fabricmanager\0-c\0/usr/share/nvidia/nvswitch/fabricmanager.cfg\0", 74));
    write("/proc/1/comm", "systemd\n");
    f = probe(checks::fabric);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_EQ(f.summary,
              "fabric manager 550.54.15 running (PID 4242) for 2 NVSwitches, the driver's version");
    // another version than the driver's: the fabric stays down
    program("/usr/bin/nv-fabricmanager", "Fabric Manager version is : 550.90.07\n");
    f = probe(checks::fabric);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "fabric manager 550.90.07 and driver 550.54.15 differ: it must be the driver's "
              "exact version, or the fabric stays down (CUDA error 802)");
    EXPECT_HAS(f.fix, "nvidia-fabricmanager-550=550.54.15-1");
    ASSERT_EQ(children.calls.back(),
              (std::vector<std::string>{sys.string() + "/usr/bin/nv-fabricmanager", "--version"}));
    // systemd's word: a unit that failed is said with its state and result, whatever /proc holds
    program("/usr/bin/nv-fabricmanager", "Fabric Manager version is : 550.54.15\n");
    remove("/proc/4242");
    program("/usr/bin/systemctl",
            "LoadState=loaded\nActiveState=failed\nSubState=failed\nMainPID=0\nResult=exit-code\n");
    f = probe(checks::fabric);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_HAS(f.summary, "nvidia-fabricmanager.service is failed (failed, result exit-code)");
    // active with its MainPID: running, though /proc was not consulted
    program(
        "/usr/bin/systemctl",
        "LoadState=loaded\nActiveState=active\nSubState=running\nMainPID=2345\nResult=success\n");
    f = probe(checks::fabric);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_HAS(f.summary, "running (PID 2345)");
}

// A CDI spec as nvidia-ctk writes it (YAML: devices with their nodes, then the driver's files
// as mounts). After a driver upgrade the libraries it names are gone: stale, regenerate.
TEST_F(DoctorProbes, CdiSpecNamingGonePathsIsStale) {
    auto f = probe(checks::cdi);
    EXPECT_EQ(f.status, Status::skip);
    auto spec = [&](const std::string& driver_lib) {
        return "---\ncdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n"
               "  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n"
               "- name: all\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n"
               "containerEdits:\n  deviceNodes:\n  - path: /dev/nvidiactl\n"
               "  - path: /dev/nvidia-uvm\n  mounts:\n  - hostPath: " +
               driver_lib + "\n    containerPath: " + driver_lib +
               "\n    options:\n    - ro\n    - nosuid\n";
    };
    write("/etc/cdi/nvidia.yaml", spec(libcuda));
    f = probe(checks::cdi);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_EQ(f.summary, "1 NVIDIA CDI spec: every path it names is there");
    EXPECT_TRUE(has_detail(f, "/etc/cdi/nvidia.yaml: 4 paths, 0 gone"));
    // the driver moved on to 550.90.07: the spec still names the old library
    write("/etc/cdi/nvidia.yaml", spec(std::string(k_lib) + "/libcuda.so.535.104.05"));
    f = probe(checks::cdi);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "the CDI spec /etc/cdi/nvidia.yaml is stale: 1 path it names is gone (" +
                  std::string(k_lib) +
                  "/libcuda.so.535.104.05): containers started with it fail (a driver upgrade, "
                  "a GPU or MIG change since it was made)");
    EXPECT_STARTS(f.fix,
                  "regenerate it: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml");
    // a JSON spec in /var/run/cdi naming a GPU that is gone
    write("/var/run/cdi/nvidia.com-gpu.json",
          R"({"cdiVersion":"0.5.0","kind":"nvidia.com/gpu","devices":[{"name":"1",)"
          R"("containerEdits":{"deviceNodes":[{"path":"/dev/nvidia1"}]}}]})");
    f = probe(checks::cdi);
    ASSERT_EQ(f.more.size(), 1u);
    EXPECT_HAS(f.more[0].summary,
               "/var/run/cdi/nvidia.com-gpu.json is stale: 1 path it names is "
               "gone (/dev/nvidia1)");
    write("/var/run/cdi/nvidia.com-gpu.json",
          "{\n \"kind\": \"nvidia.com/gpu\",\n \"devices\": [\n  {\"name\": \"1\",\n"
          "   \"deviceNodes\": [\n    {\n     \"path\": \"/dev/nvidia1\"\n    }\n   ]}\n ]\n}\n");
    f = probe(checks::cdi);
    ASSERT_EQ(f.more.size(), 1u);
    EXPECT_HAS(f.more[0].summary,
               "/var/run/cdi/nvidia.com-gpu.json is stale: 1 path it names is "
               "gone (/dev/nvidia1)");
}

TEST_F(DoctorProbes, DriverInWslIsSkipped) {
    write("/proc/sys/kernel/osrelease", "5.15.146.1-microsoft-standard-WSL2\n");
    auto f = probe(checks::driver);
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_HAS(f.summary, "WSL2");
}

TEST_F(DoctorProbes, LibcudaStubAndFailedInitAndMissing) {
    // the query child says cuInit fails with no device
    children.answer("cuda", libcuda, "loaded=1\nversion_rc=0\nversion=12040\ninit_rc=100\n");
    auto f = probe(checks::libcuda);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "cuInit fails: CUDA_ERROR_NO_DEVICE (the driver supports CUDA up to 12.4)");
    // a stub library answers 34
    children.answer("cuda", libcuda, "loaded=1\nversion_rc=0\nversion=0\ninit_rc=34\n");
    f = probe(checks::libcuda);
    EXPECT_HAS(f.summary, "is a stub library (CUDA_ERROR_STUB_LIBRARY)");
    // gone from the cache and the disk, with the toolkit's stub left
    remove(std::string(k_lib) + "/libcuda.so.1");
    children.ld_cache.clear();
    write(std::string(k_cuda) + "/lib64/stubs/libcuda.so", "stub");
    f = probe(checks::libcuda);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "libcuda.so.1 is not installed; only the link-time stub "
              "/usr/local/cuda/lib64/stubs/libcuda.so is present");
}

TEST_F(DoctorProbes, LibcudaMissingNamesAStubTheLoaderFindsOutsideTheToolkit) {
    remove(std::string(k_lib) + "/libcuda.so.1");
    children.ld_cache = cache_line("libcuda.so", "/opt/sdk/stubs/libcuda.so");
    write("/opt/sdk/stubs/libcuda.so", "stub");
    auto f = probe(checks::libcuda);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "libcuda.so.1 is not installed; only the link-time stub "
              "/opt/sdk/stubs/libcuda.so is present");
}

TEST_F(DoctorProbes, LibcudaOnLdLibraryPathThroughAStubsFolderFails) {
    write(std::string(k_cuda) + "/lib64/stubs/libcuda.so.1", "stub");
    env["LD_LIBRARY_PATH"] = std::string(k_cuda) + "/lib64/stubs";
    auto f = probe(checks::libcuda);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_HAS(f.summary, "resolves to the link-time stub");
    EXPECT_STARTS(f.fix, "take the stubs folder out of LD_LIBRARY_PATH");
    // and the environment probe says so too
    write(std::string(k_cuda) + "/lib64/stubs/libcuda.so", "stub");
    auto e = probe(checks::environment);
    EXPECT_EQ(e.status, Status::fail);
    EXPECT_HAS(e.summary, "includes the link-time stubs folder");
}

TEST_F(DoctorProbes, AQueryChildThatCrashesOrHangsIsAFindingNotACrash) {
    children.play("cuda", libcuda, exited(139, "loaded=1\n"));
    auto f = probe(checks::libcuda);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "libcuda.so.1 (/usr/lib/x86_64-linux-gnu/libcuda.so.1) does not load: the query "
              "crashed (signal 11)");
    children.play("cuda", libcuda, timed_out());
    f = probe(checks::libcuda);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_HAS(f.summary, "does not load: did not answer within 2.5 s");
    // NVML hanging: the driver probe still reports, from the kernel module
    children.play("nvml", libnvml, timed_out());
    Host h(config());
    EXPECT_EQ(h.facts().driver().nvml_error, "did not answer within 2.5 s");
    EXPECT_FALSE(h.facts().driver().nvml_ok);
    auto d = checks::driver(h);
    EXPECT_HAS(d.summary, "driver 550.54.15 loaded");
}

TEST_F(DoctorProbes, AQueryChildThatCannotLoadOrStartIsAnAnswerWithAnError) {
    Host h(config());
    const auto& a = h.facts().query("cudart", "/nowhere/libcudart.so.12");
    EXPECT_FALSE(a.loaded);
    EXPECT_EQ(a.error, sys.string() + "/nowhere/libcudart.so.12: cannot open shared object");
    // asked once: the second question is answered from what the first learned
    auto asked = children.calls.size();
    EXPECT_EQ(&h.facts().query("cudart", "/nowhere/libcudart.so.12"), &a);
    EXPECT_EQ(children.calls.size(), asked);
    children.refuse_queries = true;
    Host refused(config());
    EXPECT_EQ(refused.facts().query("cuda", std::string(k_lib) + "/libcuda.so.1").error,
              "cannot fork: Resource temporarily unavailable");
    auto f = checks::libcuda(refused);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_HAS(f.summary, "does not load: cannot fork");
    auto c = config();
    c.self_exe.clear();
    Host without(c);
    EXPECT_EQ(without.facts().query("cuda", "/x").error,
              "no query helper (cudaenv's own path is unknown)");
}

TEST_F(DoctorProbes, DriverCudaByTheManifestsMinimums) {
    auto set_driver = [&](const std::string& v) {
        write("/proc/driver/nvidia/version",
              "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + v + "  Tue Mar  5 2024\n");
    };
    set_driver("535.161.08");
    auto f = probe(checks::driver_cuda);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_STARTS(f.summary,
                  "driver 535.161.08 runs CUDA 12.4 only through minor-version "
                  "compatibility (full support needs 550.54.15)");
    set_driver("470.223.02");
    f = probe(checks::driver_cuda);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_STARTS(f.summary,
                  "driver 470.223.02 is too old for CUDA 12.4 (needs >= 550.54.15, or "
                  ">= 525.60.13 with compatibility)");
    remove("/usr/local/cuda");
    EXPECT_EQ(probe(checks::driver_cuda).summary, "no CUDA toolkit selected");
}

TEST_F(DoctorProbes, ToolkitThatDisagreesWithItselfFails) {
    children.programs[std::string(k_cuda) + "/bin/nvcc"] =
        exited(0, "Cuda compilation tools, release 12.3, V12.3.107\n");
    auto f = probe(checks::toolkit);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "the toolkit at /usr/local/cuda-12.4 disagrees with itself: the runtime library is "
              "12.4 but nvcc --version says 12.3");
}

TEST_F(DoctorProbes, ToolkitNvccThatFailsIsAWarning) {
    children.programs[std::string(k_cuda) + "/bin/nvcc"] = exited(1, "", "boom");
    auto f = probe(checks::toolkit);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_EQ(f.summary, "CUDA 12.4 at /usr/local/cuda-12.4, but nvcc --version failed (exit 1)");
}

TEST_F(DoctorProbes, ToolkitMissingOrWithoutRuntime) {
    // no toolkit is no fault: frameworks' wheels bring CUDA (the field corpus' cloud machines)
    remove("/usr/local/cuda");
    auto f = probe(checks::toolkit);
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_STARTS(f.summary, "no CUDA toolkit");
    link("/usr/local/cuda", k_cuda);
    remove(std::string(k_cuda) + "/lib64/libcudart.so.12");
    remove(std::string(k_cuda) + "/lib64/libcudart.so.12.4.127");
    f = probe(checks::toolkit);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "the toolkit at /usr/local/cuda-12.4 has no libcudart in /usr/local/cuda-12.4/lib64");
}

TEST_F(DoctorProbes, LoaderSaysWhenProgramsLoadAnotherCopy) {
    // an older runtime first on LD_LIBRARY_PATH
    write("/opt/old/lib/libcudart.so.12", "elf");
    env["LD_LIBRARY_PATH"] = "/opt/old/lib";
    auto f = probe(checks::loader);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_STARTS(f.summary, "programs load the CUDA runtime");
    EXPECT_HAS(f.summary,
               "from /opt/old/lib/libcudart.so.12 (LD_LIBRARY_PATH), not the selected "
               "12.4.1 in /usr/local/cuda-12.4/lib64");
}

TEST_F(DoctorProbes, LoaderSaysWhenTheCacheIsStaleOrUnreadable) {
    // ldconfig has not run since the conf file was written: the cache lacks the folder
    children.ld_cache = cache_line("libcuda.so.1", std::string(k_lib) + "/libcuda.so.1");
    auto f = probe(checks::loader);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_EQ(f.summary,
              "the loader cache is out of date: /usr/local/cuda-12.4/lib64/libcudart.so.12 is in "
              "a configured folder but not in the cache");
    EXPECT_EQ(f.fix, "sudo ldconfig");
    // ldconfig itself fails
    children.ldconfig = exited(1, "", "ldconfig: Can't open cache file /etc/ld.so.cache\n");
    f = probe(checks::loader);
    EXPECT_EQ(f.summary,
              "the loader cache cannot be read: ldconfig -p failed (exit 1): ldconfig: Can't "
              "open cache file /etc/ld.so.cache");
    // or hangs: the same finding, never a hang of the doctor
    children.ldconfig = timed_out();
    f = probe(checks::loader);
    EXPECT_EQ(f.summary,
              "the loader cache cannot be read: '/sbin/ldconfig' did not finish within 120 s "
              "(CUDAENV_LDCONFIG_TIMEOUT)");
}

TEST_F(DoctorProbes, LoaderNamesAConfFileForAnotherToolkitAndAGoneFolder) {
    write("/usr/local/cuda-11.8/lib64/libcudart.so.11.0", "elf");
    write("/etc/ld.so.conf.d/cuda-11-8.conf", "/usr/local/cuda-11.8/lib64\n");
    write("/etc/ld.so.conf.d/zz-cuda-gone.conf", "/usr/local/cuda-10.2/lib64\n");
    auto f = probe(checks::loader);
    EXPECT_EQ(f.status, Status::warn);
    std::vector<std::string> all{f.summary};
    for (const auto& m : f.more) {
        all.push_back(m.summary);
    }
    EXPECT_NE(
        std::find(all.begin(),
                  all.end(),
                  "/etc/ld.so.conf.d/cuda-11-8.conf lists /usr/local/cuda-11.8/lib64, another "
                  "CUDA than the selected /usr/local/cuda-12.4: which one wins is not "
                  "guaranteed"),
        all.end())
        << f.summary;
    EXPECT_NE(std::find(all.begin(),
                        all.end(),
                        "/etc/ld.so.conf.d/zz-cuda-gone.conf lists /usr/local/cuda-10.2/lib64, "
                        "which no longer exists (a removed toolkit)"),
              all.end())
        << f.summary;
}

TEST_F(DoctorProbes, CudnnHeaderLibraryAndSublibraries) {
    write(std::string(k_cuda) + "/include/cudnn_version.h",
          "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 0\n#define CUDNN_PATCHLEVEL 0\n");
    remove(std::string(k_cuda) + "/lib64/libcudnn_adv.so.9");
    auto f = probe(checks::cudnn);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_STARTS(f.summary,
                  "cuDNN header 9.0.0 (/usr/local/cuda-12.4/include/cudnn_version.h) "
                  "but library 9.1.1");
    ASSERT_EQ(f.more.size(), 1u);
    EXPECT_STARTS(f.more[0].summary,
                  "cuDNN 9.1.1 in /usr/local/cuda-12.4/lib64 lacks libcudnn_adv.so.9");
}

TEST_F(DoctorProbes, CudnnBuiltForAnotherCudaAndOneThatDoesNotLoad) {
    children.answer("cudnn",
                    std::string(k_cuda) + "/lib64/libcudnn.so.9",
                    "loaded=1\nversion=90101\ncudart_version=11080\n");
    auto f = probe(checks::cudnn);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary, "cuDNN 9.1.1 was built for CUDA 11 but the toolkit is CUDA 12.4");
    children.forget("cudnn", std::string(k_cuda) + "/lib64/libcudnn.so.9");
    f = probe(checks::cudnn);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_STARTS(f.summary,
                  "/usr/local/cuda-12.4/lib64/libcudnn.so.9 does not load or answer "
                  "cudnnGetVersion: ");
}

TEST_F(DoctorProbes, CudaLinkStates) {
    // no link and no toolkit anywhere: nothing to say; no link beside a toolkit: a warning
    remove("/usr/local/cuda");
    auto f = probe(checks::cuda_link);
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_STARTS(f.summary, "/usr/local/cuda does not exist, and no CUDA toolkit");
    env["CUDA_HOME"] = k_cuda;
    f = probe(checks::cuda_link);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_STARTS(f.summary, "/usr/local/cuda does not exist");
    env.erase("CUDA_HOME");
    link("/usr/local/cuda", "/usr/local/cuda-13.0");
    f = probe(checks::cuda_link);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "/usr/local/cuda points to /usr/local/cuda-13.0, which does not exist (a removed "
              "toolkit?)");
    remove("/usr/local/cuda");
    fs::create_directories(sys / "usr/local/cuda");
    write("/usr/local/cuda/version.json", R"({"cuda": {"version": "11.8.0"}})");
    f = probe(checks::cuda_link);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_STARTS(f.summary, "/usr/local/cuda is a real directory (CUDA 11.8.0");
    EXPECT_STARTS(f.fix, "sudo mv /usr/local/cuda /usr/local/cuda-11.8");
}

TEST_F(DoctorProbes, EnvironmentAgainstTheSelection) {
    executable("/opt/cuda-11/bin/nvcc", "#!/bin/sh\n");
    write("/opt/cuda-11/version.json", R"({"cuda": {"version": "11.8.0"}})");
    env["PATH"] = "/opt/cuda-11/bin:/usr/local/cuda/bin:/usr/bin";
    env["CUDA_HOME"] = "/opt/cuda-11";
    env["CUDA_VISIBLE_DEVICES"] = "-1";
    auto f = probe(checks::environment);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_EQ(f.summary, "CUDA_HOME=/opt/cuda-11 disagrees with the selected /usr/local/cuda-12.4");
    ASSERT_EQ(f.more.size(), 2u);
    EXPECT_EQ(f.more[0].summary,
              "the nvcc on PATH is /opt/cuda-11/bin/nvcc (CUDA 11.8.0), not the selected "
              "toolkit's");
    EXPECT_EQ(f.more[1].summary,
              "CUDA_VISIBLE_DEVICES=-1 hides every GPU: frameworks fall back to the CPU");
}

TEST_F(DoctorProbes, ContainerWithoutNodesOrCudnn) {
    write("/.dockerenv");
    remove("/dev/nvidia0");
    auto f = probe(checks::container);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary, "in docker without GPU access: /dev/nvidiactl or /dev/nvidia0 missing");
    write("/dev/nvidia0");
    env["NVIDIA_VISIBLE_DEVICES"] = "void";
    f = probe(checks::container);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_EQ(f.summary, "NVIDIA_VISIBLE_DEVICES=void: the container runtime exposes no GPU");
    env.erase("NVIDIA_VISIBLE_DEVICES");
    children.ld_cache = cache_line("libcuda.so.1", std::string(k_lib) + "/libcuda.so.1");
    // an image without cuDNN is said, not flagged (NVIDIA's sample workload runs plain ubuntu)
    f = probe(checks::container);
    EXPECT_EQ(f.status, Status::ok);
    EXPECT_EQ(f.summary, "in docker with GPU device nodes");
    EXPECT_TRUE(has_detail(f,
                           "no cuDNN in the image's loader cache (a …-cudnn-runtime image, or "
                           "cudaenv install <cuda>+cudnn-<version>, brings one)"));
    remove("/.dockerenv");
    write("/proc/1/cgroup", "0::/kubepods/besteffort/pod1234\n");
    EXPECT_EQ(probe(checks::container).summary, "in kubernetes with GPU device nodes");
    Host h(config());
    EXPECT_EQ(h.facts().container(), "kubernetes");
}

// The host's NVIDIA Container Toolkit: whether images' /usr/local/cuda/compat libraries replace
// the host's libcuda, by its config.toml and its version (1.17.4 turned them off behind the
// allow-cuda-compat-libs-from-container feature flag; 1.17.7 added cuda-compat-mode, default
// "ldconfig").
TEST_F(DoctorProbes, CudaCompatOnTheHostReadsTheToolkitsSetting) {
    EXPECT_EQ(probe(checks::container_compat).status, Status::skip);
    std::string config = "/etc/nvidia-container-runtime/config.toml";
    auto dpkg = [&](const std::string& version) {
        write("/var/lib/dpkg/status",
              "Package: nvidia-container-toolkit-base\nStatus: install ok installed\nVersion: " +
                  version + "\n\nPackage: zlib1g\nVersion: 1:1.2.13.dfsg-1\n");
    };
    write(config,
          "#accept-nvidia-visible-devices-as-volume-mounts = false\n"
          "[nvidia-container-cli]\nldconfig = \"@/sbin/ldconfig\"\n\n"
          "[nvidia-container-runtime]\nlog-level = \"info\"\nmode = \"auto\"\n"
          "runtimes = [\"docker-runc\", \"runc\", \"crun\"]\n\n"
          "[nvidia-container-runtime.modes.csv]\n"
          "mount-spec-path = \"/etc/nvidia-container-runtime/host-files-for-container.d\"\n");
    dpkg("1.17.8-1");
    auto f = probe(checks::container_compat);
    EXPECT_EQ(f.status, Status::ok);
    EXPECT_EQ(f.summary,
              "NVIDIA Container Toolkit: images' CUDA forward-compatibility libraries are used "
              "(cuda-compat-mode not set: \"ldconfig\", the default since 1.17.7)");
    dpkg("1.17.5-1");
    f = probe(checks::container_compat);
    EXPECT_EQ(f.summary,
              "NVIDIA Container Toolkit: images' CUDA forward-compatibility libraries are not "
              "used (allow-cuda-compat-libs-from-container not set in [features] (toolkit "
              "1.17.5))");
    EXPECT_HAS(f.details.back(), "CUDA_ERROR_INSUFFICIENT_DRIVER (35)");
    write(config, "[features]\nallow-cuda-compat-libs-from-container = true # opt in\n");
    EXPECT_HAS(probe(checks::container_compat).summary, "libraries are used (allow-cuda-compat");
    dpkg("1.16.2-1");
    EXPECT_HAS(probe(checks::container_compat).summary, "mounts them (no switch before 1.17.4)");
    dpkg("1.18.0-1");
    write(config,
          "[nvidia-container-runtime.modes.legacy]\n  cuda-compat-mode = 'disabled'\n"
          "[features]\nallow-cuda-compat-libs-from-container = true\n");
    EXPECT_EQ(probe(checks::container_compat).summary,
              "NVIDIA Container Toolkit: images' CUDA forward-compatibility libraries are not "
              "used (cuda-compat-mode = \"disabled\" in [nvidia-container-runtime.modes.legacy])");
    remove("/var/lib/dpkg/status");
    write(config, "[nvidia-container-runtime]\nmode = \"legacy\"\n");
    EXPECT_HAS(probe(checks::container_compat).summary,
               "libraries depend on the toolkit's version");
}

// In a container: the image's compat libcuda against the host's driver and the GPU.
TEST_F(DoctorProbes, CudaCompatInAContainerJudgesTheImagesCompatLibcuda) {
    write("/.dockerenv");
    auto f = probe(checks::container_compat);
    EXPECT_EQ(f.status, Status::ok);
    EXPECT_STARTS(f.summary, "no CUDA forward-compatibility libcuda in the image");
    // CUDA 12.8's compat package on a 550 host that keeps its own libcuda
    write("/usr/local/cuda-12.4/compat/libcuda.so.570.124.06", "elf");
    link("/usr/local/cuda-12.4/compat/libcuda.so.1", "libcuda.so.570.124.06");
    f = probe(checks::container_compat);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_EQ(f.summary,
              "the image ships the forward-compatibility libcuda 570.124.06 for a newer driver "
              "than the host's 550.54.15, but programs load the host's libcuda: the host's "
              "NVIDIA Container Toolkit does not use the image's compat libraries: a CUDA newer "
              "than the host's driver supports fails with CUDA_ERROR_INSUFFICIENT_DRIVER (35, "
              "\"driver too old\")");
    EXPECT_HAS(f.fix, "cuda-compat-mode = \"ldconfig\" in [nvidia-container-runtime.modes.legacy]");
    // the toolkit put the compat folder first: used on a data-center GPU
    children.ld_cache = cache_line("libcuda.so.1", "/usr/local/cuda/compat/libcuda.so.1") +
                        cache_line("libcuda.so.1", std::string(k_lib) + "/libcuda.so.1");
    f = probe(checks::container_compat);
    EXPECT_EQ(f.status, Status::ok);
    EXPECT_EQ(f.summary,
              "programs load the image's forward-compatibility libcuda 570.124.06 over "
              "the host's driver 550.54.15");
    // ... and on a GeForce RTX 4090 (by its PCI id: no forward_compat mark): 804
    write("/sys/bus/pci/devices/0000:65:00.0/device", "0x2684\n");
    f = probe(checks::container_compat);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_HAS(f.summary, "on a NVIDIA GeForce RTX 4090 (0000:65:00.0), which forward");
    EXPECT_HAS(f.summary, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)");
    // an image's compat library older than the host's driver, on the H100 again: 803
    write("/sys/bus/pci/devices/0000:65:00.0/device", "0x2330\n");
    write("/proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:19 UTC "
          "2025\n");
    children.answer("nvml",
                    std::string(k_lib) + "/libnvidia-ml.so.1",
                    "loaded=1\ndriver_version=580.65.06\ngpu_count=1\n"
                    "gpu.0.name=NVIDIA H100 80GB HBM3\ngpu.0.bus_id=00000000:65:00.0\n"
                    "gpu.0.cc=9.0\n");
    f = probe(checks::container_compat);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_HAS(f.summary,
               "older than the host's driver 580.65.06: CUDA fails with "
               "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)");
}

// The host's driver unknown (no /proc/driver/nvidia, NVML not answering): said, not judged.
TEST_F(DoctorProbes, CudaCompatWithTheHostsDriverUnknownSaysSo) {
    write("/.dockerenv");
    write("/usr/local/cuda-12.4/compat/libcuda.so.570.124.06", "elf");
    remove("/proc/driver/nvidia");
    children.answers.erase("nvml " + std::string(k_lib) + "/libnvidia-ml.so.1");
    auto f = probe(checks::container_compat);
    EXPECT_EQ(f.status, Status::ok);
    EXPECT_EQ(f.summary,
              "the image ships the forward-compatibility libcuda 570.124.06; programs do not load "
              "it, and the host's driver version is unknown");
}

TEST(DoctorToml, ReadsSectionKeysAndSurvivesMalformedLines) {
    EXPECT_TRUE(checks::toml_keys("").empty());
    auto k = checks::toml_keys("top = 1\n[a.b]\nk = \"v # not a comment\" # comment\n[\n=\n"
                               "[[arr]]\nx = 2\n[c]\n'q' = 'y'\nbroken\n\"\n");
    EXPECT_EQ(k["top"], "1");
    EXPECT_EQ(k["a.b.k"], "v # not a comment");
    EXPECT_EQ(k["c.q"], "y");
    EXPECT_EQ(k.count("arr.x"), 0u);
}

TEST_F(DoctorProbes, WslWantsTheWindowsLibcuda) {
    write("/proc/sys/kernel/osrelease", "5.15.146.1-microsoft-standard-WSL2\n");
    auto f = probe(checks::wsl);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary, "WSL without /dev/dxg: the Windows GPU driver is not exposed");
    write("/dev/dxg");
    f = probe(checks::wsl);
    EXPECT_EQ(f.summary, "a Linux NVIDIA kernel driver is loaded inside WSL2");
    unload_driver();
    f = probe(checks::wsl);
    EXPECT_EQ(f.summary,
              "libcuda.so.1 loads from /usr/lib/x86_64-linux-gnu/libcuda.so.1, not from "
              "/usr/lib/wsl/lib");
    write("/usr/lib/wsl/lib/libcuda.so.1", "elf");
    children.ld_cache = cache_line("libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1");
    // a Linux driver's libraries left inside (libnvidia-compute-*), though the loader picks WSL's
    f = probe(checks::wsl);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_HAS(f.summary,
               "a Linux NVIDIA driver's libraries are installed inside WSL2 (" +
                   std::string(k_lib) + "/libcuda.so.550.54.15)");
    remove(std::string(k_lib) + "/libcuda.so.550.54.15");
    f = probe(checks::wsl);
    EXPECT_EQ(f.status, Status::ok);
    EXPECT_STARTS(f.summary, "WSL2: libcuda from /usr/lib/wsl/lib");
}

TEST_F(DoctorProbes, SelfWantsTheShimsOnPath) {
    auto c = config();
    fs::create_directories(c.root.shims());
    std::ofstream(c.root.shims() / "nvcc") << "shim";
    Host h(c);
    auto f = checks::self(h);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_HAS(f.summary, "the shims (" + c.root.shims().string() + ") are not on PATH");
    env["PATH"] = c.root.shims().string() + ":/usr/local/cuda/bin";
    auto c2 = config();
    Host h2(c2);
    f = checks::self(h2);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_STARTS(f.summary, "root " + c.root.dir.string() + " writable");
}

// -- the loader view alone --------------------------------------------------------------------

TEST_F(DoctorProbes, LoaderPickFollowsTheLoadersOrderAndNamesWhatItShadows) {
    auto c = config();
    Files files(c);
    Loader loader(files);
    auto p = loader.pick("libcudart.so.12");
    EXPECT_EQ(p.path, std::string(k_cuda) + "/lib64/libcudart.so.12");
    EXPECT_EQ(p.via, "ld.so.cache");
    EXPECT_TRUE(p.shadowed.empty());
    EXPECT_TRUE(p.not_in_cache.empty());
    // the same file through /usr/local/cuda is one copy, not a shadowed one
    write("/opt/other/libcudart.so.12", "elf");
    write(std::string(k_lib) + "/libcudart.so.12", "elf");
    c.env["LD_LIBRARY_PATH"] = "/opt/other:/usr/local/cuda/lib64";
    Loader again(files);
    p = again.pick("libcudart.so.12");
    EXPECT_EQ(p.path, "/opt/other/libcudart.so.12");
    EXPECT_EQ(p.via, "LD_LIBRARY_PATH");
    EXPECT_EQ(p.shadowed,
              (std::vector<std::string>{"/usr/local/cuda/lib64/libcudart.so.12",
                                        std::string(k_lib) + "/libcudart.so.12"}));
    // not in the cache, only in a default folder; the configured copy is what ldconfig missed
    c.env.erase("LD_LIBRARY_PATH");
    children.ld_cache.clear();
    Loader uncached(files);
    p = uncached.pick("libcudart.so.12");
    EXPECT_EQ(p.path, std::string(k_lib) + "/libcudart.so.12");
    EXPECT_EQ(p.via, "default directories");
    EXPECT_EQ(p.not_in_cache,
              (std::vector<std::string>{std::string(k_cuda) + "/lib64/libcudart.so.12"}));
    EXPECT_EQ(uncached.pick("libnothing.so.1").path, "");
}

TEST_F(DoctorProbes, LoaderRunsLdconfigOnceForTheSysroot) {
    auto c = config();
    Files files(c);
    Loader loader(files);
    EXPECT_EQ(loader.ld_cache().size(), 5u);
    EXPECT_EQ(loader.ld_cache().size(), 5u);
    ASSERT_EQ(children.calls.size(), 1u);
    EXPECT_EQ(children.calls[0],
              (std::vector<std::string>{"/sbin/ldconfig", "-r", sys.string(), "-p"}));
    EXPECT_EQ(loader.ld_cache_error(), "");
    // no cache file: ldconfig is not asked
    remove("/etc/ld.so.cache");
    Loader none(files);
    EXPECT_TRUE(none.ld_cache().empty());
    EXPECT_EQ(none.ld_cache_error(), "there is no loader cache (/etc/ld.so.cache)");
    EXPECT_EQ(children.calls.size(), 1u);
}

TEST_F(DoctorProbes, PackageOwnerFromDpkgListsByRealFile) {
    write("/var/lib/dpkg/info/libcuda1:amd64.list",
          "/.\n/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n");
    write("/var/lib/dpkg/info/other.list", "/usr/lib/x86_64-linux-gnu/libz.so.1\n");
    auto c = config();
    Files files(c);
    Loader loader(files);
    EXPECT_EQ(loader.package_owner(std::string(k_lib) + "/libcuda.so.1"), "libcuda1");
    EXPECT_EQ(loader.package_owner(libnvml), "");
}

TEST_F(DoctorProbes, FilesRunsTheMachinesProgramsUnderTheSysrootWithTheEnvironment) {
    auto c = config();
    Files files(c);
    auto ran = files.run({std::string(k_cuda) + "/bin/nvcc", "--version"});
    ASSERT_TRUE(ran);
    EXPECT_HAS(ran->out, "release 12.4");
    ASSERT_EQ(children.calls.size(), 1u);
    EXPECT_EQ(children.calls[0][0], (sys / "usr/local/cuda-12.4/bin/nvcc").string());
    EXPECT_EQ(children.timeouts[0], std::chrono::milliseconds(2500));
    auto opts = files.child_options();
    ASSERT_TRUE(opts.env);
    EXPECT_NE(std::find(opts.env->begin(), opts.env->end(), "CUDAENV_TODAY=2024-06-01"),
              opts.env->end());
    EXPECT_FALSE(files.run({}));
}

TEST(DoctorManifests, TodayIsTheOverrideOnlyWhenItIsADate) {
    Manifests fixed(CUDAENV_TEST_MANIFESTS, "2031-02-03");
    EXPECT_EQ(fixed.today(), "2031-02-03");
    Manifests clock(CUDAENV_TEST_MANIFESTS, "soon");
    EXPECT_EQ(clock.today().size(), 10u);
    EXPECT_NE(clock.today(), "soon");
    ASSERT_NE(fixed.rules(), nullptr);
    EXPECT_EQ(fixed.rules()->cudnn_sublibraries.at(9).size(), 8u);
    ASSERT_NE(fixed.cuda_release_for(*Version::try_parse("12.4")), nullptr);
    // a bare minor is its first release (the lowest driver minimum: no more than is known); a
    // full version is that release (version.json's 12.6.1 is not 12.6.3); a patch the manifests
    // do not hold is the newest before it
    EXPECT_EQ(fixed.cuda_release_for(*Version::try_parse("12.4"))->version.str(), "12.4.0");
    EXPECT_EQ(fixed.cuda_release_for(*Version::try_parse("12.6.1"))->version.str(), "12.6.1");
    EXPECT_EQ(fixed.cuda_release_for(*Version::try_parse("12.2.0"))->version.str(), "12.2.0");
    EXPECT_EQ(fixed.cuda_release_for(*Version::try_parse("12.6.9"))->version.str(), "12.6.3");
    EXPECT_EQ(fixed.cuda_release_for(*Version::try_parse("10.2.89"))->version.str(), "10.2.89");
    // version.json's third field is sometimes the installer's build date, not a patch
    // ("11.8.20220929", "12.2.20230823" in real toolkits): the minor's first release
    EXPECT_EQ(fixed.cuda_release_for(*Version::try_parse("12.2.20230823"))->version.str(),
              "12.2.0");
    EXPECT_EQ(fixed.cuda_release_for(*Version::try_parse("4.0")), nullptr);
}

// ---- arch, pcie, thermal, mig: what NVML and sysfs say about each GPU ----

// NVML's health counters, as the query child prints them: uncorrected ECC errors (volatile
// fails, lifetime warns), a remap pending (warn) or failed (fail), persistence off (warn).
TEST_F(DoctorProbes, HealthFromNvmlCounters) {
    auto f = probe(checks::health);
    EXPECT_EQ(f.status, Status::ok);
    EXPECT_EQ(f.summary, "1 GPU: NVML reports no ECC, memory repair or persistence state for them");
    nvml_says("gpu.0.persistence=1\ngpu.0.ecc_uncorrected_volatile=0\n"
              "gpu.0.ecc_uncorrected_aggregate=0\ngpu.0.remapped_rows=0\n"
              "gpu.0.remap_pending=0\ngpu.0.remap_failed=0\n");
    f = probe(checks::health);
    EXPECT_EQ(f.status, Status::ok);
    EXPECT_EQ(f.summary,
              "1 GPU: no uncorrected ECC errors, no memory repair pending, persistence mode on");
    nvml_says("gpu.0.persistence=0\ngpu.0.ecc_uncorrected_volatile=3\n"
              "gpu.0.ecc_uncorrected_aggregate=7\ngpu.0.remap_pending=1\n"
              "gpu.0.remap_failed=0\n");
    f = probe(checks::health);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "GPU 0 (NVIDIA A100-SXM4-40GB) has 3 uncorrected ECC memory errors since the driver "
              "loaded: results computed on it may be wrong");
    EXPECT_HAS(f.fix, "sudo nvidia-smi -r -i 0");
    // persistence mode off is said, not flagged (NVIDIA's default; healthy machines of the field
    // corpus print "Persistence-M Off")
    ASSERT_EQ(f.more.size(), 1u);
    EXPECT_HAS(f.more[0].summary, "row remapping waiting for a GPU reset");
    EXPECT_TRUE(std::any_of(f.details.begin(), f.details.end(), [](const std::string& d) {
        return d.find("persistence mode off on GPU 0") != std::string::npos &&
               d.find("nvidia-persistenced") != std::string::npos;
    }));
    nvml_says("gpu.0.ecc_uncorrected_volatile=0\ngpu.0.ecc_uncorrected_aggregate=2\n"
              "gpu.0.remap_pending=0\ngpu.0.remap_failed=1\n");
    f = probe(checks::health);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_HAS(f.summary, "could not remap a failing memory row");
    ASSERT_EQ(f.more.size(), 1u);
    EXPECT_EQ(f.more[0].status, Status::warn);
    EXPECT_HAS(f.more[0].summary, "has had 2 uncorrected ECC memory errors over its life");
}

// doctor --deep: the query child's smoke answers per device, as query.cpp prints them.
TEST_F(DoctorProbes, SmokeOnlyWithDeepAndEachDevicesResult) {
    auto f = probe(checks::smoke);
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_HAS(f.summary, "cudaenv doctor --deep");
    deep = true;
    children.answer("smoke",
                    libcuda,
                    "loaded=1\ninit_rc=0\ninit_error=CUDA_SUCCESS\ndevice_count=2\n"
                    "dev.0.name=NVIDIA H100 80GB HBM3\ndev.0.checked=4096\ndev.0.wrong=0\n"
                    "dev.0.ms=41.5\n"
                    "dev.1.name=NVIDIA H100 80GB HBM3\ndev.1.step=cuModuleLoadData\ndev.1.rc=218\n"
                    "dev.1.error=CUDA_ERROR_INVALID_PTX\ndev.1.ms=3.1\n");
    f = probe(checks::smoke);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "GPU 1 (NVIDIA H100 80GB HBM3): cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX "
              "(218)");
    EXPECT_TRUE(has_detail(f,
                           "GPU 0 (NVIDIA H100 80GB HBM3): kernel compiled, launched and "
                           "checked (4096 values) in 41.5 ms"));
    children.answer("smoke", libcuda, "loaded=1\ninit_rc=100\ninit_error=CUDA_ERROR_NO_DEVICE\n");
    f = probe(checks::smoke);
    EXPECT_EQ(f.summary, "cuInit fails: CUDA_ERROR_NO_DEVICE (100): no CUDA program can run");
}

TEST_F(DoctorProbes, ArchWithinTheSelectedCudasRange) {
    auto f = probe(checks::arch);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_EQ(f.summary, "GPU 0 (NVIDIA A100-SXM4-40GB) sm_80 within CUDA 12.4's sm_50 to sm_90");
    EXPECT_EQ(f.details,
              std::vector<std::string>{
                  "GPU 0 (NVIDIA A100-SXM4-40GB): compute capability 8.0 (from NVML)"});
}

TEST_F(DoctorProbes, ArchOlderThanTheRangeFailsAndNewerWarns) {
    nvml_says("gpu.0.cc=3.5\n");
    auto f = probe(checks::arch);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "GPU 0 (NVIDIA A100-SXM4-40GB) sm_35 is older than CUDA 12.4 supports (sm_50 to "
              "sm_90)");
    // the edges of the range are inside it
    nvml_says("gpu.0.cc=5.0\n");
    EXPECT_EQ(probe(checks::arch).status, Status::ok);
    nvml_says("gpu.0.cc=9.0\n");
    EXPECT_EQ(probe(checks::arch).status, Status::ok);
    nvml_says("gpu.0.cc=10.0\n");
    f = probe(checks::arch);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_STARTS(f.summary,
                  "GPU 0 (NVIDIA A100-SXM4-40GB) sm_100 is newer than CUDA 12.4's newest target "
                  "(sm_90)");
}

TEST_F(DoctorProbes, ArchFallsBackToTheGpuTableAndThePciId) {
    nvml_says(""); // no gpu.0.cc
    auto f = probe(checks::arch);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_TRUE(one_detail_with(f, "compute capability 8.0 (from the GPU table)"));
    // no NVML at all and no name: the PCI device id's chip family
    children.forget("nvml", libnvml);
    f = probe(checks::arch);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_TRUE(one_detail_with(f, "compute capability 8.0 (from PCI device"));
    // without a toolkit there is no range to judge by
    remove("/usr/local/cuda");
    EXPECT_EQ(probe(checks::arch).status, Status::skip);
}

TEST_F(DoctorProbes, PcieNarrowLinkWarnsAndFullLinkIsOk) {
    std::string dev = "/sys/bus/pci/devices/0000:65:00.0/";
    EXPECT_EQ(probe(checks::pcie).status, Status::skip); // no link files in the fixture
    write(dev + "current_link_width", "16\n");
    write(dev + "max_link_width", "16\n");
    write(dev + "current_link_speed", "16.0 GT/s PCIe\n");
    write(dev + "max_link_speed", "16.0 GT/s PCIe\n");
    auto f = probe(checks::pcie);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_EQ(f.summary, "every GPU's link at its full width");
    EXPECT_TRUE(one_detail_with(f, ": x16 at 16 GT/s (the GPU can do x16 at 16 GT/s)"));
    write(dev + "current_link_width", "8\n");
    f = probe(checks::pcie);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_STARTS(f.summary, "GPU 0 (");
    EXPECT_HAS(f.summary, "runs at x8 of x16: host-to-device bandwidth is lower");
    EXPECT_HAS(f.fix, "x16 slot");
}

TEST_F(DoctorProbes, PcieSlowerNowIsOnlyANoteButASlowSlotWarns) {
    // the device below a bridge, as sysfs links it
    remove("/sys/bus/pci/devices/0000:65:00.0");
    std::string real = "/sys/devices/pci0000:64/0000:64:02.0/0000:65:00.0/";
    pci_device(real, "0x030200", "0x20b0");
    write(real + "current_link_width", "16\n");
    write(real + "max_link_width", "16\n");
    write(real + "current_link_speed", "2.5 GT/s PCIe\n"); // idle
    write(real + "max_link_speed", "16.0 GT/s PCIe\n");
    write("/sys/devices/pci0000:64/0000:64:02.0/max_link_speed", "16.0 GT/s PCIe\n");
    link("/sys/bus/pci/devices/0000:65:00.0",
         "../../../devices/pci0000:64/0000:64:02.0/0000:65:00.0");
    auto f = probe(checks::pcie);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    bool noted = false;
    for (const auto& d : f.details) {
        noted = noted || d.find("below its top speed now") != std::string::npos;
    }
    EXPECT_TRUE(noted);
    write("/sys/devices/pci0000:64/0000:64:02.0/max_link_speed", "8.0 GT/s PCIe\n");
    f = probe(checks::pcie);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_HAS(f.summary, "sits in a 8 GT/s slot (the GPU can do 16 GT/s)");
}

TEST_F(DoctorProbes, ThermalByTemperatureAndThrottleReasons) {
    EXPECT_EQ(probe(checks::thermal).status, Status::skip); // the fixture reports none
    nvml_says("gpu.0.temperature=55\ngpu.0.slowdown_temperature=90\n");
    auto f = probe(checks::thermal);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_EQ(f.summary, "temperatures normal, no thermal or hardware throttling");
    // 5 degrees below the slowdown is near it; 6 is not
    nvml_says("gpu.0.temperature=84\ngpu.0.slowdown_temperature=90\n");
    EXPECT_EQ(probe(checks::thermal).status, Status::ok);
    nvml_says("gpu.0.temperature=85\ngpu.0.slowdown_temperature=90\n");
    f = probe(checks::thermal);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_STARTS(f.summary,
                  "GPU 0 (NVIDIA A100-SXM4-40GB) at 85 °C is near its slowdown temperature");
    // without a slowdown threshold, 85 °C is the line
    nvml_says("gpu.0.temperature=84\n");
    EXPECT_EQ(probe(checks::thermal).status, Status::ok);
    nvml_says("gpu.0.temperature=85\n");
    EXPECT_EQ(probe(checks::thermal).status, Status::warn);
    // a hardware thermal slowdown (0x40) at a cool temperature still warns
    nvml_says("gpu.0.temperature=60\ngpu.0.slowdown_temperature=90\n"
              "gpu.0.throttle_reasons=72\n"); // 0x48
    f = probe(checks::thermal);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_STARTS(f.summary,
                  "GPU 0 (NVIDIA A100-SXM4-40GB) is throttled (hardware slowdown, hardware "
                  "thermal slowdown) at 60 °C");
    // the power cap (0x4) alone is normal under load
    nvml_says("gpu.0.temperature=60\ngpu.0.slowdown_temperature=90\n"
              "gpu.0.throttle_reasons=4\n");
    f = probe(checks::thermal);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_TRUE(one_detail_with(f, "clock event reasons 0x4 (power cap: normal under full load)"));
}

TEST_F(DoctorProbes, ThermalAndMigSkipWithoutNvml) {
    children.forget("nvml", libnvml);
    for (auto* p : {checks::thermal, checks::mig}) {
        auto f = probe(p);
        EXPECT_EQ(f.status, Status::skip);
        EXPECT_STARTS(f.summary, "NVML is not available: ");
    }
}

TEST_F(DoctorProbes, MigOnPendingAndOff) {
    auto f = probe(checks::mig);
    EXPECT_EQ(f.status, Status::ok);
    EXPECT_TRUE(one_detail_with(f, ": MIG not supported"));
    nvml_says("gpu.0.mig_current=0\ngpu.0.mig_pending=0\n");
    f = probe(checks::mig);
    EXPECT_EQ(f.status, Status::ok);
    EXPECT_EQ(f.summary, "MIG off on every GPU");
    nvml_says("gpu.0.mig_current=1\ngpu.0.mig_pending=1\n"
              "gpu.0.mig.0=1g.5gb\ngpu.0.mig.1=3g.20gb\n");
    f = probe(checks::mig);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_STARTS(f.summary, "GPU 0 (NVIDIA A100-SXM4-40GB) is in MIG mode with 2 instances");
    EXPECT_STARTS(f.fix, "if the whole card is wanted: sudo nvidia-smi -i 0 -mig 0");
    EXPECT_TRUE(one_detail_with(f, "MIG on, instances: 1g.5gb, 3g.20gb"));
    nvml_says("gpu.0.mig_current=0\ngpu.0.mig_pending=1\n");
    f = probe(checks::mig);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_EQ(f.summary, "GPU 0 (NVIDIA A100-SXM4-40GB) has a MIG change pending a GPU reset");
    // MIG on and no instance made: CUDA sees nothing on the card
    nvml_says("gpu.0.mig_current=1\ngpu.0.mig_pending=1\n");
    f = probe(checks::mig);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "GPU 0 (NVIDIA A100-SXM4-40GB) is in MIG mode with no instances: CUDA sees no "
              "device on it (\"no CUDA-capable device is detected\")");
    EXPECT_STARTS(f.fix, "create instances (sudo nvidia-smi mig -i 0 -cgi <profile> -C");
}

// ---- compiler: the host compiler nvcc will call ----

TEST_F(DoctorProbes, CompilerWithinTheLimitIsOk) {
    EXPECT_EQ(probe(checks::compiler).status, Status::skip); // no gcc or clang on PATH
    program("/usr/bin/gcc", "13.2.0\n");
    auto f = probe(checks::compiler);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_EQ(f.summary, "gcc 13.2.0 within what CUDA 12.4's nvcc accepts");
    ASSERT_FALSE(f.details.empty());
    EXPECT_EQ(f.details.back(), "/usr/bin/gcc: gcc 13.2.0; CUDA 12.4 accepts up to 13");
    EXPECT_TRUE(children.ran("-dumpfullversion"));
}

TEST_F(DoctorProbes, CompilerTooNewWarnsWithAFixThisNvccObeys) {
    program("/usr/bin/gcc", "14.2.0\n");
    auto f = probe(checks::compiler);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_EQ(f.summary,
              "gcc 14.2.0 is newer than CUDA 12.4 accepts (<= 13): nvcc stops with \"unsupported "
              "GNU version\"");
    // this nvcc does not read NVCC_CCBIN: the fix goes through the flags
    EXPECT_HAS(f.fix, "export NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-13'");
    // one that does is told NVCC_CCBIN
    executable(std::string(k_cuda) + "/bin/nvcc", "#!/bin/sh\n# reads NVCC_CCBIN\n");
    f = probe(checks::compiler);
    EXPECT_HAS(f.fix, "export NVCC_CCBIN=/usr/bin/g++-13");
}

TEST_F(DoctorProbes, CompilerFollowsCcbinInTheFlags) {
    program("/usr/bin/gcc", "14.2.0\n");
    program("/opt/gcc12/bin/gcc", "12.3.0\n");
    env["NVCC_PREPEND_FLAGS"] = "-O2 --compiler-bindir='/opt/gcc12/bin'";
    env["NVCC_CCBIN"] = "/usr/bin/gcc";
    auto f = probe(checks::compiler);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_EQ(f.summary, "gcc 12.3.0 within what CUDA 12.4's nvcc accepts");
    EXPECT_TRUE(has_detail(f, "NVCC_PREPEND_FLAGS gives -ccbin /opt/gcc12/bin")) << f.summary;
    EXPECT_TRUE(has_detail(f, "NVCC_CCBIN=/usr/bin/gcc (the -ccbin flag wins over it)"))
        << f.summary;
}

TEST_F(DoctorProbes, CompilerNvccCcbinIgnoredByAnNvccThatDoesNotReadIt) {
    program("/usr/bin/gcc", "14.2.0\n");
    write("/opt/gcc12/bin/gcc", "#!/bin/sh\n");
    children.programs["/opt/gcc12/bin/gcc"] = exited(0, "12.3.0\n");
    env["NVCC_CCBIN"] = "/opt/gcc12/bin/gcc";
    auto f = probe(checks::compiler);
    EXPECT_EQ(f.status, Status::warn) << f.summary; // the gcc on PATH is what nvcc calls
    EXPECT_TRUE(has_detail(f,
                           "NVCC_CCBIN=/opt/gcc12/bin/gcc is ignored: CUDA 12.4's nvcc does not "
                           "read NVCC_CCBIN"))
        << f.summary;
    executable(std::string(k_cuda) + "/bin/nvcc", "#!/bin/sh\n# reads NVCC_CCBIN\n");
    f = probe(checks::compiler);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_EQ(f.summary, "gcc 12.3.0 within what CUDA 12.4's nvcc accepts");
}

TEST_F(DoctorProbes, CompilerATooNewClangAloneIsOnlyANote) {
    program("/usr/bin/gcc", "12.3.0\n");
    program("/usr/bin/clang", "19.1.0\n");
    auto f = probe(checks::compiler);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_EQ(f.summary, "gcc 12.3.0, clang 19.1.0 within what CUDA 12.4's nvcc accepts");
    EXPECT_TRUE(has_detail(f, "clang 19.1.0 is newer than CUDA 12.4 accepts (<= 17)")) << f.summary;
}

TEST_F(DoctorProbes, ClangsVersionIsReadFromItsLayoutWithoutRunningIt) {
    program("/usr/bin/gcc", "12.3.0\n");
    // Debian's clang 14: /usr/bin/clang -> ../lib/llvm-14/bin/clang, resources in lib/clang/14.0.6
    program("/usr/lib/llvm-14/bin/clang", "14.0.6\n");
    link("/usr/bin/clang", "../lib/llvm-14/bin/clang");
    write("/usr/lib/llvm-14/lib/clang/14.0.6/include/stddef.h");
    auto f = probe(checks::compiler);
    EXPECT_EQ(f.summary, "gcc 12.3.0, clang 14.0.6 within what CUDA 12.4's nvcc accepts");
    EXPECT_TRUE(children.ran("-dumpfullversion")); // gcc is asked
    for (const auto& c : children.calls) {
        EXPECT_EQ(c[0].find("clang"), std::string::npos) << c[0] << " was run";
    }
    // clang 16 and later name the folder by the major version only: clang is asked
    remove("/usr/lib/llvm-14/lib/clang/14.0.6");
    write("/usr/lib/llvm-14/lib/clang/14/include/stddef.h");
    children.programs["/usr/lib/llvm-14/bin/clang"] = exited(0, "14.0.7\n");
    f = probe(checks::compiler);
    EXPECT_EQ(f.summary, "gcc 12.3.0, clang 14.0.7 within what CUDA 12.4's nvcc accepts");
    // two resource folders: which one is this clang's is not known, so it is asked
    write("/usr/lib/llvm-14/lib/clang/15.0.1/include/stddef.h");
    EXPECT_EQ(probe(checks::compiler).summary,
              "gcc 12.3.0, clang 14.0.7 within what CUDA 12.4's nvcc accepts");
    // a wrapper that is not clang (ccache) is asked too
    remove("/usr/lib/llvm-14/lib/clang/14");
    remove("/usr/lib/llvm-14/lib/clang/15.0.1");
    write("/usr/lib/ccache/lib/clang/14.0.6/x");
    executable("/usr/lib/ccache/bin/ccache", "#!/bin/sh\n");
    link("/usr/bin/clang", "../lib/ccache/bin/ccache");
    children.programs["/usr/lib/ccache/bin/ccache"] = exited(0, "14.0.9\n");
    EXPECT_EQ(probe(checks::compiler).summary,
              "gcc 12.3.0, clang 14.0.9 within what CUDA 12.4's nvcc accepts");
}

// ---- cudnn: where it is found when the toolkit has none ----

TEST_F(DoctorProbes, CudnnFromTheLoaderWhenTheToolkitHasNone) {
    for (const char* sub : k_cudnn9_libraries) {
        remove(std::string(k_cuda) + "/lib64/" + sub + ".so.9");
    }
    children.ld_cache =
        cache_line("libcudart.so.12", std::string(k_cuda) + "/lib64/libcudart.so.12");
    auto f = probe(checks::cudnn);
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_STARTS(f.summary, "no cuDNN with the selected toolkit or on the loader path");
    // a system cuDNN the loader knows
    std::string sys_lib = std::string(k_lib) + "/libcudnn.so.9";
    write(sys_lib, "elf");
    children.ld_cache += cache_line("libcudnn.so.9", sys_lib);
    children.answer("cudnn", sys_lib, "loaded=1\nversion=90101\ncudart_version=12020\n");
    f = probe(checks::cudnn);
    ASSERT_FALSE(f.details.empty());
    EXPECT_STARTS(f.details[0],
                  "libcudnn: " + std::string(k_lib) + "/libcudnn.so.9 (found by the loader");
}

TEST_F(DoctorProbes, CudnnTheLoaderPicksAnotherVersionThanTheToolkits) {
    std::string other = "/opt/cudnn/lib/libcudnn.so.9";
    write(other, "elf");
    children.answer("cudnn", other, "loaded=1\nversion=90000\ncudart_version=12020\n");
    env["LD_LIBRARY_PATH"] = "/opt/cudnn/lib";
    auto f = probe(checks::cudnn);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary,
              "programs load cuDNN 9.0.0 from /opt/cudnn/lib/libcudnn.so.9, not the selected "
              "9.1.1 in /usr/local/cuda-12.4/lib64");
}

// ---- frameworks: what the active Python environment will load ----

class DoctorFrameworks : public DoctorProbes {
  protected:
    static constexpr const char* k_site = "/venv/lib/python3.11/site-packages";

    void SetUp() override {
        DoctorProbes::SetUp();
        fs::create_directories(sys / "venv/lib/python3.11/site-packages");
        env["VIRTUAL_ENV"] = "/venv";
    }

    void dist(const std::string& name, const std::string& version) {
        write(std::string(k_site) + "/" + name + "-" + version + ".dist-info/METADATA",
              "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n");
    }
};

TEST_F(DoctorFrameworks, NoEnvironmentOrNoFrameworkIsASkip) {
    env.erase("VIRTUAL_ENV");
    auto f = probe(checks::frameworks);
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_STARTS(f.summary, "no active Python environment found");
    env["VIRTUAL_ENV"] = "/venv";
    f = probe(checks::frameworks);
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_EQ(f.summary, "no TensorFlow, PyTorch or JAX in " + std::string(k_site));
}

TEST_F(DoctorFrameworks, TensorflowCpuInsteadOfTensorflowWarns) {
    dist("tensorflow_cpu", "2.13.0");
    auto f = probe(checks::frameworks);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_EQ(f.summary,
              "tensorflow-cpu 2.13.0 is installed instead of tensorflow: TensorFlow will never "
              "use the GPU");
    EXPECT_EQ(f.fix,
              "pip uninstall -y tensorflow-cpu && pip install 'tensorflow[and-cuda]==2.13.0'");
}

TEST_F(DoctorFrameworks, TensorflowWithoutBuildInfoOrCpuOnlyWarns) {
    dist("tensorflow", "2.13.0");
    auto f = probe(checks::frameworks);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_EQ(f.summary, "tensorflow 2.13.0 has no build_info.py");
    write(std::string(k_site) + "/tensorflow/python/platform/build_info.py",
          "is_cuda_build = False\n");
    f = probe(checks::frameworks);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_EQ(f.summary, "tensorflow 2.13.0 is a CPU-only build");
    EXPECT_EQ(f.fix, "pip install 'tensorflow[and-cuda]==2.13.0'");
}

TEST_F(DoctorFrameworks, TensorflowForACudaThatWillNotLoadFails) {
    // TF 2.13 was built with CUDA 11.8; the machine has only CUDA 12's runtime
    dist("tensorflow", "2.13.0");
    write(std::string(k_site) + "/tensorflow/python/platform/build_info.py",
          "build_info = {'cuda_version': '11.8', 'cudnn_version': '8', 'is_cuda_build': True}\n"
          "is_cuda_build = True\ncuda_version = '11.8'\ncudnn_version = '8'\n");
    auto f = probe(checks::frameworks);
    EXPECT_EQ(f.status, Status::fail) << f.summary;
    EXPECT_STARTS(f.summary,
                  "tensorflow 2.13.0 needs CUDA 11.8 (libcudart.so.11.0) but none will load: it "
                  "falls back to the CPU");
    EXPECT_EQ(f.fix, "cudaenv install tf-2.13 && cudaenv use tf-2.13");
}

// Forward compatibility (probes/compat.cpp): the selected toolkit's compat/ against this machine.
class DoctorCompat : public DoctorProbes {
  protected:
    /// The toolkit installed with --compat: its record says it needs `needs`, the compat
    /// libraries are driver 560.35.03's, and the A100 (20b0) is among the supported GPUs.
    void install_compat(const std::string& needs) {
        write(std::string(k_cuda) + "/.cudaenv-compat",
              "needs " + needs + "\ncompat 560.35.03\ngpus 20b0 2330\n");
        write(std::string(k_cuda) + "/compat/libcuda.so.560.35.03", "elf");
        link(std::string(k_cuda) + "/compat/libcuda.so.1", "libcuda.so.560.35.03");
    }

    void compat_answers(const std::string& lines) {
        children.answer("cuda", std::string(k_cuda) + "/compat/libcuda.so.560.35.03", lines);
    }
};

TEST_F(DoctorCompat, NotNeededWhereTheDriverRunsTheToolkit) {
    auto f = probe(checks::compat);
    EXPECT_EQ(f.status, Status::ok);
    EXPECT_STARTS(f.summary, "not needed: driver 550.54.15 runs CUDA 12.4");
}

TEST_F(DoctorCompat, UsedAndAnsweringIsOk) {
    install_compat("560.35.03");
    compat_answers("loaded=1\nversion_rc=0\nversion=12060\ninit_rc=0\n");
    auto f = probe(checks::compat);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_HAS(f.summary, "runs on driver 550.54.15 through the version's forward-compatibility");
}

TEST_F(DoctorCompat, Error803NamesTheBranchRule) {
    install_compat("560.35.03");
    compat_answers("loaded=1\nversion_rc=0\nversion=12060\ninit_rc=803\n");
    auto f = probe(checks::compat);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_HAS(f.summary, "error 803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)");
    EXPECT_HAS(f.fix, "install driver >= 560.35.03");
}

TEST_F(DoctorCompat, AGeForceIsNeverGivenTheCompatLibraries) {
    install_compat("560.35.03");
    write("/sys/bus/pci/devices/0000:65:00.0/device", "0x2684\n"); // a GeForce RTX 4090
    auto f = probe(checks::compat);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_HAS(f.summary, "error 804");
    EXPECT_HAS(f.fix, "install driver >= 560.35.03");
    EXPECT_FALSE(children.ran(sys.string() + std::string(k_cuda) + "/compat/libcuda.so.1"));
}

TEST_F(DoctorCompat, InstalledButNotUsedOnANewEnoughDriver) {
    install_compat("545.23.06");
    auto f = probe(checks::compat);
    EXPECT_EQ(f.status, Status::ok);
    EXPECT_STARTS(f.summary, "installed, not used: driver 550.54.15 runs it");
}

TEST_F(DoctorCompat, ADriverTooOldForAReleaseWithCompatSuggestsIt) {
    write(std::string(k_cuda) + "/version.json", R"({"cuda": {"version": "13.3.1"}})");
    write("/proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 2025\n");
    auto f = probe(checks::compat);
    EXPECT_EQ(f.status, Status::warn) << f.summary;
    EXPECT_HAS(f.summary, "driver 580.65.06 is older than the 610.43.02 CUDA 13.3.1 needs");
    EXPECT_HAS(f.fix, "cudaenv install 13.3.1 --compat");
}

// gpu-support.json's forward_compat marks cover the ids the open-module lists hold (Turing on):
// a Tesla V100 (10de:1db4, never listed) is a data-center part forward compatibility runs on and
// is not told it cannot use it; a GeForce GTX 1080 (10de:1b80, never listed) is told.
TEST_F(DoctorCompat, AGpuTheMarksDoNotCoverIsJudgedByItsName) {
    write("/usr/share/misc/pci.ids",
          "10de  NVIDIA Corporation\n\t1b80  GP104 [GeForce GTX 1080]\n"
          "\t1db4  GV100GL [Tesla V100 PCIe 16GB]\n");
    write(std::string(k_cuda) + "/version.json", R"({"cuda": {"version": "13.3.1"}})");
    write("/proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 2025\n");
    write("/sys/bus/pci/devices/0000:65:00.0/device", "0x1db4\n");
    auto f = probe(checks::compat);
    EXPECT_EQ(f.status, Status::warn) << f.summary;
    EXPECT_HAS(f.fix, "cudaenv install 13.3.1 --compat");
    write("/sys/bus/pci/devices/0000:65:00.0/device", "0x1b80\n");
    f = probe(checks::compat);
    EXPECT_EQ(f.status, Status::skip) << f.summary;
    EXPECT_HAS(f.summary, "GP104 [GeForce GTX 1080]");
}

TEST_F(DoctorCompat, ADriverTooOldForAReleaseWithoutCompatSaysItCannotHelp) {
    write("/proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 2023\n");
    auto f = probe(checks::compat);
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_HAS(f.summary, "NVIDIA ships no cuda_compat for it");
}

// From 13.4 cuda_compat is in NVIDIA's per-driver index: with none known for 13.4 (R615), the
// probe says the manifests do not know one, not that NVIDIA ships none.
TEST_F(DoctorCompat, From134WithoutAKnownDriverIndexItSaysSo) {
    write(std::string(k_cuda) + "/version.json", R"({"cuda": {"version": "13.4.2"}})");
    write("/proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 2025\n");
    auto f = probe(checks::compat);
    EXPECT_EQ(f.status, Status::skip) << f.summary;
    EXPECT_HAS(f.summary, "the manifests know no driver index with cuda_compat for it");
}

TEST_F(DoctorCompat, ACompatLibcudaOnTheMachineWideLoaderPathFails) {
    install_compat("560.35.03");
    write("/etc/ld.so.conf.d/000_cuda-compat.conf", std::string(k_cuda) + "/compat\n");
    children.ld_cache = "1 libs found in cache `/etc/ld.so.cache'\n" +
                        cache_line("libcuda.so.1", std::string(k_cuda) + "/compat/libcuda.so.1");
    auto f = probe(checks::compat);
    EXPECT_EQ(f.status, Status::fail) << f.summary;
    EXPECT_HAS(f.summary, "error 803");
    EXPECT_HAS(f.fix, "take the compat folder out of /etc/ld.so.conf.d");
}

TEST_F(DoctorCompat, ADamagedRecordFails) {
    write(std::string(k_cuda) + "/.cudaenv-compat", "needs 560.35.03\n");
    auto f = probe(checks::compat);
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_HAS(f.summary, "is damaged");
}

/// The played children behind a gate: a child waits until `want` run at once, or until patience
/// runs out (a run that starts them one after the other then fails instead of hanging); after the
/// first crowd, every child passes. Safe to call from several threads; counts each command line.
class GatedChildren : public sys::ProcessRunner {
  public:
    GatedChildren(const PlayedChildren& inner, std::size_t want) : m_inner(inner), m_want(want) {}

    Result<sys::ProcessResult> run(const std::vector<std::string>& argv,
                                   const sys::ProcessOptions& o) const override {
        std::unique_lock lock(m_mutex);
        std::string line;
        for (const auto& a : argv) {
            line += (line.empty() ? "" : " ") + a;
        }
        ++asked[line];
        ++m_running;
        most = std::max(most, m_running);
        if (m_running >= m_want) {
            m_open = true; // the crowd met: every child passes from now on
            m_changed.notify_all();
        }
        if (!m_changed.wait_for(lock, std::chrono::seconds(5), [&] { return m_open; })) {
            waited_out = true;
            m_open = true; // patience ran out: the rest pass, and the test fails
        }
        --m_running;
        return m_inner.run(argv, o); // under the lock: the played children are one thread's
    }

    mutable std::map<std::string, int> asked; ///< read once the run is over
    mutable std::size_t most = 0;
    mutable bool waited_out = false;

  private:
    const PlayedChildren& m_inner;
    std::size_t m_want;
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_changed;
    mutable std::size_t m_running = 0;
    mutable bool m_open = false;
};

/// A run's findings as text, to compare two runs.
std::string report_of(const std::vector<Entry>& entries) {
    std::string out;
    for (const auto& e : entries) {
        out += std::string(e.probe->id) + " " + std::string(to_string(e.finding.status)) + " " +
               e.finding.summary + " | " + e.finding.fix + "\n";
        for (const auto& d : e.finding.details) {
            out += "  " + d + "\n";
        }
        for (const auto& m : e.finding.more) {
            out +=
                "  + " + std::string(to_string(m.status)) + " " + m.summary + " | " + m.fix + "\n";
        }
    }
    return out;
}

TEST_F(DoctorProbes, AFullRunStartsItsRememberedChildrenAtOnceAndAsksEachOnce) {
    program("/usr/bin/gcc", "13.2.0\n");
    program("/usr/bin/clang", "17.0.6\n");
    // ldconfig -p, nvcc, gcc, clang and the toolkit's libcudart run at once; libcudnn, found
    // through the loader's pick, after ldconfig
    GatedChildren gate(children, 5);
    // a query child that exists: its answers are kept (keyed by the helper's identity too)
    auto self = dir.path() / "cudaenv";
    std::ofstream(self) << "elf";
    auto config = [&] {
        auto c = DoctorProbes::config();
        c.self_exe = self;
        return c;
    };
    std::string together;
    {
        Answers answers(dir.path() / "root" / "cache" / "doctor-answers.json");
        auto c = config();
        c.processes = &gate;
        c.answers = &answers;
        Host h(c);
        together = report_of(run(h));
        answers.save();
    }
    EXPECT_FALSE(gate.waited_out) << "the children ran one after the other";
    EXPECT_GE(gate.most, 5u);
    std::string lib64 = sys.string() + k_cuda + "/lib64/";
    for (const std::string& line :
         {"/sbin/ldconfig -r " + sys.string() + " -p",
          sys.string() + k_cuda + "/bin/nvcc --version",
          sys.string() + "/usr/bin/gcc -dumpfullversion -dumpversion",
          sys.string() + "/usr/bin/clang -dumpversion",
          self.string() + " __doctor-query cudart " + lib64 + "libcudart.so.12.4.127",
          self.string() + " __doctor-query cudnn " + lib64 + "libcudnn.so.9"}) {
        EXPECT_EQ(gate.asked[line], 1) << line;
    }
    for (const auto& [line, n] : gate.asked) {
        EXPECT_EQ(n, 1) << line; // every child once, live ones included
    }
    // the same findings as one child after the other, with nothing remembered
    Host serial(config());
    EXPECT_EQ(together, report_of(run(serial)));
    // and warm: only the live children start, the findings the same
    gate.asked.clear();
    {
        Answers answers(dir.path() / "root" / "cache" / "doctor-answers.json");
        auto c = config();
        c.processes = &gate;
        c.answers = &answers;
        Host h(c);
        EXPECT_EQ(together, report_of(run(h)));
    }
    for (const auto& [line, n] : gate.asked) {
        EXPECT_NE(line.find("__doctor-query"), std::string::npos) << line;
        EXPECT_EQ(line.find("__doctor-query cudart"), std::string::npos) << line;
        EXPECT_EQ(line.find("__doctor-query cudnn"), std::string::npos) << line;
    }
}

// -- the machine diagnosed is the sysroot's, not the build's -----------------------------------

TEST_F(DoctorProbes, ASysrootSaysItsOwnArchitectureAndTriplet) {
    // the open module names its architecture ("... Open Kernel Module for aarch64 ...")
    write("/proc/driver/nvidia/version",
          "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.65.06  Release Build\n");
    {
        Host h(config());
        EXPECT_EQ(h.files().machine().kind, sys::HostKind::arm_server);
        EXPECT_EQ(h.files().triplet(), "aarch64-linux-gnu");
        auto dirs = h.loader().default_lib_dirs();
        ASSERT_GE(dirs.size(), 2u);
        EXPECT_EQ(dirs[0], "/lib/aarch64-linux-gnu");
        EXPECT_EQ(dirs[1], "/usr/lib/aarch64-linux-gnu");
        EXPECT_EQ(sys::cuda_targets(h.files().machine()), std::vector<std::string>{"sbsa-linux"});
        EXPECT_TRUE(h.files().jetson_cannot("x").empty());
    }
    // an L4T release file makes it a Jetson, whatever the module says
    write("/etc/nv_tegra_release",
          "# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64, DATE: "
          "Fri Aug 22 00:55:42 UTC 2025\n");
    write("/proc/device-tree/compatible",
          std::string("nvidia,p4071-0000+p3834-0008\0nvidia,p3834-0008\0nvidia,tegra264\0", 63));
    Host h(config());
    const auto& m = h.files().machine();
    ASSERT_EQ(m.kind, sys::HostKind::jetson);
    ASSERT_TRUE(m.jetson);
    EXPECT_EQ(m.jetson->soc, "thor");
    EXPECT_EQ(m.jetson->l4t, "38.2.0");
    EXPECT_EQ(h.files().jetson_cannot("why"), "cannot be checked on Jetson (L4T 38.2.0): why");
    EXPECT_EQ(sys::cuda_targets(m), (std::vector<std::string>{"sbsa-linux", "aarch64-linux"}));
}

TEST_F(DoctorProbes, AnX86SysrootStaysX86) {
    write("/usr/lib/x86_64-linux-gnu/libc.so.6");
    Host h(config());
    EXPECT_EQ(h.files().machine().kind, sys::HostKind::x86_64);
    EXPECT_EQ(h.loader().default_lib_dirs()[0], "/lib/x86_64-linux-gnu");
}

TEST_F(DoctorProbes, AJetsonsIntegratedGpuIsNotAMissingPciGpu) {
    remove("/sys/bus/pci/devices");
    write("/etc/nv_tegra_release",
          "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64\n");
    write("/proc/device-tree/compatible",
          std::string("nvidia,p3737-0000+p3701-0005\0nvidia,p3701-0005\0nvidia,tegra234\0", 63));
    auto f = probe(checks::gpu);
    EXPECT_EQ(f.status, Status::ok) << f.summary;
    EXPECT_EQ(f.summary, "Jetson Orin integrated GPU (nvidia,tegra234)");
    f = probe(checks::pcie);
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_EQ(f.summary,
              "cannot be checked on Jetson (L4T 36.4.3): the integrated GPU is not on "
              "the PCI bus");
    f = probe(checks::driver);
    EXPECT_HAS(f.summary, "Jetson Orin, L4T 36.4.3 (JetPack 6)");
    f = probe(checks::grace);
    EXPECT_EQ(f.status, Status::skip);
}

// -- advisories: what the machine runs, read through the Host, and the probe's verdict -------

/// "product version (where)" for each subject.
std::vector<std::string> subject_lines(const std::vector<advisory::Subject>& subjects) {
    std::vector<std::string> out;
    for (const auto& s : subjects) {
        out.push_back(std::string(manifest::to_string(s.product)) + " " + s.version.str() + " (" +
                      s.where + ")" + (s.datacenter ? " datacenter" : ""));
    }
    return out;
}

TEST_F(DoctorProbes, AdvisorySubjectsAreTheDriverTheSelectedToolkitAndItsCublas) {
    Host h(config());
    // the A100 is a data-center product; libcublas.so.12 alone names no full version
    EXPECT_EQ(subject_lines(advisory_subjects(h)),
              (std::vector<std::string>{"driver 550.54.15 (this machine) datacenter",
                                        "toolkit 12.4.1 (the selected toolkit /usr/local/cuda)"}));
    // the library's full version in its file name
    write(std::string(k_cuda) + "/lib64/libcublas.so.12.4.5.8", "elf");
    Host with_lib(config());
    auto subjects = advisory_subjects(with_lib);
    ASSERT_EQ(subjects.size(), 3u);
    EXPECT_EQ(subjects[2].product, manifest::AdvisoryProduct::cublas);
    EXPECT_EQ(subjects[2].version.str(), "12.4.5.8");
    EXPECT_EQ(subjects[2].cuda, "12.4.1");
    EXPECT_EQ(subjects[2].gpu_ccs, (std::vector<unsigned>{80})); // the A100's 8.0
    // version.json's libcublas before the file names (NVIDIA's toolkit installer writes it)
    write(std::string(k_cuda) + "/version.json",
          R"({"cuda": {"version": "12.4.1"}, "libcublas": {"name": "CUDA cuBLAS",
          "version": "12.4.5.8"}})");
    write(std::string(k_cuda) + "/lib64/libcublas.so.12.4.2.65", "elf");
    Host by_json(config());
    EXPECT_EQ(toolkit_cublas(by_json, k_cuda)->str(), "12.4.5.8");
    // a toolkit made of NVIDIA's pip wheels: the nvidia_cublas dist-info's version
    remove(std::string(k_cuda) + "/version.json");
    remove(std::string(k_cuda) + "/lib64/libcublas.so.12.4.5.8");
    remove(std::string(k_cuda) + "/lib64/libcublas.so.12.4.2.65");
    fs::create_directories(sys / "usr/local/cuda-12.4/dist-info/nvidia_cublas-12.4.5.8.dist-info");
    Host by_wheel(config());
    EXPECT_EQ(toolkit_cublas(by_wheel, k_cuda)->str(), "12.4.5.8");
    remove(std::string(k_cuda) + "/dist-info");
    Host none(config());
    EXPECT_FALSE(toolkit_cublas(none, k_cuda));
}

TEST_F(DoctorProbes, AdvisorySubjectsTakeTheContainerToolkitFromDpkgElseNvidiaCtk) {
    // dpkg's status as on a Debian host (the shape of this machine's /var/lib/dpkg/status), the
    // packages NVIDIA's install guide names (nvidia-container-toolkit and -base, "1.17.8-1":
    // github.com/NVIDIA/cloud-native-docs PR #470)
    write("/var/lib/dpkg/status",
          "Package: libc6\nStatus: install ok installed\nPriority: optional\nSection: libs\n"
          "Architecture: amd64\nVersion: 2.36-9+deb12u14\nDescription: GNU C Library\n"
          " Contains the standard libraries.\n\n"
          "Package: nvidia-container-toolkit-base\nStatus: install ok installed\n"
          "Architecture: amd64\nVersion: 1.17.7-1\n\n");
    // and nvidia-ctk on PATH saying another version: dpkg is read first
    program("/usr/bin/nvidia-ctk",
            "NVIDIA Container Toolkit CLI version 1.12.0\n"
            "commit: 62bd015475656ef795cb0d59cc4030a6bd4a9526\n");
    Host h(config());
    auto lines = subject_lines(advisory_subjects(h, {true, false, false}));
    EXPECT_EQ(lines,
              (std::vector<std::string>{"driver 550.54.15 (this machine) datacenter",
                                        "container-toolkit 1.17.7 (this machine)"}));
    // removed, its configuration kept: not installed; nvidia-ctk says what runs
    write("/var/lib/dpkg/status",
          "Package: nvidia-container-toolkit-base\nStatus: deinstall ok config-files\n"
          "Architecture: amd64\nVersion: 1.17.7-1\n\n");
    Host removed(config());
    lines = subject_lines(advisory_subjects(removed, {true, false, false}));
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[1], "container-toolkit 1.12.0 (this machine)");
    EXPECT_TRUE(std::any_of(children.calls.begin(), children.calls.end(), [](const auto& argv) {
        return argv.size() == 2 && argv[0].ends_with("/usr/bin/nvidia-ctk") &&
               argv[1] == "--version";
    }));
    // neither: nothing said
    remove("/usr/bin/nvidia-ctk");
    Host neither(config());
    EXPECT_EQ(advisory_subjects(neither, {true, false, false}).size(), 1u);
}

TEST_F(DoctorProbes, AdvisoriesProbeFailsOnACriticalOneAndWarnsOnTheOthers) {
    auto f = probe(checks::advisories);
    // driver 550.54.15 (5614, 5630) and CUDA 12.4.1 (5594, 5643, 5661, 5755): warnings
    EXPECT_EQ(f.status, Status::warn) << f.summary;
    ASSERT_EQ(f.more.size(), 5u) << details_of(f);
    EXPECT_EQ(f.summary,
              "NVIDIA-5594 (low, CVSS 3.3): CUDA 12.4.1 in the selected toolkit /usr/local/cuda "
              "is affected; fixed in 12.8");
    EXPECT_EQ(f.fix, "use CUDA 12.8 or newer (cudaenv install 12.8)");
    EXPECT_EQ(f.more[0].summary,
              "NVIDIA-5614 (high, CVSS 7.8): driver 550.54.15 in this machine is affected; fixed "
              "in 550.144.03");
    EXPECT_EQ(f.more[0].status, Status::warn);
    EXPECT_TRUE(has_detail(f,
                           "R550 is not listed by the later driver bulletins NVIDIA-5670, "
                           "NVIDIA-5703, NVIDIA-5747, NVIDIA-5821, NVIDIA-5861: NVIDIA does not "
                           "say whether it is affected; a branch it stops listing may no longer "
                           "get fixes"));
    // the container toolkit 1.17.7: NVIDIA-5659 is critical, and fails
    write("/var/lib/dpkg/status",
          "Package: nvidia-container-toolkit\nStatus: install ok installed\n"
          "Architecture: amd64\nVersion: 1.17.7-1\n\n");
    f = probe(checks::advisories);
    EXPECT_EQ(f.status, Status::fail) << f.summary;
    EXPECT_STARTS(f.summary, "NVIDIA-5659 (critical, CVSS 9.0): NVIDIA Container Toolkit 1.17.7");
    EXPECT_EQ(f.fix,
              "upgrade the NVIDIA Container Toolkit to 1.17.8 or newer (apt-get install "
              "nvidia-container-toolkit)");
    EXPECT_TRUE(has_detail(f, "  CDI mode only for versions prior to 1.17.5"));
    // acknowledged: shown with the reason, not counted
    auto c = config();
    c.acknowledged = {{"NVIDIA-5659", "CDI is off here; upgrade booked"}};
    Host h(c);
    f = checks::advisories(h);
    EXPECT_EQ(f.status, Status::warn) << f.summary;
    EXPECT_TRUE(has_detail(f,
                           "acknowledged: NVIDIA-5659 for NVIDIA Container Toolkit 1.17.7 (this "
                           "machine): CDI is off here; upgrade booked"));
    // a manifests folder without advisories.json: skipped, saying why
    test::TempDir empty;
    auto c2 = config();
    c2.manifests = empty.path();
    Host old(c2);
    f = checks::advisories(old);
    EXPECT_EQ(f.status, Status::skip);
    EXPECT_HAS(f.summary, "carry no advisories");
    // one that does not load: a warning naming it, never a crash
    empty.write("advisories.json",
                "{\"schema\": \"cudaenv.manifest/1\", \"kind\": \"advisories\"}");
    Host broken(c2);
    f = checks::advisories(broken);
    EXPECT_EQ(f.status, Status::warn);
    EXPECT_HAS(f.summary, "the advisories manifest does not load");
}

} // namespace
} // namespace cudaenv::doctor
