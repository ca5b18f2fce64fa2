#include "core/envnum.hpp"

#include <gtest/gtest.h>

using namespace cudaenv;

namespace {

std::string err(std::string_view name, std::string_view text) {
    auto r = parse_number(*number_var(name), text);
    EXPECT_FALSE(r) << name << "=" << text << " parsed as " << (r ? *r : 0);
    if (r) {
        return {};
    }
    EXPECT_EQ(exit_code(r.error().code), 2);
    return r.error().message + " / " + (r.error().hints.empty() ? "" : r.error().hints[0]);
}

std::uint64_t ok(std::string_view name, std::string_view text) {
    auto r = parse_number(*number_var(name), text);
    EXPECT_TRUE(r) << name << "=" << text << ": " << (r ? "" : r.error().message);
    return r ? *r : 0;
}

} // namespace

TEST(EnvNumbers, OneParserForEveryVariable) {
    for (const auto& v : number_vars()) {
        EXPECT_NE(err(v.name, "abc").find(std::string(v.name) + "='abc': not a number"),
                  std::string::npos);
        EXPECT_NE(err(v.name, "").find("not a number"), std::string::npos);
        EXPECT_NE(err(v.name, "-1").find("not a number"), std::string::npos);
        EXPECT_NE(err(v.name, " 5").find("not a number"), std::string::npos);
        EXPECT_NE(err(v.name, "99999999999999999999999").find("too large"), std::string::npos);
    }
}

TEST(EnvNumbers, BytesTakeBinarySuffixesAndRefuseGuesses) {
    EXPECT_EQ(ok("CUDAENV_EXTRACT_MAX_BYTES", "4096"), 4096u);
    EXPECT_EQ(ok("CUDAENV_EXTRACT_MAX_BYTES", "10G"), 10ull << 30);
    EXPECT_EQ(ok("CUDAENV_EXTRACT_MAX_BYTES", "10GiB"), 10ull << 30);
    EXPECT_EQ(ok("CUDAENV_EXTRACT_MAX_BYTES", "3M"), 3ull << 20);
    EXPECT_NE(err("CUDAENV_EXTRACT_MAX_BYTES", "10GB").find("unknown size suffix 'GB'"),
              std::string::npos); // once, 10 bytes
    EXPECT_NE(err("CUDAENV_EXTRACT_MAX_BYTES", "0").find("out of range"), std::string::npos);
    EXPECT_NE(err("CUDAENV_EXTRACT_MAX_BYTES", "20000T").find("out of range"), std::string::npos);
    err("CUDAENV_EXTRACT_MAX_ENTRIES", "10K"); // a count takes no suffix
}

TEST(EnvNumbers, RangesAndFractions) {
    EXPECT_EQ(ok("CUDAENV_LOCK_TIMEOUT", "0"), 0u);
    EXPECT_NE(err("CUDAENV_LOCK_TIMEOUT", "abc").find("a number of seconds"), std::string::npos);
    EXPECT_NE(err("CUDAENV_CONNECT_TIMEOUT", "0").find("out of range"), std::string::npos);
    EXPECT_NE(err("CUDAENV_RETRIES", "1000").find("out of range"), std::string::npos);
    err("CUDAENV_RETRIES", "1.5");
    EXPECT_EQ(ok("CUDAENV_DOCTOR_TIMEOUT", "0.5"), 500u);
    EXPECT_EQ(ok("CUDAENV_DOCTOR_TIMEOUT", "2"), 2000u);
    EXPECT_EQ(ok("CUDAENV_DOCTOR_TIMEOUT", "0.001"), 1u);
    err("CUDAENV_DOCTOR_TIMEOUT", "0");
    err("CUDAENV_DOCTOR_TIMEOUT", "0.0001");
    err("CUDAENV_DOCTOR_TIMEOUT", "1.");
    err("CUDAENV_DOCTOR_TIMEOUT", "soon");
    EXPECT_EQ(number_var("CUDAENV_ROOT"), nullptr);
}
