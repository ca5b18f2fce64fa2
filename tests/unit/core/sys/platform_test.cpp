// The host as NVIDIA's archives see it, read from real machines' files: /etc/nv_tegra_release and
// the device tree's compatible as Jetson owners posted them in public bug reports (each sample
// names its thread), and platform_for, the one rule of which platform a host takes per release.
#include "core/sys/platform.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cudaenv::sys {
namespace {

using namespace std::string_literals;

// Jetson AGX Thor developer kit, JetPack 7.0 (jtop's raw output: `cat` prints the compatible's
// NUL separators as nothing): https://github.com/rbonghi/jetson_stats/issues/711
const std::string k_thor_release =
    "# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, "
    "EABI: aarch64, DATE: Fri Aug 22 00:55:42 UTC 2025\n";
const std::string k_thor_compatible =
    "nvidia,p4071-0000+p3834-0008\0nvidia,p3834-0008\0nvidia,tegra264\0"s;

// Jetson AGX Orin developer kit on JetPack 7.2 (L4T R39):
// https://github.com/rbonghi/jetson_stats/issues/864
const std::string k_orin_r39_release = "# R39 (release), REVISION: 2.0, GCID: 45755727, BOARD: "
                                       "generic, EABI: aarch64, DATE: Mon Jun  1 09:28:48 PM UTC "
                                       "2026\n";
// Jetson AGX Orin 64GB developer kit: https://github.com/NVIDIA/jetson-gpio/issues/125
const std::string k_orin_compatible =
    "nvidia,p3737-0000+p3701-0005\0nvidia,p3701-0005\0nvidia,tegra234\0nvidia,tegra23x\0"s;

// Jetson TX1 on JetPack 3.2: https://github.com/rbonghi/jetson_stats/issues/48
const std::string k_tx1_compatible = "nvidia,jetson-cv\0nvidia,tegra210\0"s;

// An Orin Nano on JetPack 6.2.1 (L4T 36.4.7), with the lines L4T 36.4 writes after the first.
// Verbatim from public Jetson notes the code search found (no thread URL to cite: the text
// appears in several notes, each `cat /etc/nv_tegra_release` on a real board).
const std::string k_orin_r36_release =
    "# R36 (release), REVISION: 4.7, GCID: 42132812, BOARD: generic, EABI: aarch64, DATE: Thu "
    "Sep 18 22:54:44 UTC 2025\n# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\n";

HostMachine jetson(const std::string& release, const std::string& compatible) {
    test::TempDir root;
    if (!release.empty()) {
        root.write("etc/nv_tegra_release", release);
    }
    if (!compatible.empty()) {
        root.write("proc/device-tree/compatible", compatible);
    }
    return read_host_machine(root.path(), "aarch64");
}

TEST(HostMachine, ThorFromItsRealFiles) {
    auto h = jetson(k_thor_release, k_thor_compatible);
    ASSERT_EQ(h.kind, HostKind::jetson);
    ASSERT_TRUE(h.jetson);
    EXPECT_EQ(h.jetson->soc, "thor");
    EXPECT_EQ(h.jetson->compatible, "nvidia,tegra264");
    EXPECT_EQ(h.jetson->l4t, "38.2.0");
    EXPECT_EQ(h.jetson->jetpack, "7");
}

TEST(HostMachine, OrinOnEachJetPack) {
    auto h = jetson(k_orin_r39_release, k_orin_compatible);
    ASSERT_TRUE(h.jetson);
    EXPECT_EQ(h.jetson->soc, "orin");
    EXPECT_EQ(h.jetson->compatible, "nvidia,tegra234"); // the first tegra entry, not tegra23x
    EXPECT_EQ(h.jetson->l4t, "39.2.0");
    EXPECT_EQ(h.jetson->jetpack, "7.2");

    h = jetson(k_orin_r36_release, k_orin_compatible);
    EXPECT_EQ(h.jetson->l4t, "36.4.7");
    EXPECT_EQ(h.jetson->jetpack, "6");

    // the device tree alone is enough; the release file alone too (SoC unknown)
    h = jetson("", k_orin_compatible);
    EXPECT_EQ(h.kind, HostKind::jetson);
    EXPECT_EQ(h.jetson->soc, "orin");
    EXPECT_EQ(h.jetson->l4t, "");
    h = jetson(k_orin_r36_release, "");
    EXPECT_EQ(h.kind, HostKind::jetson);
    EXPECT_EQ(h.jetson->soc, "");
    EXPECT_EQ(h.jetson->jetpack, "6");
}

TEST(HostMachine, OlderJetsonsAndShortRevisions) {
    // JetPack 4.5 wrote "REVISION: 5," with no minor (L4T 32.5), as a public Jetson TensorFlow
    // setup note quotes it (code search; no thread URL)
    auto h = jetson("# R32 (release), REVISION: 5, GCID: 25531747, BOARD: t186ref, EABI: "
                    "aarch64, DATE: Sat Nov 07 23:21:05 UTC 2020\n",
                    k_tx1_compatible);
    EXPECT_EQ(h.jetson->l4t, "32.5");
    EXPECT_EQ(h.jetson->jetpack, "4");
    EXPECT_EQ(h.jetson->soc, "nano"); // tegra210: Nano and TX1
    // the B01 parts name their chip "tegra210b01" (jetson_stats issue #319's SoC)
    h = jetson("", "nvidia,p3541-0000\0nvidia,tegra210b01\0"s);
    EXPECT_EQ(h.jetson->soc, "nano");
    EXPECT_EQ(h.jetson->compatible, "nvidia,tegra210b01");
}

TEST(HostMachine, ServersAndOthers) {
    test::TempDir root;
    EXPECT_EQ(read_host_machine(root.path(), "aarch64").kind, HostKind::arm_server);
    EXPECT_EQ(read_host_machine(root.path(), "x86_64").kind, HostKind::x86_64);
    EXPECT_EQ(read_host_machine(root.path(), "ppc64le").kind, HostKind::other);
    // a non-NVIDIA device tree is no Jetson
    root.write("proc/device-tree/compatible", "raspberrypi,4-model-b\0brcm,bcm2711\0"s);
    EXPECT_EQ(read_host_machine(root.path(), "aarch64").kind, HostKind::arm_server);
}

TEST(PlatformFor, EachHostEachRelease) {
    auto orin = jetson(k_orin_r36_release, k_orin_compatible);
    auto thor = jetson(k_thor_release, k_thor_compatible);
    test::TempDir empty;
    auto grace = read_host_machine(empty.path(), "aarch64");
    auto x86 = read_host_machine(empty.path(), "x86_64");

    EXPECT_EQ(platform_for(x86, 12, 4).platform, "linux-x86_64");
    EXPECT_EQ(platform_for(grace, 11, 8).platform, "linux-sbsa");
    EXPECT_EQ(platform_for(grace, 13, 0).platform, "linux-sbsa");

    EXPECT_EQ(platform_for(orin, 11, 8).platform, "linux-aarch64");
    EXPECT_EQ(platform_for(orin, 12, 6).platform, "linux-aarch64");
    for (int minor : {0, 1}) {
        auto c = platform_for(orin, 13, minor);
        EXPECT_EQ(c.platform, "");
        EXPECT_NE(c.refusal.find("13.2"), std::string::npos) << c.refusal;
        EXPECT_NE(c.refusal.find("JetPack 7.2"), std::string::npos) << c.refusal;
    }
    auto c = platform_for(orin, 13, 2);
    EXPECT_EQ(c.platform, "linux-sbsa");
    EXPECT_EQ(c.compat_component, "cuda_compat_orin");
    EXPECT_EQ(platform_for(orin, 14, 0).compat_component, "cuda_compat_orin");

    EXPECT_EQ(platform_for(thor, 13, 0).platform, "linux-sbsa");
    EXPECT_EQ(platform_for(thor, 13, 0).compat_component, "");
    c = platform_for(thor, 12, 6);
    EXPECT_EQ(c.platform, "");
    EXPECT_NE(c.refusal.find("JetPack 7"), std::string::npos) << c.refusal;
    EXPECT_NE(c.refusal.find("13.0"), std::string::npos) << c.refusal;

    EXPECT_EQ(default_platform(orin), "linux-aarch64");
    EXPECT_EQ(default_platform(thor), "linux-sbsa");
    EXPECT_EQ(default_platform(grace), "linux-sbsa");
}

} // namespace
} // namespace cudaenv::sys
