#include "harness/core/markup_text.h"

#include <gtest/gtest.h>

namespace collfuzz {
namespace {

TEST(MarkupEscape, TheFiveMarkupCharactersBecomeEntities) {
  EXPECT_EQ(markup_escape(R"(<a href="x">'&'</a>)"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(MarkupEscape, ControlCharactersOtherThanNewlineAndTabBecomeQuestionMarks) {
  EXPECT_EQ(markup_escape(std::string("a\x1b[2Jb\n\tc\x01", 10)), "a?[2Jb\n\tc?");
}

TEST(MarkupEscape, PlainAndUtf8TextIsKept) {
  EXPECT_EQ(markup_escape("cluster x \xc3\xa9"), "cluster x \xc3\xa9");
}

}  // namespace
}  // namespace collfuzz
