#include "core/error.hpp"

#include <gtest/gtest.h>

using namespace cudaenv;

TEST(Printable, EscapesWhatATerminalWouldActOn) {
    using namespace std::string_literals;
    EXPECT_EQ(printable("lib/libcudart.so.11.0"), "lib/libcudart.so.11.0");
    EXPECT_EQ(printable("a\nb"), "a\\x0ab");
    EXPECT_EQ(printable("\x1b[2J"), "\\x1b[2J");
    EXPECT_EQ(printable("a\\b"), "a\\x5cb");
    EXPECT_EQ(printable("x\0y"s), "x\\x00y");
    EXPECT_EQ(printable("\x7f"), "\\x7f");
    EXPECT_EQ(printable("\xc2\x9b"
                        "31m"),
              "\\xc2\\x9b31m");                                       // C1 CSI
    EXPECT_EQ(printable("\xc0\xae\xc0\xae"), "\\xc0\\xae\\xc0\\xae"); // overlong '.'
    EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");          // a surrogate
    EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x99\x82"),
              "caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x99\x82");
    EXPECT_EQ(printable("\xe2\x80"), "\\xe2\\x80"); // cut short
}
