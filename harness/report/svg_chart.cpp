#include "harness/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "harness/core/markup_text.h"

namespace collfuzz::report {
namespace {

const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string colour(std::size_t i) { return kPalette[i % (sizeof kPalette / sizeof *kPalette)]; }

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string tick(double v) {
  char buf[64];
  if (std::fabs(v) >= 1000)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (std::fabs(v) >= 10 || v == 0)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

std::string text(double x, double y, const std::string& s, const std::string& extra = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + extra + ">" + markup_escape(s) +
         "</text>";
}

// Advance widths of printable ASCII in thousandths of an em, DejaVu Sans's (the widest of the
// usual sans-serif faces, so a label measured here fits in Arial or Liberation Sans too).
constexpr short kAdvance[95] = {
    318,  401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337,  // ' '..'/'
    636,  636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531,  // '0'..'?'
    1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787,  // '@'..'O'
    603,  787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500,  // 'P'..'_'
    500,  613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,  // '`'..'o'
    635,  635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838};      // 'p'..'~'

// The width of one UTF-8 sequence starting at s[i] (1 em for anything not ASCII), and its length.
std::pair<double, std::size_t> glyph(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c >= 32 && c < 127) return {kAdvance[c - 32] / 1000.0, 1};
  std::size_t n = 1;
  while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
  return {1.0, n};
}

}  // namespace

double text_width(const std::string& s, double font_size, bool bold) {
  double em = 0;
  for (std::size_t i = 0; i < s.size();) {
    const auto [w, n] = glyph(s, i);
    em += w;
    i += n;
  }
  return em * font_size * (bold ? 1.1 : 1.0);
}

std::vector<std::string> wrap_text(const std::string& s, double font_size, double max_width) {
  std::vector<std::string> lines;
  std::string line;
  double width = 0;
  std::size_t last_break = std::string::npos;  // in `line`: just after a space, comma, slash...
  for (std::size_t i = 0; i < s.size();) {
    const auto [w, n] = glyph(s, i);
    const double gw = w * font_size;
    while (width + gw > max_width && !line.empty()) {
      std::string rest;
      if (last_break != std::string::npos && last_break < line.size()) {
        rest = line.substr(last_break);
        line.resize(last_break);
      }
      lines.push_back(line);
      line = rest;
      width = text_width(line, font_size);
      last_break = std::string::npos;
    }
    line += s.substr(i, n);
    width += gw;
    if (std::string_view(" ,/:;-_.()").find(s[i]) != std::string_view::npos)
      last_break = line.size();
    i += n;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

namespace {

// `s` cut to max_width with an ellipsis where it is longer; the whole string is the tooltip.
std::string fitted_text(double x, double y, const std::string& s, double font_size,
                        double max_width, const std::string& extra, bool bold = false) {
  if (text_width(s, font_size, bold) <= max_width) return text(x, y, s, extra);
  const double room = max_width - text_width("\u2026", font_size, bold);
  std::string cut;
  for (std::size_t i = 0; i < s.size();) {
    const auto [w, n] = glyph(s, i);
    if (text_width(cut, font_size, bold) + w * font_size * (bold ? 1.1 : 1.0) > room) break;
    cut += s.substr(i, n);
    i += n;
  }
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + extra + "><title>" + markup_escape(s) +
         "</title>" + markup_escape(cut + "\u2026") + "</text>";
}

// A legend as rows of (swatch, name) entries between x0 and x0 + width, from baseline y0 down:
// entries go on a row while they fit, a name wider than the whole row is wrapped over lines.
// Returns the SVG (one g.legend) and the height it takes.
std::pair<std::string, double> legend(
    const std::vector<std::pair<std::string, std::string>>& entries, double x0, double y0,
    double width) {
  constexpr double Size = 11, Line = 14, Swatch = 14, Gap = 18;
  std::string svg = "<g class=\"legend\">";
  double x = x0, y = y0, row_height = 0;
  for (const auto& [name, fill] : entries) {
    const auto lines = wrap_text(name, Size, width - Swatch);
    double w = 0;
    for (const auto& l : lines) w = std::max(w, text_width(l, Size));
    const double entry_w = Swatch + w, entry_h = Line * static_cast<double>(lines.size());
    if (x > x0 && x + entry_w > x0 + width) {
      x = x0;
      y += row_height;
      row_height = 0;
    }
    svg += "<rect x=\"" + num(x) + "\" y=\"" + num(y - 9) +
           "\" width=\"10\" height=\"10\" fill=\"" + fill + "\"/>";
    for (std::size_t k = 0; k < lines.size(); ++k)
      svg += text(x + Swatch, y + Line * static_cast<double>(k), lines[k], " font-size=\"11\"");
    x += entry_w + Gap;
    row_height = std::max(row_height, entry_h + 2);
  }
  return {svg + "</g>", entries.empty() ? 0.0 : y - y0 + row_height};
}

std::string svg_open(double w, double h) {
  return "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(w) +
         "\" height=\"" + num(h) + "\" viewBox=\"0 0 " + num(w) + " " + num(h) + "\" role=\"img\">";
}

std::string title_text(double x, const std::string& title, double w) {
  return fitted_text(x, 18, title, 14, w - x - 10, " font-weight=\"bold\" font-size=\"14\"", true);
}

}  // namespace

std::string line_chart(const std::string& title, const std::string& x_label,
                       const std::string& y_label, const std::vector<Series>& series) {
  // The plot, then the legend under it across the chart's width (as many rows as it needs).
  constexpr double W = 640, L = 60, R = 20, T = 30, PlotH = 230, B = 40;
  double xmax = 0, ymax = 0;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      xmax = std::max(xmax, x);
      ymax = std::max(ymax, y);
    }
  }
  if (xmax <= 0) xmax = 1;
  if (ymax <= 0) ymax = 1;
  ymax *= 1.05;
  const double bottom = T + PlotH;  // the plot's lower edge
  const auto px = [&](double x) { return L + x / xmax * (W - L - R); };
  const auto py = [&](double y) { return bottom - y / ymax * PlotH; };
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::size_t i = 0; i < series.size(); ++i) entries.emplace_back(series[i].name, colour(i));
  const auto [legend_svg, legend_h] = legend(entries, L, bottom + B + 14, W - L - 10);
  const double H = bottom + B + 4 + legend_h + (legend_h > 0 ? 6 : 0);
  std::string svg = svg_open(W, H) + title_text(L, title, W);
  svg += "<rect x=\"" + num(L) + "\" y=\"" + num(T) + "\" width=\"" + num(W - L - R) +
         "\" height=\"" + num(PlotH) + "\" fill=\"#fafafa\" stroke=\"#999\"/>";
  for (int i = 0; i <= 4; ++i) {
    const double y = ymax * i / 4, x = xmax * i / 4;
    svg += "<line x1=\"" + num(L) + "\" x2=\"" + num(W - R) + "\" y1=\"" + num(py(y)) + "\" y2=\"" +
           num(py(y)) + "\" stroke=\"#ddd\"/>";
    svg += text(L - 4, py(y) + 4, tick(y), " text-anchor=\"end\" font-size=\"11\"");
    svg += text(px(x), bottom + 14, tick(x), " text-anchor=\"middle\" font-size=\"11\"");
  }
  svg += fitted_text((L + W - R) / 2, bottom + 32, x_label, 12, W - L - R,
                     " text-anchor=\"middle\" font-size=\"12\"");
  svg += fitted_text(12, T + PlotH / 2, y_label, 12, PlotH,
                     " text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 12 " +
                         num(T + PlotH / 2) + ")\"");
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    std::string pts;
    for (const auto& [x, y] : s.points) pts += num(px(x)) + "," + num(py(y)) + " ";
    if (s.points.size() == 1) {
      svg += "<circle cx=\"" + num(px(s.points[0].first)) + "\" cy=\"" +
             num(py(s.points[0].second)) + "\" r=\"3\" fill=\"" + colour(i) + "\"/>";
    } else if (!s.points.empty()) {
      svg += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" + colour(i) + "\" points=\"" +
             pts + "\"/>";
    }
  }
  svg += legend_svg;
  if (series.empty()) svg += text(L + 10, T + 20, "(no data)", " font-size=\"12\"");
  return svg + "</svg>";
}

std::string stacked_bars(const std::string& title, const std::vector<Bar>& bars) {
  constexpr double W = 640, L = 90, R = 20, T = 30, BarH = 26, Gap = 10;
  std::map<std::string, std::size_t> part_colour;
  for (const auto& b : bars) {
    for (const auto& [name, v] : b.parts) part_colour.emplace(name, part_colour.size());
  }
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& [name, c] : part_colour) entries.emplace_back(name, colour(c));
  const double legend_y = T + static_cast<double>(bars.size()) * (BarH + Gap) + 10;
  const auto [legend_svg, legend_h] = legend(entries, L, legend_y, W - L - R);
  const double H = legend_y + legend_h + 4;
  std::string svg = svg_open(W, H) + title_text(L, title, W);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    double total = 0;
    for (const auto& [name, v] : b.parts) total += v;
    const double y = T + static_cast<double>(i) * (BarH + Gap);
    svg += fitted_text(L - 6, y + BarH / 2 + 4, b.label, 12, L - 10,
                       " text-anchor=\"end\" font-size=\"12\"");
    double x = L;
    for (const auto& [name, v] : b.parts) {
      if (total <= 0 || v <= 0) continue;
      const double w = v / total * (W - L - R);
      svg += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" +
             num(BarH) + "\" fill=\"" + colour(part_colour[name]) + "\"><title>" +
             markup_escape(name + ": " + tick(v)) + "</title></rect>";
      x += w;
    }
    if (total <= 0) svg += text(L + 4, y + BarH / 2 + 4, "(no cases)", " font-size=\"12\"");
  }
  return svg + legend_svg + "</svg>";
}

std::string heat_map(const std::string& title, const std::vector<std::string>& rows,
                     const std::vector<std::string>& columns,
                     const std::vector<std::vector<double>>& values) {
  constexpr double L = 330, T = 50, CellW = 90, CellH = 16;
  const double W = L + CellW * static_cast<double>(columns.size()) + 20;
  const double H = T + CellH * static_cast<double>(rows.size()) + 10;
  double vmax = 0;
  for (const auto& r : values)
    for (double v : r) vmax = std::max(vmax, v);
  std::string svg = svg_open(W, H) + title_text(10, title, W);
  for (std::size_t c = 0; c < columns.size(); ++c) {
    svg += fitted_text(L + CellW * (static_cast<double>(c) + 0.5), T - 8, columns[c], 12, CellW - 6,
                       " text-anchor=\"middle\" font-size=\"12\"");
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double y = T + CellH * static_cast<double>(r);
    svg += fitted_text(L - 6, y + CellH - 4, rows[r], 11, L - 16,
                       " text-anchor=\"end\" font-size=\"11\"");
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const double v = r < values.size() && c < values[r].size() ? values[r][c] : 0;
      const double t = vmax > 0 && v > 0 ? std::log1p(v) / std::log1p(vmax) : 0;
      // White to dark blue; a never-hit cell is a pale red so that gaps stand out.
      char fill[16];
      if (v <= 0) {
        std::snprintf(fill, sizeof fill, "#fde0dd");
      } else {
        const int g = static_cast<int>(235 - 170 * t), rr = static_cast<int>(220 - 200 * t);
        std::snprintf(fill, sizeof fill, "#%02x%02x%02x", rr, g, 255 - static_cast<int>(80 * t));
      }
      svg += "<rect x=\"" + num(L + CellW * static_cast<double>(c)) + "\" y=\"" + num(y) +
             "\" width=\"" + num(CellW - 1) + "\" height=\"" + num(CellH - 1) + "\" fill=\"" +
             fill + "\"><title>" + markup_escape(rows[r] + " / " + columns[c] + ": " + tick(v)) +
             "</title></rect>";
      svg += text(L + CellW * (static_cast<double>(c) + 0.5), y + CellH - 4, tick(v),
                  std::string(" text-anchor=\"middle\" font-size=\"10\" fill=\"") +
                      (t > 0.6 ? "#fff" : "#000") + "\"");
    }
  }
  return svg + "</svg>";
}

}  // namespace collfuzz::report
