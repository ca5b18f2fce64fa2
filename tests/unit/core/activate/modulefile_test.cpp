// Modulefiles carry exec's variables in exec's order, quoted so that no path breaks the file.
#include "core/activate/modulefile.hpp"

#include <gtest/gtest.h>

namespace cudaenv::activate {
namespace {

TEST(Modulefile, LuaPrependsLastFirstSoExecsOrderResults) {
    auto text = modulefile("/r/versions/12.4", {"12.4", "12.4.1", "9.1.1", {}}, ModuleFormat::lua);
    EXPECT_NE(text.find("family(\"cuda\")\n"), std::string::npos);
    EXPECT_NE(text.find("setenv(\"CUDA_HOME\", \"/r/versions/12.4\")"), std::string::npos);
    EXPECT_NE(text.find("prepend_path(\"PATH\", \"/r/versions/12.4/bin\")"), std::string::npos);
    EXPECT_NE(text.find("prepend_path(\"LD_LIBRARY_PATH\", \"/r/versions/12.4/lib64\")"),
              std::string::npos);
    EXPECT_EQ(text.find('\n' + std::string("\"")), std::string::npos);
}

TEST(Modulefile, QuotesWhatWouldBreakLuaOrTcl) {
    auto lua = modulefile("/r/a\"b\\c", {"v", "12.4.1", "", {}}, ModuleFormat::lua);
    EXPECT_NE(lua.find("\"/r/a\\\"b\\\\c\""), std::string::npos);
    auto tcl = modulefile("/r/$x[y]", {"v", "12.4.1", "", {}}, ModuleFormat::tcl);
    EXPECT_NE(tcl.find("setenv CUDA_HOME \"/r/\\$x\\[y\\]\""), std::string::npos);
    EXPECT_EQ(tcl.rfind("#%Module", 0), 0u);
    EXPECT_NE(tcl.find("conflict cuda\n"), std::string::npos);
}

} // namespace
} // namespace cudaenv::activate
