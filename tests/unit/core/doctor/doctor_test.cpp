// The doctor's pure parts: parsers for what the machine prints, the Host's view of a sysroot
// (links followed inside it, the loader configuration), and the runner's skip rule.
#include "core/doctor/doctor.hpp"
#include "core/doctor/host.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace cudaenv::doctor {
namespace {

namespace fs = std::filesystem;

TEST(DoctorParse, DriverVersionFromProc) {
    EXPECT_EQ(
        parse_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat "
                             "Aug 19 01:15:15 UTC 2023\nGCC version: gcc 12\n"),
        "535.104.05");
    EXPECT_EQ(parse_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                   "550.54.15  Release Build  (dvs-builder@U16)\n"),
              "550.54.15");
    EXPECT_EQ(parse_driver_version("garbage"), std::nullopt);
    EXPECT_EQ(parse_driver_version(""), std::nullopt);
}

TEST(DoctorParse, NvccBanner) {
    auto v =
        parse_nvcc_banner("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, "
                          "release 11.8, V11.8.89\nBuild cuda_11.8.r11.8/compiler.31833905_0\n");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->str(), "11.8.89");
    auto old = parse_nvcc_banner("Cuda compilation tools, release 9.2, V9.2.148");
    ASSERT_TRUE(old);
    EXPECT_EQ(old->str(), "9.2.148");
    EXPECT_FALSE(parse_nvcc_banner("nvcc fatal   : No input files specified"));
}

TEST(DoctorParse, CudartSonames) {
    auto v = [](const char* s) { return *Version::try_parse(s); };
    EXPECT_EQ(cudart_soname(v("11.8")), "libcudart.so.11.0");
    EXPECT_EQ(cudart_soname(v("12.4.1")), "libcudart.so.12");
    EXPECT_EQ(cudart_soname(v("13.0")), "libcudart.so.13");
    // CUDA 10.x and older: major.minor, as NVIDIA's 10.x packages name it (ldconfig -p on a
    // CUDA 10.2 machine lists libcudart.so.10.2)
    EXPECT_EQ(cudart_soname(v("10.2.89")), "libcudart.so.10.2");
    EXPECT_EQ(cudart_soname(v("10.0")), "libcudart.so.10.0");
    EXPECT_EQ(cudart_soname(v("9.0.176")), "libcudart.so.9.0");
}

class DoctorHost : public ::testing::Test {
  protected:
    test::TempDir dir;
    fs::path sys = dir.path() / "sys";

    void write(const std::string& machine_path, const std::string& text) {
        fs::path p = sys / fs::path(machine_path).relative_path();
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text;
    }

    HostConfig config() {
        HostConfig c;
        c.sysroot = sys;
        c.root.dir = dir.path() / "root";
        c.manifests = CUDAENV_TEST_MANIFESTS;
        return c;
    }
};

TEST_F(DoctorHost, AbsoluteLinksStayInsideTheSysroot) {
    write("/usr/local/cuda-12.4/version.json", R"({"cuda": {"version": "12.4.1"}})");
    fs::create_directories(sys / "usr/local");
    fs::create_symlink("/usr/local/cuda-12.4", sys / "usr/local/cuda");
    Host h(config());
    EXPECT_TRUE(h.files().is_dir("/usr/local/cuda"));
    EXPECT_EQ(h.files().canonical("/usr/local/cuda"), "/usr/local/cuda-12.4");
    EXPECT_EQ(h.files().read_link("/usr/local/cuda"), "/usr/local/cuda-12.4");
    auto v = h.facts().toolkit_version("/usr/local/cuda");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->str(), "12.4.1");
    // a dangling link exists as an entry but leads nowhere
    fs::create_symlink("/usr/local/cuda-11.2", sys / "usr/local/cuda-old");
    EXPECT_TRUE(h.files().exists("/usr/local/cuda-old"));
    EXPECT_FALSE(h.files().is_dir("/usr/local/cuda-old"));
    // a loop leads nowhere (not to the host's own /usr/local/cuda), and so does climbing out
    fs::create_symlink("/usr/local/loop", sys / "usr/local/loop");
    EXPECT_TRUE(h.files().exists("/usr/local/loop"));
    EXPECT_FALSE(h.files().is_dir("/usr/local/loop"));
    EXPECT_EQ(h.files().canonical("/usr/local/loop"), "");
    EXPECT_EQ(h.files().read("/usr/local/loop/version.json"), std::nullopt);
    fs::create_symlink("../../../../../../../../usr/local/cuda-12.4", sys / "usr/local/up");
    EXPECT_EQ(h.files().canonical("/usr/local/up"), "/usr/local/cuda-12.4");
}

TEST_F(DoctorHost, LoaderConfigurationIncludesInOrder) {
    write("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n/opt/extra # trailing comment\n");
    write("/etc/ld.so.conf.d/zz-cuda.conf", "/usr/local/cuda-12.4/lib64\n");
    write("/etc/ld.so.conf.d/000-cudaenv.conf", "/usr/local/cuda/lib64\n");
    write("/etc/ld.so.conf.d/README", "/not/a/conf\n");
    write("/etc/ld.so.conf.d/multi.conf", "# comment\n/a:/b, /c=libc6\n");
    Host h(config());
    std::vector<std::string> dirs;
    for (const auto& c : h.loader().conf_dirs()) {
        dirs.push_back(c.dir);
    }
    EXPECT_EQ(dirs,
              (std::vector<std::string>{"/usr/local/cuda/lib64",
                                        "/a",
                                        "/b",
                                        "/c",
                                        "/usr/local/cuda-12.4/lib64",
                                        "/opt/extra"}));
    EXPECT_EQ(h.loader().conf_dirs().front().file, "/etc/ld.so.conf.d/000-cudaenv.conf");
}

TEST_F(DoctorHost, PciGpusAreNvidiaDisplayControllersOnly) {
    write("/sys/bus/pci/devices/0000:65:00.0/vendor", "0x10de\n");
    write("/sys/bus/pci/devices/0000:65:00.0/class", "0x030200\n");
    write("/sys/bus/pci/devices/0000:65:00.0/device", "0x2330\n");
    write("/sys/bus/pci/devices/0000:65:00.1/vendor", "0x10de\n"); // its audio function
    write("/sys/bus/pci/devices/0000:65:00.1/class", "0x040300\n");
    write("/sys/bus/pci/devices/0000:03:00.0/vendor", "0x1002\n");
    write("/sys/bus/pci/devices/0000:03:00.0/class", "0x030000\n");
    write("/usr/share/misc/pci.ids",
          "10de  NVIDIA Corporation\n\t2330  GH100 [H100 SXM5 80GB]\n\t\t10de 16c1  H100 SXM5\n"
          "10df  Emulex\n");
    Host h(config());
    ASSERT_EQ(h.facts().pci_gpus().size(), 1u);
    EXPECT_EQ(h.facts().pci_gpus()[0].address, "0000:65:00.0");
    EXPECT_EQ(h.facts().pci_gpus()[0].name, "GH100 [H100 SXM5 80GB]");
}

TEST_F(DoctorHost, EnvironmentAndPath) {
    write("/opt/cuda/bin/nvcc", "#!/bin/sh\n");
    fs::permissions(sys / "opt/cuda/bin/nvcc", fs::perms::owner_all);
    auto c = config();
    c.env = {{"PATH", "/usr/bin::/opt/cuda/bin"}, {"EMPTY", ""}};
    Host h(c);
    EXPECT_EQ(h.files().which("nvcc"), "/opt/cuda/bin/nvcc");
    EXPECT_EQ(h.files().which("gcc"), std::nullopt);
    EXPECT_EQ(h.files().path_list("PATH"), (std::vector<std::string>{"/usr/bin", "/opt/cuda/bin"}));
    EXPECT_EQ(h.files().env("EMPTY"), "");
    EXPECT_EQ(h.files().env("UNSET"), std::nullopt);
}

TEST(DoctorRunner, ProbesAreUniqueAndStandOnEarlierOrKnownProbes) {
    std::set<std::string_view> ids;
    for (const auto& p : probes()) {
        EXPECT_TRUE(ids.insert(p.id).second) << p.id;
        EXPECT_NE(std::find(layers().begin(), layers().end(), p.layer), layers().end()) << p.id;
        for (auto need : p.needs) {
            EXPECT_NE(find_probe(need), nullptr) << p.id << " needs " << need;
        }
    }
    EXPECT_EQ(ids.size(), 28u); // grace: issue 39; advisories: issue 43
}

TEST_F(DoctorHost, NoGpuSkipsWhatStandsOnIt) {
    write("/proc/sys/kernel/osrelease", "6.1.0\n");
    Host h(config());
    auto entries = run(h, {"gpu", "arch", "pcie"});
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[0].finding.status, Status::fail);
    for (std::size_t i = 1; i < 3; ++i) {
        EXPECT_EQ(entries[i].finding.status, Status::skip);
        EXPECT_EQ(entries[i].finding.summary.rfind("skipped: gpu: no NVIDIA GPU", 0), 0u)
            << entries[i].finding.summary;
    }
    EXPECT_EQ(worst(entries), Status::fail);
}

} // namespace
} // namespace cudaenv::doctor
