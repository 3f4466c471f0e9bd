// Name lookups into a case: allocations (unique across a case) and GMEM arrays.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/core/case.h"

namespace collfuzz::lowering {

class CaseLookup {
 public:
  explicit CaseLookup(const Case& c);
  const Alloc* alloc(std::string_view name) const;
  const ArraySpec* input(std::string_view name) const { return array(c_.inputs, name); }
  int input_index(std::string_view name) const;
  const ArraySpec* output(std::string_view name) const { return array(c_.outputs, name); }
  int output_index(std::string_view name) const;

 private:
  static const ArraySpec* array(const std::vector<ArraySpec>& arrays, std::string_view name);
  void collect(const Body& body);

  const Case& c_;
  std::vector<std::pair<std::string_view, const Alloc*>> allocs_;
};

}  // namespace collfuzz::lowering
