#include "harness/lowering/case_lookup.h"

namespace collfuzz::lowering {

CaseLookup::CaseLookup(const Case& c) : c_(c) { collect(c.program); }

void CaseLookup::collect(const Body& body) {
  for (const Op& op : body) {
    if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
      for (const Alloc& a : rs->allocs) allocs_.emplace_back(a.name, &a);
      collect(rs->body);
    } else if (const Body* b = nested_body(op)) {
      collect(*b);
    }
  }
}

const Alloc* CaseLookup::alloc(std::string_view name) const {
  for (const auto& [n, a] : allocs_) {
    if (n == name) return a;
  }
  return nullptr;
}

const ArraySpec* CaseLookup::array(const std::vector<ArraySpec>& arrays, std::string_view name) {
  for (const ArraySpec& a : arrays) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

int CaseLookup::input_index(std::string_view name) const {
  for (std::size_t i = 0; i < c_.inputs.size(); ++i) {
    if (c_.inputs[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int CaseLookup::output_index(std::string_view name) const {
  for (std::size_t i = 0; i < c_.outputs.size(); ++i) {
    if (c_.outputs[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace collfuzz::lowering
