// terminal_text: what a case, an executor or a path says is printed without its control
// characters reaching the terminal.
#include "harness/core/terminal_text.h"

#include <gtest/gtest.h>

#include <string>

namespace collfuzz {
namespace {

TEST(TerminalText, KeepsPrintableAsciiAndValidUtf8) {
  EXPECT_EQ(terminal_text("copy.plain__f32"), "copy.plain__f32");
  EXPECT_EQ(terminal_text("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80");
  EXPECT_EQ(terminal_text("a\\b"), "a\\b");
}

TEST(TerminalText, EscapesC0ControlsAndDel) {
  EXPECT_EQ(terminal_text("evil\x1b[2J"), "evil\\x1b[2J");
  EXPECT_EQ(terminal_text(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(terminal_text("a\nb\tc\rd\x7f"), "a\\x0ab\\x09c\\x0dd\\x7f");
}

TEST(TerminalText, LinesKeepNewlinesAndTabsOnly) {
  EXPECT_EQ(terminal_lines("line 1\n\tline 2\r\x1b]0;title\x07"),
            "line 1\n\tline 2\\x0d\\x1b]0;title\\x07");
}

TEST(TerminalText, EscapesC1ControlsAndBidiOverrides) {
  EXPECT_EQ(terminal_text("a\xc2\x9b"
                          "2Jb"),
            "a\\xc2\\x9b2Jb");                                      // U+009B CSI
  EXPECT_EQ(terminal_text("x\xe2\x80\xaey"), "x\\xe2\\x80\\xaey");  // U+202E RLO
  EXPECT_EQ(terminal_text("\xc2\xa0"), "\xc2\xa0");                 // U+00A0 is printable
}

TEST(TerminalText, EscapesBytesThatAreNotUtf8) {
  EXPECT_EQ(terminal_text("\x9b"), "\\x9b");                    // a raw 8-bit CSI
  EXPECT_EQ(terminal_text("\xc3"), "\\xc3");                    // truncated sequence
  EXPECT_EQ(terminal_text("\xc0\xaf"), "\\xc0\\xaf");           // overlong
  EXPECT_EQ(terminal_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(terminal_text("\xf5\x80\x80\x80"), "\\xf5\\x80\\x80\\x80");
}

}  // namespace
}  // namespace collfuzz
