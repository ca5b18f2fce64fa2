#include "core/activate/environment.hpp"
#include "core/activate/selection.hpp"

#include <gtest/gtest.h>

using namespace cudaenv;
using activate::parse_tensorflow_pin;

TEST(TensorflowPin, ReadsTheUsualSpellings) {
    EXPECT_EQ(parse_tensorflow_pin("numpy\ntensorflow==2.13.1\n")->str(), "2.13.1");
    EXPECT_EQ(parse_tensorflow_pin("tensorflow[and-cuda]==2.15.0")->str(), "2.15.0");
    EXPECT_EQ(parse_tensorflow_pin("tensorflow-gpu ~= 2.10")->str(), "2.10");
    EXPECT_EQ(parse_tensorflow_pin("[packages]\ntensorflow = \"==2.12.0\"\n")->str(), "2.12.0");
    EXPECT_EQ(parse_tensorflow_pin("dependencies:\n  - tensorflow=2.13\n")->str(), "2.13");
    EXPECT_EQ(parse_tensorflow_pin("dependencies = [\"tensorflow==2.16.1\",]")->str(), "2.16.1");
    std::size_t line = 0;
    ASSERT_TRUE(parse_tensorflow_pin("a\nb\ntensorflow==2.14.0\n", &line));
    EXPECT_EQ(line, 3u);
}

TEST(TensorflowPin, IgnoresNonPinsAndOtherPackages) {
    EXPECT_FALSE(parse_tensorflow_pin("tensorflow>=2.13\n"));
    EXPECT_FALSE(parse_tensorflow_pin("tensorflow\n"));
    EXPECT_FALSE(parse_tensorflow_pin("tensorflow-cpu==2.13.0\n"));
    EXPECT_FALSE(parse_tensorflow_pin("tensorflow-hub==0.15.0\ntensorflow_datasets==4.9\n"));
    EXPECT_FALSE(parse_tensorflow_pin("# tensorflow==2.13.0\n"));
    EXPECT_FALSE(parse_tensorflow_pin("mytensorflow==2.13\n"));
}

TEST(VersionEnvironment, PutsTheVersionFirstAndDropsOtherVersions) {
    auto env = activate::version_environment(
        "/r/versions/11.8.0",
        {"/r/versions", "/sys/versions"},
        {{"PATH", "/r/versions/12.4.1/bin:/sys/versions/12.2.0/bin:/usr/bin:/usr/bin"},
         {"LD_LIBRARY_PATH", "/opt/x"}});
    EXPECT_EQ(env["CUDA_HOME"], "/r/versions/11.8.0");
    EXPECT_EQ(env["CUDA_PATH"], "/r/versions/11.8.0");
    EXPECT_EQ(env["PATH"], "/r/versions/11.8.0/bin:/usr/bin");
    EXPECT_EQ(env["LD_LIBRARY_PATH"], "/r/versions/11.8.0/lib64:/opt/x");
}
