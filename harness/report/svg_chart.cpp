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

}  // namespace

std::string line_chart(const std::string& title, const std::string& x_label,
                       const std::string& y_label, const std::vector<Series>& series) {
  constexpr double W = 640, H = 300, L = 60, R = 160, T = 30, B = 40;
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
  const auto px = [&](double x) { return L + x / xmax * (W - L - R); };
  const auto py = [&](double y) { return H - B - y / ymax * (H - T - B); };
  std::string svg = "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) +
                    "\" height=\"" + num(H) + "\" viewBox=\"0 0 " + num(W) + " " + num(H) +
                    "\" role=\"img\">";
  svg += text(L, 18, title, " font-weight=\"bold\"");
  svg += "<rect x=\"" + num(L) + "\" y=\"" + num(T) + "\" width=\"" + num(W - L - R) +
         "\" height=\"" + num(H - T - B) + "\" fill=\"#fafafa\" stroke=\"#999\"/>";
  for (int i = 0; i <= 4; ++i) {
    const double y = ymax * i / 4, x = xmax * i / 4;
    svg += "<line x1=\"" + num(L) + "\" x2=\"" + num(W - R) + "\" y1=\"" + num(py(y)) + "\" y2=\"" +
           num(py(y)) + "\" stroke=\"#ddd\"/>";
    svg += text(L - 4, py(y) + 4, tick(y), " text-anchor=\"end\" font-size=\"11\"");
    svg += text(px(x), H - B + 14, tick(x), " text-anchor=\"middle\" font-size=\"11\"");
  }
  svg += text((L + W - R) / 2, H - 6, x_label, " text-anchor=\"middle\" font-size=\"12\"");
  svg += text(12, (T + H - B) / 2, y_label,
              " text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 12 " +
                  num((T + H - B) / 2) + ")\"");
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
    const double ly = T + 14 + 16 * static_cast<double>(i);
    svg += "<rect x=\"" + num(W - R + 10) + "\" y=\"" + num(ly - 9) +
           "\" width=\"10\" height=\"10\" fill=\"" + colour(i) + "\"/>";
    svg += text(W - R + 24, ly, s.name, " font-size=\"11\"");
  }
  if (series.empty()) svg += text(L + 10, T + 20, "(no data)", " font-size=\"12\"");
  return svg + "</svg>";
}

std::string stacked_bars(const std::string& title, const std::vector<Bar>& bars) {
  constexpr double W = 640, L = 90, R = 20, T = 30, BarH = 26, Gap = 10;
  std::map<std::string, std::size_t> part_colour;
  for (const auto& b : bars) {
    for (const auto& [name, v] : b.parts) part_colour.emplace(name, part_colour.size());
  }
  const double legend_rows = std::ceil(static_cast<double>(part_colour.size()) / 4.0);
  const double H = T + static_cast<double>(bars.size()) * (BarH + Gap) + 16 * legend_rows + 10;
  std::string svg = "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) +
                    "\" height=\"" + num(H) + "\" viewBox=\"0 0 " + num(W) + " " + num(H) +
                    "\" role=\"img\">";
  svg += text(L, 18, title, " font-weight=\"bold\"");
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    double total = 0;
    for (const auto& [name, v] : b.parts) total += v;
    const double y = T + static_cast<double>(i) * (BarH + Gap);
    svg += text(L - 6, y + BarH / 2 + 4, b.label, " text-anchor=\"end\" font-size=\"12\"");
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
  double lx = L, ly = T + static_cast<double>(bars.size()) * (BarH + Gap) + 10;
  std::size_t k = 0;
  for (const auto& [name, c] : part_colour) {
    svg += "<rect x=\"" + num(lx) + "\" y=\"" + num(ly - 9) +
           "\" width=\"10\" height=\"10\" fill=\"" + colour(c) + "\"/>";
    svg += text(lx + 14, ly, name, " font-size=\"11\"");
    lx += (W - L) / 4;
    if (++k % 4 == 0) {
      lx = L;
      ly += 16;
    }
  }
  return svg + "</svg>";
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
  std::string svg = "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) +
                    "\" height=\"" + num(H) + "\" viewBox=\"0 0 " + num(W) + " " + num(H) +
                    "\" role=\"img\">";
  svg += text(10, 18, title, " font-weight=\"bold\"");
  for (std::size_t c = 0; c < columns.size(); ++c) {
    svg += text(L + CellW * (static_cast<double>(c) + 0.5), T - 8, columns[c],
                " text-anchor=\"middle\" font-size=\"12\"");
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double y = T + CellH * static_cast<double>(r);
    svg += text(L - 6, y + CellH - 4, rows[r], " text-anchor=\"end\" font-size=\"11\"");
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
