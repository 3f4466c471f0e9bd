// The report's charts keep their text inside the SVG: wrapping and measuring labels, legends in
// rows under the plot (the chart grows with them), long titles and axis labels cut with a tooltip.
// The browser test (report_browser_test.sh) measures the same in Chromium.
#include "harness/report/svg_chart.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace collfuzz::report {
namespace {

double attr(const std::string& svg, const char* name) {
  const std::regex re(std::string("<svg[^>]* ") + name + "=\"([0-9.]+)\"");
  std::smatch m;
  if (!std::regex_search(svg, m, re)) return -1;
  return std::stod(m[1]);
}

// Every legend text: its x plus its measured width stays inside the chart's width.
void expect_legend_inside(const std::string& svg) {
  const double w = attr(svg, "width");
  const auto start = svg.find("<g class=\"legend\">");
  ASSERT_NE(start, std::string::npos) << "no legend";
  const std::string g = svg.substr(start, svg.find("</g>", start) - start);
  const std::regex text("<text x=\"([0-9.]+)\" y=\"([0-9.]+)\"[^>]*>([^<]*)</text>");
  int n = 0;
  for (std::sregex_iterator it(g.begin(), g.end(), text), end; it != end; ++it, ++n) {
    const double x = std::stod((*it)[1]), y = std::stod((*it)[2]);
    EXPECT_LE(x + text_width((*it)[3], 11), w) << (*it)[3];
    EXPECT_LE(y + 4, attr(svg, "height")) << (*it)[3];
  }
  EXPECT_GT(n, 0);
}

TEST(SvgChart, TextWidthGrowsWithTheGlyphs) {
  EXPECT_GT(text_width("WWWW", 11), text_width("iiii", 11));
  EXPECT_DOUBLE_EQ(text_width("abc", 22), 2 * text_width("abc", 11));
  EXPECT_GT(text_width("abc", 11, true), text_width("abc", 11));
  EXPECT_DOUBLE_EQ(text_width("", 11), 0);
}

TEST(SvgChart, WrapBreaksAfterSeparatorsAndKeepsEveryCharacter) {
  const std::string s = "shard 0/4 (sim,jax-interpret,jax-ir): jax-interpret";
  const auto lines = wrap_text(s, 11, 120);
  ASSERT_GT(lines.size(), 1u);
  std::string joined;
  for (const auto& l : lines) {
    EXPECT_LE(text_width(l, 11), 120) << l;
    joined += l;
  }
  EXPECT_EQ(joined, s);
  // Each line but the last ends just after a separator (this string has one every few letters).
  for (std::size_t i = 0; i + 1 < lines.size(); ++i)
    EXPECT_NE(std::string(" ,/:;-_.()").find(lines[i].back()), std::string::npos) << lines[i];
  // One token longer than the line breaks inside it.
  const auto token = wrap_text(std::string(200, 'x'), 11, 100);
  EXPECT_GT(token.size(), 1u);
  for (const auto& l : token) EXPECT_LE(text_width(l, 11), 100);
}

TEST(SvgChart, LineChartLegendWrapsIntoRowsInsideTheChart) {
  std::vector<Series> few = {{"sim", {{0, 1}, {1, 2}}}};
  std::vector<Series> many;
  for (int i = 0; i < 8; ++i)
    many.push_back({"shard " + std::to_string(i) +
                        "/8 (sim,jax-interpret,jax-ir,jax-gpu): jax-interpret@0.12.0.1",
                    {{0, 1.0 * i}, {2, 2.0 * i}}});
  const std::string a = line_chart("t", "seconds", "cases/s", few);
  const std::string b = line_chart("t", "seconds", "cases/s", many);
  expect_legend_inside(a);
  expect_legend_inside(b);
  EXPECT_GT(attr(b, "height"), attr(a, "height") + 7 * 14);  // a row per wide entry at least
  EXPECT_EQ(attr(a, "width"), attr(b, "width"));
}

TEST(SvgChart, StackedBarsLegendInsideTheChart) {
  std::vector<Bar> bars = {{"mosaic", {{"accepted", 5}, {"rejected: a very long outcome kind", 3}}},
                           {"interpret", {{"race", 1}, {"mbarrier byte count mismatch", 2}}}};
  const std::string svg = stacked_bars("Outcome mix", bars);
  expect_legend_inside(svg);
}

TEST(SvgChart, ALongTitleIsCutAndKeptAsTheTooltip) {
  const std::string title(300, 'T');
  const std::string svg = line_chart(title, "x", "y", {});
  EXPECT_NE(svg.find("<title>" + title + "</title>"), std::string::npos);
  EXPECT_NE(svg.find("\u2026</text>"), std::string::npos);
}

TEST(SvgChart, LabelsAreEscaped) {
  const std::string svg = line_chart("<b>", "x", "y", {{"<script>", {{0, 1}}}});
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;"), std::string::npos);
}

}  // namespace
}  // namespace collfuzz::report
