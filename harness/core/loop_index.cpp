#include "harness/core/loop_index.h"

namespace collfuzz {
namespace {

bool reads(const IndexEntry& e, const std::string& name) {
  return e.dyn_start && e.dyn_start->loop && e.dyn_start->axis == name;
}

// f(index) for the GMEM index of every copy and store in `body` (const or not), nested ones too.
template <typename B, typename F>
void for_each_index(B& body, const F& f) {
  for (auto& op : body) {
    if (auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) f(cp->src_index);
    if (auto* st = std::get_if<CopySmemToGmem>(&op.v)) f(st->dst_index);
    if (auto* inner = nested_body(op)) for_each_index(*inner, f);
  }
}

}  // namespace

void bind_loop_index(Body& body, const std::string& name, std::int64_t value) {
  for_each_index(body, [&](std::vector<IndexEntry>& index) {
    for (IndexEntry& e : index) {
      if (!reads(e, name)) continue;
      const std::int64_t v = value * e.dyn_start->mul + e.dyn_start->add;
      (e.kind == IndexEntry::Kind::kAt ? e.at : e.start) = v;
      e.dyn_start.reset();
    }
  });
}

bool reads_loop_index(const Body& body, const std::string& name) {
  bool found = false;
  for_each_index(body, [&](const std::vector<IndexEntry>& index) {
    for (const IndexEntry& e : index) found = found || reads(e, name);
  });
  return found;
}

}  // namespace collfuzz
