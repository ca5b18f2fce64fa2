// A PCI device id's chip family and compute capability, and the verdict a probe builds from
// every problem it found.
#include "core/doctor/doctor.hpp"
#include "core/doctor/pci_chips.hpp"

#include <gtest/gtest.h>

namespace cudaenv::doctor {
namespace {

TEST(PciChips, KnownIdsGiveTheirChipFamily) {
    EXPECT_EQ(chip_of_device("0x2330")->compute_capability, 90u); // H100 SXM5
    EXPECT_EQ(chip_of_device("0x20b0")->compute_capability, 80u); // A100
    EXPECT_EQ(chip_of_device("2684")->compute_capability, 89u);   // RTX 4090, no 0x
    EXPECT_EQ(chip_of_device("0x1EB8")->compute_capability, 75u); // T4, upper case
    EXPECT_EQ(chip_of_device("0x2b85")->compute_capability, 120u);
    EXPECT_EQ(chip_of_device("0x2330")->chip, "GH100");
}

TEST(PciChips, UnknownOrMalformedIdsGiveNothing) {
    EXPECT_FALSE(chip_of_device("0x9999"));
    EXPECT_FALSE(chip_of_device(""));
    EXPECT_FALSE(chip_of_device("0x"));
    EXPECT_FALSE(chip_of_device("0x23g0"));
    EXPECT_FALSE(chip_of_device("0x2330 "));
}

TEST(Verdict, WorstFirstEveryOtherInMore) {
    auto f = verdict({{Status::warn, "stale cache", "sudo ldconfig"},
                      {Status::fail, "header mismatch", "reinstall"},
                      {Status::fail, "missing sublibrary", "reinstall"}},
                     ok("all fine", {"detail"}));
    EXPECT_EQ(f.status, Status::fail);
    EXPECT_EQ(f.summary, "header mismatch");
    EXPECT_EQ(f.fix, "reinstall");
    ASSERT_EQ(f.more.size(), 2u);
    EXPECT_EQ(f.more[0].summary, "missing sublibrary"); // the order found, among equals
    EXPECT_EQ(f.more[1].status, Status::warn);
    EXPECT_EQ(f.details, std::vector<std::string>{"detail"});
    auto clear = verdict({}, ok("all fine"));
    EXPECT_EQ(clear.status, Status::ok);
    EXPECT_EQ(clear.summary, "all fine");
}

} // namespace
} // namespace cudaenv::doctor
