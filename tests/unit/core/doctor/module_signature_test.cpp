// The module signature trailer, the EFI signature lists and the DER readers: empty, short,
// malformed and lying inputs (the real formats, made by openssl and sign-file's layout, are in
// probes_test.cpp).
#include "core/doctor/module_signature.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace cudaenv::doctor {
namespace {

std::string trailer(std::uint32_t sig_len, unsigned id_type = 2) {
    std::string info{0, 0, static_cast<char>(id_type), 0, 0, 0, 0, 0};
    for (int shift : {24, 16, 8, 0}) {
        info += static_cast<char>((sig_len >> shift) & 0xffu);
    }
    return info + std::string(k_module_sig_magic);
}

std::string le32(std::size_t v) {
    std::string out;
    for (int i = 0; i < 4; ++i) {
        out += static_cast<char>((v >> (8 * i)) & 0xffu);
    }
    return out;
}

const std::string k_x509_guid("\xa1\x59\xc0\xa5\xe4\x94\xa7\x4a\x87\xb5\xab\x15\x5c\x2b\xf0\x72",
                              16);
const std::string k_sha256_guid("\x26\x16\xc4\xc1\x4c\x50\x92\x40\xac\xa9\x41\xf9\x36\x93\x43\x28",
                                16);

TEST(ModuleSignature, NoMagicIsUnsignedAndNotAnError) {
    for (std::string_view tail : {std::string_view(),
                                  std::string_view("\x7f"
                                                   "ELF"),
                                  std::string_view("~Module signature appended~")}) {
        auto s = parse_module_signature(tail);
        ASSERT_TRUE(s);
        EXPECT_FALSE(s->present);
    }
}

TEST(ModuleSignature, ReadsTheSignatureBeforeTheTrailer) {
    auto s = parse_module_signature("module" + std::string("SIG") + trailer(3));
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->present);
    EXPECT_EQ(s->id_type, 2u);
    EXPECT_EQ(s->signature, "SIG");
}

TEST(ModuleSignature, LengthsThatDoNotFitAreErrors) {
    EXPECT_FALSE(parse_module_signature(std::string(k_module_sig_magic))); // no info
    EXPECT_FALSE(parse_module_signature("xx" + std::string(k_module_sig_magic)));
    EXPECT_FALSE(parse_module_signature("SIG" + trailer(4))); // one byte short
    EXPECT_FALSE(parse_module_signature(trailer(0xffffffffu)));
    EXPECT_FALSE(parse_module_signature("abc" + trailer(0))); // empty signature
    auto e = parse_module_signature("SIG" + trailer(4));
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().message,
              "the module signature trailer declares a 4-byte signature, more than the 3 bytes "
              "read before it");
}

TEST(ModuleSignature, GarbageIsNotAKey) {
    EXPECT_FALSE(pkcs7_signer(""));
    EXPECT_FALSE(pkcs7_signer("\x30\x82\xff\xff garbage"));
    EXPECT_FALSE(certificate_key(""));
    EXPECT_FALSE(certificate_key(std::string(100, '\x30')));
}

TEST(EfiSignatureLists, TakesX509EntriesAndStopsAtALyingSize) {
    auto list = [](const std::string& guid,
                   const std::vector<std::string>& entries,
                   std::size_t header = 0) {
        std::size_t size = entries.empty() ? 0 : entries[0].size();
        std::string body(header, 'h');
        for (const auto& e : entries) {
            body += std::string(16, 'o') + e;
        }
        return guid + le32(28 + body.size()) + le32(header) + le32(16 + size) + body;
    };
    EXPECT_TRUE(efi_x509_certificates("").empty());
    EXPECT_TRUE(efi_x509_certificates(std::string(27, '\0')).empty());
    auto two = list(k_sha256_guid, {std::string(32, 'd')}) +
               list(k_x509_guid, {"CERT1", "CERT2"}, 3) + list(k_x509_guid, {"CERT3"});
    EXPECT_EQ(efi_x509_certificates(two), (std::vector<std::string>{"CERT1", "CERT2", "CERT3"}));
    // a list size past the end, below the header, or a header past the list: the walk stops
    auto lying = list(k_x509_guid, {"CERT1"});
    lying.replace(16, 4, le32(lying.size() + 1));
    EXPECT_TRUE(efi_x509_certificates(lying).empty());
    lying.replace(16, 4, le32(27));
    EXPECT_TRUE(efi_x509_certificates(lying).empty());
    lying.replace(16, 4, le32(lying.size()));
    lying.replace(20, 4, le32(0xffffffffu));
    EXPECT_TRUE(efi_x509_certificates(lying).empty());
    // an entry size of 0 or one past the list: nothing taken, no endless loop
    lying.replace(20, 4, le32(0));
    lying.replace(24, 4, le32(0));
    EXPECT_TRUE(efi_x509_certificates(lying).empty());
    lying.replace(24, 4, le32(lying.size()));
    EXPECT_TRUE(efi_x509_certificates(lying).empty());
}

TEST(KeyId, SameKeyByIssuerAndSerialOrSubjectKeyId) {
    KeyId sig{"issuer", "\x01\x02", "", "CN"};
    EXPECT_TRUE(same_key(sig, {"issuer", "\x01\x02", "skid", "CN"}));
    EXPECT_FALSE(same_key(sig, {"other", "\x01\x02", "skid", "CN"}));
    EXPECT_FALSE(same_key(sig, {"issuer", "\x01\x03", "skid", "CN"}));
    EXPECT_TRUE(same_key({"", "", "skid", ""}, {"issuer", "\x01", "skid", "CN"}));
    EXPECT_FALSE(same_key({"", "", "", ""}, {"", "", "", ""}));
    EXPECT_EQ(sig.label(), "serial 01:02");
    EXPECT_EQ(KeyId({"", "", "\xab\x0c", ""}).label(), "subject key id ab:0c");
}

} // namespace
} // namespace cudaenv::doctor
