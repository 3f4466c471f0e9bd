// Inline SVG charts for the HTML report, drawn here so that the page needs no script library and
// no network: a line chart (one line per series), horizontal stacked bars, and a heat map. Every
// label is HTML-escaped.
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

// rows x columns of counts; a cell's colour grows with log(1 + count), white when 0.
std::string heat_map(const std::string& title, const std::vector<std::string>& rows,
                     const std::vector<std::string>& columns,
                     const std::vector<std::vector<double>>& values);

}  // namespace collfuzz::report
