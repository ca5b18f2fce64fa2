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

TEST(SystemConfig, AcknowledgeTakesAnAdvisoryIdAndItsReasonOneLineEach) {
    auto cfg =
        parse_system_config("root = /srv/cudaenv\n"
                            "acknowledge = NVIDIA-5614 the R535 fleet is replaced in January\n"
                            "acknowledge=CUBLAS-ALGO66   no Blackwell GPU here   # by ops\n"
                            "\n"
                            "  acknowledge =  nvidia-5659   CDI mode is off  \n",
                            "/etc/cudaenv/config");
    ASSERT_TRUE(cfg) << cfg.error().full_message();
    ASSERT_EQ(cfg->acknowledged.size(), 3u);
    EXPECT_EQ(cfg->acknowledged[0].id, "NVIDIA-5614");
    EXPECT_EQ(cfg->acknowledged[0].reason, "the R535 fleet is replaced in January");
    EXPECT_EQ(cfg->acknowledged[0].line, 2u);
    EXPECT_EQ(cfg->acknowledged[1].id, "CUBLAS-ALGO66");
    EXPECT_EQ(cfg->acknowledged[1].reason, "no Blackwell GPU here");
    EXPECT_EQ(cfg->acknowledged[1].line, 3u);
    EXPECT_EQ(cfg->acknowledged[2].id, "nvidia-5659"); // matched case-insensitively
    EXPECT_EQ(cfg->acknowledged[2].reason, "CDI mode is off");
    EXPECT_EQ(cfg->acknowledged[2].line, 5u);
    EXPECT_EQ(cfg->root.value_or(""), "/srv/cudaenv");
}

TEST(SystemConfig, AcknowledgeWithoutAReasonOrWithoutAnIdIsAUsageErrorNamingTheLine) {
    struct Case {
        const char* text;
        const char* says;
    };

    for (const auto& c :
         {Case{"\nacknowledge = NVIDIA-5614\n",
               "config:2: 'acknowledge = NVIDIA-5614' needs the reason after the id"},
          Case{"acknowledge = NVIDIA-5614    # why\n",
               "config:1: 'acknowledge = NVIDIA-5614' needs"},
          Case{"root = /x\nacknowledge = CVE/2024/0131 reason\n",
               "config:2: 'acknowledge' needs an advisory id (NVIDIA-5614), got 'CVE/2024/0131'"},
          Case{"acknowledge = 56 reason\n", "config:1: 'acknowledge' needs an advisory id"},
          Case{"acknowledge =\n", "config:1: 'acknowledge' has no value"}}) {
        auto cfg = parse_system_config(c.text, "/etc/cudaenv/config");
        ASSERT_FALSE(cfg) << c.text;
        EXPECT_EQ(cfg.error().code, ErrorCode::usage);
        EXPECT_NE(cfg.error().message.find(c.says), std::string::npos) << cfg.error().message;
    }
}
