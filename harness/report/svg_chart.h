// Inline SVG charts for the HTML report, drawn here so that the page needs no script library and
// no network: a line chart (one line per series), horizontal stacked bars, and a heat map. Every
// label is HTML-escaped. Everything is laid out inside the SVG's viewBox: legends (g.legend) go in
// rows under the plot, wrapped as needed, the chart's height growing with them; an axis label or
// title too long for its room is cut with an ellipsis and keeps the whole text as its tooltip.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace collfuzz::report {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

std::string line_chart(const std::string& title, const std::string& x_label,
                       const std::string& y_label, const std::vector<Series>& series);

struct Bar {
  std::string label;
  std::vector<std::pair<std::string, double>> parts;  // (part name, value), stacked in order
};

std::string stacked_bars(const std::string& title, const std::vector<Bar>& bars);

// The width in px of `s` set in a sans-serif face at font_size (DejaVu Sans's advances, the
// widest usual face, so an estimate and not less than what a browser draws; non-ASCII counts 1 em).
double text_width(const std::string& s, double font_size, bool bold = false);

// `s` broken into lines no wider than max_width (after a space, comma, slash, colon, dash,
// underscore, dot or parenthesis where the line has one, else inside a token).
std::vector<std::string> wrap_text(const std::string& s, double font_size, double max_width);

// rows x columns of counts; a cell's colour grows with log(1 + count), white when 0.
std::string heat_map(const std::string& title, const std::vector<std::string>& rows,
                     const std::vector<std::string>& columns,
                     const std::vector<std::vector<double>>& values);

}  // namespace collfuzz::report
