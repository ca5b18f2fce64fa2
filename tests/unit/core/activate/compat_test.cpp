// Forward compatibility's decision (compat.hpp): compat/ goes first only where the driver is
// older than the release needs and every GPU supports it; the record's format; what exec and
// modulefiles make of it.
#include "core/activate/compat.hpp"
#include "core/activate/environment.hpp"
#include "core/activate/modulefile.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

namespace cudaenv::activate {
namespace {

using Kind = CompatState::Kind;

CompatFile h100_file() {
    return {Version::parse("610.43.02").value(),
            Version::parse("610.43.02").value(),
            {"2330", "2331", "2236/10de:1482"}};
}

sys::MachineGpus machine(const char* driver, std::vector<sys::PciGpuIds> gpus) {
    sys::MachineGpus m;
    if (driver) {
        m.driver = Version::parse(driver).value();
    }
    m.gpus = std::move(gpus);
    return m;
}

const sys::PciGpuIds k_h100{"0000:65:00.0", "2330", "10de:16c1"};
const sys::PciGpuIds k_rtx4090{"0000:01:00.0", "2684", "10de:165b"};

class Compat : public ::testing::Test {
  protected:
    test::TempDir dir;
    std::filesystem::path prefix = dir.path() / "13.3.1";

    void install_compat(const CompatFile& f) {
        dir.write("13.3.1/.cudaenv-compat", encode_compat_file(f));
    }
};

TEST(CompatFileFormat, RoundTripsAndRefusesWhatItDoesNotKnow) {
    auto f = h100_file();
    auto back = parse_compat_file(encode_compat_file(f));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->needs.str(), "610.43.02");
    EXPECT_EQ(back->compat.str(), "610.43.02");
    EXPECT_EQ(back->gpus, f.gpus);
    EXPECT_FALSE(parse_compat_file("needs 610.43.02\ncompat 610.43.02\n")); // no gpus line
    EXPECT_FALSE(parse_compat_file("needs 610\ncompat 610.43.02\ngpus 2330 ZZZZ\n"));
    EXPECT_FALSE(parse_compat_file("needs 610\ncompat 610.43.02\ngpus 2330\nrm -rf /\n"));
    EXPECT_FALSE(parse_compat_file("needs x\ncompat 610.43.02\ngpus\n"));
    EXPECT_TRUE(parse_compat_file("# c\nneeds 610\ncompat 610.43.02\ngpus\n"));
}

TEST(CompatFileFormat, SubsystemEntriesMatchOnlyThatSubsystem) {
    std::vector<std::string> gpus{"2330", "2236/10de:1482"};
    EXPECT_TRUE(forward_compat_listed(gpus, "2330", "17aa:0001"));
    EXPECT_TRUE(forward_compat_listed(gpus, "2236", "10de:1482"));
    EXPECT_FALSE(forward_compat_listed(gpus, "2236", "10de:0000"));
    EXPECT_FALSE(forward_compat_listed(gpus, "2684", ""));
}

TEST_F(Compat, NotInstalledWithoutTheRecord) {
    auto s = compat_state(prefix, machine("535.104.05", {k_h100}));
    EXPECT_EQ(s.kind, Kind::not_installed);
    EXPECT_FALSE(s.use());
}

TEST_F(Compat, UsedOnAnOlderDriverWithADataCenterGpu) {
    install_compat(h100_file());
    auto s = compat_state(prefix, machine("580.65.06", {k_h100}));
    EXPECT_EQ(s.kind, Kind::used) << s.why;
    EXPECT_EQ(s.dir, prefix / "compat");
    EXPECT_NE(s.why.find("580.65.06 is older than the 610.43.02"), std::string::npos) << s.why;
}

TEST_F(Compat, NotUsedWhenTheDriverSuffices) {
    install_compat(h100_file());
    for (const char* d : {"610.43.02", "615.20.01"}) {
        auto s = compat_state(prefix, machine(d, {k_h100}));
        EXPECT_EQ(s.kind, Kind::driver_suffices) << d;
    }
}

TEST_F(Compat, NotUsedOnAGeForceEvenBesideADataCenterGpu) {
    install_compat(h100_file());
    auto s = compat_state(prefix, machine("580.65.06", {k_h100, k_rtx4090}));
    EXPECT_EQ(s.kind, Kind::gpu_unsupported);
    EXPECT_EQ(s.gpu, "10de:2684");
    EXPECT_NE(s.why.find("error 804"), std::string::npos) << s.why;
}

TEST_F(Compat, NotUsedWithoutADriverOrAGpu) {
    install_compat(h100_file());
    EXPECT_EQ(compat_state(prefix, machine(nullptr, {k_h100})).kind, Kind::no_driver);
    EXPECT_EQ(compat_state(prefix, machine("580.65.06", {})).kind, Kind::no_gpu);
}

TEST_F(Compat, ADamagedRecordIsNeverUsed) {
    dir.write("13.3.1/.cudaenv-compat", "needs 610.43.02\ngpus 2330\n");
    auto s = compat_state(prefix, machine("580.65.06", {k_h100}));
    EXPECT_EQ(s.kind, Kind::damaged);
    EXPECT_FALSE(s.use());
}

TEST_F(Compat, TheMachineIsReadUnderTheSysroot) {
    install_compat(h100_file());
    test::TempDir root;
    root.write("proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 2025\n");
    auto dev = std::string("sys/bus/pci/devices/0000:65:00.0/");
    root.write(dev + "vendor", "0x10de\n");
    root.write(dev + "class", "0x030200\n");
    root.write(dev + "device", "0x2330\n");
    EXPECT_EQ(compat_state(prefix, root.path()).kind, Kind::used);
    root.write(dev + "device", "0x2684\n");
    EXPECT_EQ(compat_state(prefix, root.path()).kind, Kind::gpu_unsupported);
}

TEST_F(Compat, ExecPutsCompatFirstOnlyWhereItIsUsed) {
    install_compat(h100_file());
    test::TempDir root;
    root.write("proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 2025\n");
    root.write("sys/bus/pci/devices/0000:65:00.0/vendor", "0x10de\n");
    root.write("sys/bus/pci/devices/0000:65:00.0/class", "0x030200\n");
    root.write("sys/bus/pci/devices/0000:65:00.0/device", "0x2330\n");
    std::map<std::string, std::string> env{{"LD_LIBRARY_PATH", "/opt/x"}};
    auto vars = version_environment(prefix, {dir.path()}, env, root.path());
    EXPECT_EQ(vars["LD_LIBRARY_PATH"],
              (prefix / "compat").string() + ":" + (prefix / "lib64").string() + ":/opt/x");
    root.write("proc/driver/nvidia/version",
               "NVRM version: NVIDIA UNIX x86_64 Kernel Module  615.20.01  Sun Jul 27 2026\n");
    vars = version_environment(prefix, {dir.path()}, env, root.path());
    EXPECT_EQ(vars["LD_LIBRARY_PATH"], (prefix / "lib64").string() + ":/opt/x");
}

// An Orin as its files say (jetson-gpio issue #125's compatible; L4T R39 is JetPack 7.2:
// platform_test.cpp has the samples and their threads).
void orin_files(const test::TempDir& root) {
    root.write("etc/nv_tegra_release",
               "# R39 (release), REVISION: 2.0, GCID: 45755727, BOARD: generic, EABI: aarch64\n");
    using namespace std::string_literals;
    root.write("proc/device-tree/compatible",
               "nvidia,p3737-0000+p3701-0005\0nvidia,p3701-0005\0nvidia,tegra234\0"s);
}

TEST_F(Compat, AnOrinPutsCompatOrinFirstAndNoOtherMachineDoes) {
    dir.write("13.3.1/compat_orin/libcuda.so.1", "orin's user-mode driver");
    std::map<std::string, std::string> env{{"LD_LIBRARY_PATH", "/opt/x"}};
    test::TempDir root;
    // the decision, on the machine as its files and uname say
    EXPECT_FALSE(compat_orin_dir(prefix, sys::read_host_machine(root.path(), "aarch64")));
    orin_files(root);
    EXPECT_EQ(compat_orin_dir(prefix, sys::read_host_machine(root.path(), "aarch64")),
              prefix / "compat_orin");
    EXPECT_FALSE(compat_orin_dir(prefix, sys::read_host_machine(root.path(), "x86_64")));
    EXPECT_FALSE(
        compat_orin_dir(dir.path() / "12.6.3", sys::read_host_machine(root.path(), "aarch64")));
    // what exec and env do here, with this machine's uname
    test::TempDir server;
    if (sys::read_host_machine(root.path()).machine != "aarch64") {
        // not aarch64: compat_orin is never used, whatever the files say
        EXPECT_FALSE(compat_orin_dir(prefix, root.path()));
        auto vars = version_environment(prefix, {dir.path()}, env, root.path());
        EXPECT_EQ(vars["LD_LIBRARY_PATH"], (prefix / "lib64").string() + ":/opt/x");
        return;
    }
    EXPECT_FALSE(compat_orin_dir(prefix, server.path())); // an Arm server: not used
    ASSERT_TRUE(compat_orin_dir(prefix, root.path()));
    auto vars = version_environment(prefix, {dir.path()}, env, root.path());
    EXPECT_EQ(vars["LD_LIBRARY_PATH"],
              (prefix / "compat_orin").string() + ":" + (prefix / "lib64").string() + ":/opt/x");
}

TEST_F(Compat, AVersionWithCompatOrinAsksTheShimInItsModulefile) {
    ModuleInfo info{"13.3.1", "13.3.1", "", "/usr/libexec/cudaenv/cudaenv-shim"};
    dir.write("13.3.1/compat_orin/libcuda.so.1", "orin's user-mode driver");
    auto lua = modulefile(prefix, info, ModuleFormat::lua);
    EXPECT_NE(lua.find("__compat '" + prefix.string() + "'"), std::string::npos) << lua;
}

TEST_F(Compat, ModulefilesAskTheShimAtLoadTimeAndLast) {
    ModuleInfo info{"13.3.1", "13.3.1", "", "/usr/libexec/cudaenv/cudaenv-shim"};
    auto without = modulefile(prefix, info, ModuleFormat::lua);
    EXPECT_EQ(without.find("__compat"), std::string::npos);
    install_compat(h100_file());
    auto lua = modulefile(prefix, info, ModuleFormat::lua);
    auto ask = lua.find("capture(\"'/usr/libexec/cudaenv/cudaenv-shim' __compat '" +
                        prefix.string() + "' 2>/dev/null\")");
    ASSERT_NE(ask, std::string::npos) << lua;
    EXPECT_GT(ask, lua.rfind("prepend_path(\"LD_LIBRARY_PATH\", \"")); // last: ends up first
    auto tcl = modulefile(prefix, info, ModuleFormat::tcl);
    EXPECT_NE(tcl.find("exec \"/usr/libexec/cudaenv/cudaenv-shim\" __compat"), std::string::npos)
        << tcl;
    info.shim.clear();
    EXPECT_EQ(modulefile(prefix, info, ModuleFormat::lua).find("__compat"), std::string::npos);
}

} // namespace
} // namespace cudaenv::activate
