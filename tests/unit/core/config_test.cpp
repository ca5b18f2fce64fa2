// The machine's config file (<sysroot>/etc/cudaenv/config): what it may say, and the one-line
// errors for what it may not.
#include "core/config.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

using namespace cudaenv;

TEST(SystemConfig, ReadsRootMirrorAndManifestsWithCommentsAndBlankLines) {
    auto cfg = parse_system_config("# written by the fleet role\n"
                                   "\n"
                                   "root = /srv/cudaenv   # big disk\n"
                                   "mirror=http://10.0.0.5/cuda\r\n"
                                   "  manifests =  /etc/cudaenv/manifests\n",
                                   "/etc/cudaenv/config");
    ASSERT_TRUE(cfg) << cfg.error().full_message();
    EXPECT_TRUE(cfg->present);
    EXPECT_EQ(cfg->root.value_or(""), "/srv/cudaenv");
    EXPECT_EQ(cfg->mirror.value_or(""), "http://10.0.0.5/cuda");
    EXPECT_EQ(cfg->manifests.value_or(""), "/etc/cudaenv/manifests");
}

TEST(SystemConfig, RefusesWhatItCannotUseNamingFileAndLine) {
    struct Case {
        const char* text;
        const char* says;
    };

    for (const auto& c : {Case{"mirorr = https://x\n", "config:1: unknown setting 'mirorr'"},
                          Case{"\nroot\n", "config:2: expected 'key = value'"},
                          Case{"root = opt/cudaenv\n", "'root' must be an absolute path"},
                          Case{"mirror = ftp://x/\n", "must be an http:// or https:// URL"},
                          Case{"root =\n", "'root' has no value"},
                          Case{"root = /opt/\x1b[31mx\n", "control character"}}) {
        auto cfg = parse_system_config(c.text, "/etc/cudaenv/config");
        ASSERT_FALSE(cfg) << c.text;
        EXPECT_EQ(cfg.error().code, ErrorCode::usage);
        EXPECT_NE(cfg.error().message.find(c.says), std::string::npos) << cfg.error().message;
        EXPECT_EQ(cfg.error().message.find('\x1b'), std::string::npos);
    }
}

TEST(SystemConfig, IsReadUnderTheSysrootAndMayBeAbsent) {
    test::TempDir d;
    auto none = load_system_config(d.path());
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->present);
    EXPECT_EQ(none->file, d.path() / "etc/cudaenv/config");
    d.write("etc/cudaenv/config", "root = /data/cudaenv\n");
    auto cfg = load_system_config(d.path());
    ASSERT_TRUE(cfg);
    EXPECT_EQ(under_sysroot(d.path(), *cfg->root), d.path() / "data/cudaenv");
    EXPECT_EQ(under_sysroot("/", *cfg->root), "/data/cudaenv");
}
