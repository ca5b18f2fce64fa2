// What the advisories are checked against, from the texts a machine gives: dpkg's status file and
// `nvidia-ctk --version` (doctor/advisory_subjects). The Host-level reading (the driver, the
// selected toolkit's cuBLAS, dpkg before nvidia-ctk) is in probes_test.cpp.
#include "core/doctor/advisory_subjects.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

using namespace cudaenv;
using namespace cudaenv::doctor;

namespace {

/// A version the test spells out.
Version V(const std::string& s) {
    return Version::try_parse(s).value();
}

std::string ver(const std::optional<Version>& v) {
    return v ? v->str() : "-";
}

// Stanzas in the shape of a real /var/lib/dpkg/status (Debian 12's libc6 copied from this
// machine's), with the NVIDIA Container Toolkit's packages as NVIDIA's install guide names them
// (nvidia-container-toolkit, nvidia-container-toolkit-base, versions "1.17.8-1":
// github.com/NVIDIA/cloud-native-docs PR #470).
const char* k_status =
    "Package: libc6\n"
    "Status: install ok installed\n"
    "Priority: optional\n"
    "Section: libs\n"
    "Installed-Size: 13001\n"
    "Maintainer: GNU Libc Maintainers <debian-glibc@lists.debian.org>\n"
    "Architecture: amd64\n"
    "Multi-Arch: same\n"
    "Source: glibc\n"
    "Version: 2.36-9+deb12u14\n"
    "Replaces: libc6-amd64\n"
    "Depends: libgcc-s1\n"
    "Conffiles:\n"
    " /etc/ld.so.conf.d/x86_64-linux-gnu.conf d4e7a7b88a71b5ffd9e2644e71a0cfab\n"
    "Description: GNU C Library: Shared libraries\n"
    " Contains the standard libraries that are used by nearly all programs on\n"
    " the system.\n"
    "Homepage: https://www.gnu.org/software/libc/libc.html\n"
    "\n"
    "Package: nvidia-container-toolkit-base\n"
    "Status: install ok installed\n"
    "Priority: optional\n"
    "Section: utils\n"
    "Installed-Size: 22318\n"
    "Maintainer: NVIDIA CORPORATION <cudatools@nvidia.com>\n"
    "Architecture: amd64\n"
    "Source: nvidia-container-toolkit\n"
    "Version: 1.17.8-1\n"
    "Description: NVIDIA Container Toolkit Base\n"
    " Provides tools such as the NVIDIA Container Runtime and NVIDIA Container Toolkit CLI.\n"
    "\n"
    "Package: nvidia-container-toolkit\n"
    "Status: install ok installed\n"
    "Architecture: amd64\n"
    "Source: nvidia-container-toolkit\n"
    "Version: 1.17.8-1\n"
    "Depends: nvidia-container-toolkit-base (= 1.17.8-1), libnvidia-container-tools (>= 1.17.8-1)\n"
    "Description: NVIDIA Container toolkit\n"
    "\n";

} // namespace

TEST(AdvisorySubjects, DpkgInstalledVersionIsTheUpstreamVersionOfAnInstalledPackage) {
    EXPECT_EQ(ver(dpkg_installed_version(k_status, "nvidia-container-toolkit")), "1.17.8");
    EXPECT_EQ(ver(dpkg_installed_version(k_status, "nvidia-container-toolkit-base")), "1.17.8");
    EXPECT_EQ(ver(dpkg_installed_version(k_status, "libc6")), "2.36");
    // a name that is a prefix of another's is not it
    EXPECT_EQ(ver(dpkg_installed_version(k_status, "nvidia-container")), "-");
    EXPECT_EQ(ver(dpkg_installed_version(k_status, "libnvidia-container-tools")), "-");
    EXPECT_EQ(ver(dpkg_installed_version("", "libc6")), "-");
}

TEST(AdvisorySubjects, DpkgRemovedOrHalfInstalledIsNotInstalled) {
    for (const char* status : {"deinstall ok config-files",
                               "purge ok not-installed",
                               "install ok half-installed",
                               "install ok unpacked",
                               "install reinstreq half-configured"}) {
        std::string text = std::string("Package: nvidia-container-toolkit\nStatus: ") + status +
                           "\nArchitecture: amd64\nVersion: 1.17.7-1\n\n";
        EXPECT_EQ(ver(dpkg_installed_version(text, "nvidia-container-toolkit")), "-") << status;
    }
    // held at its version, or marked for removal but still there: installed
    for (const char* status : {"hold ok installed", "deinstall ok installed"}) {
        std::string text = std::string("Package: nvidia-container-toolkit\nStatus: ") + status +
                           "\nVersion: 1.17.7-1\n";
        EXPECT_EQ(ver(dpkg_installed_version(text, "nvidia-container-toolkit")), "1.17.7")
            << status;
    }
    // a removed stanza before an installed one of the same name (another architecture)
    std::string two = "Package: nvidia-container-toolkit\nStatus: deinstall ok config-files\n"
                      "Architecture: i386\nVersion: 1.16.2-1\n\n"
                      "Package: nvidia-container-toolkit\nStatus: install ok installed\n"
                      "Architecture: amd64\nVersion: 1.17.3-1\n";
    EXPECT_EQ(ver(dpkg_installed_version(two, "nvidia-container-toolkit")), "1.17.3");
}

TEST(AdvisorySubjects, DpkgVersionsLoseTheirEpochRevisionAndPreReleaseMark) {
    auto one = [](const std::string& version) {
        return ver(dpkg_installed_version("Package: nvidia-container-toolkit\n"
                                          "Status: install ok installed\nVersion: " +
                                              version + "\n",
                                          "nvidia-container-toolkit"));
    };
    EXPECT_EQ(one("1:1.17.8-1ubuntu1"), "1.17.8");
    EXPECT_EQ(one("1.17.8"), "1.17.8");
    EXPECT_EQ(one("1.17.8-1\r"), "1.17.8");
    // NVIDIA's experimental repository: "1.18.0~rc.1-1", read as the release it comes before
    EXPECT_EQ(one("1.18.0~rc.1-1"), "1.18.0");
    EXPECT_EQ(one("not-a-version"), "-");
}

TEST(AdvisorySubjects, DpkgStatusOfThisMachineAgreesWithDpkgQuery) {
    std::ifstream in("/var/lib/dpkg/status");
    if (!in) {
        GTEST_SKIP() << "no /var/lib/dpkg/status here";
    }
    std::stringstream text;
    text << in.rdbuf();
    // dpkg itself: one architecture only (libc6 may be there for two)
    FILE* p = popen("dpkg-query -W -f='${Version}\\n' dpkg 2>/dev/null", "r");
    if (!p) {
        GTEST_SKIP() << "no dpkg-query";
    }
    char buf[256] = {};
    std::string out(buf, std::fread(buf, 1, sizeof buf - 1, p));
    if (pclose(p) != 0 || out.empty()) {
        GTEST_SKIP() << "dpkg-query does not know dpkg here";
    }
    out = out.substr(0, out.find('\n'));
    // 1.21.22 -> 1.21.22, 2.36-9+deb12u14 -> 2.36: the upstream version, numerically
    std::string upstream = out.substr(out.find(':') == std::string::npos ? 0 : out.find(':') + 1);
    upstream = upstream.substr(0, upstream.rfind('-'));
    auto got = dpkg_installed_version(text.str(), "dpkg");
    ASSERT_TRUE(got) << out;
    EXPECT_TRUE(Version::compare_numeric(*got, V(upstream)) == 0) << out;
}

TEST(AdvisorySubjects, NvidiaCtkVersionIsReadFromItsBanner) {
    // the real output of `nvidia-ctk --version` (github.com/NVIDIA/nvidia-container-toolkit
    // issue #50)
    EXPECT_EQ(ver(parse_nvidia_ctk_version("NVIDIA Container Toolkit CLI version 1.12.0\n"
                                           "commit: 62bd015475656ef795cb0d59cc4030a6bd4a9526\n")),
              "1.12.0");
    EXPECT_EQ(ver(parse_nvidia_ctk_version("NVIDIA Container Toolkit CLI version 1.17.8")),
              "1.17.8");
    EXPECT_EQ(ver(parse_nvidia_ctk_version("NVIDIA Container Toolkit CLI version 1.14.0-rc.1\n")),
              "1.14.0");
    EXPECT_EQ(ver(parse_nvidia_ctk_version("nvidia-ctk: command not found\n")), "-");
    EXPECT_EQ(ver(parse_nvidia_ctk_version("NVIDIA Container Toolkit CLI version \n")), "-");
    EXPECT_EQ(ver(parse_nvidia_ctk_version("")), "-");
}
