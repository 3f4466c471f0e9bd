#include "harness/core/loop_index.h"

#include <memory>
#include <utility>
#include <vector>

namespace collfuzz {
namespace {

bool reads(const std::optional<DynStart>& d, const std::string& name) {
  if (!d) return false;
  if (d->loop && d->axis == name) return true;
  for (const DynTerm& t : d->plus) {
    if (t.loop && t.axis == name) return true;
  }
  return false;
}

// Every place of `body` (nested ops too) a loop index can be read at: the GMEM index of copies
// and stores (f_index), and the slots of SMEM refs and barrier uses (f_slot, with the static index
// it stands for).
template <typename B, typename FIndex, typename FSlot>
void for_each_read(B& body, const FIndex& f_index, const FSlot& f_slot) {
  for (auto& op : body) {
    if (auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      f_index(cp->src_index);
      if (!cp->dst_index.empty()) f_slot(cp->dst_slot, cp->dst_index[0]);
      if (cp->barrier && cp->barrier->index) f_slot(cp->barrier->slot, *cp->barrier->index);
    }
    if (auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
      f_index(st->dst_index);
      if (!st->src_index.empty()) f_slot(st->src_slot, st->src_index[0]);
    }
    if (auto* vs = std::get_if<VectorStore>(&op.v)) {
      f_index(vs->dst_index);
      if (!vs->smem_index.empty()) f_slot(vs->smem_slot, vs->smem_index[0]);
      for_each_vector_load(vs->value, [&](auto& load) {
        if (load.kind == VectorKind::kLoadInput) f_index(load.gmem_index);
        if (load.kind == VectorKind::kLoadSmem && !load.smem_index.empty())
          f_slot(load.smem_slot, load.smem_index[0]);
      });
    }
    if (auto* ar = std::get_if<BarrierArrive>(&op.v); ar && ar->barrier.index)
      f_slot(ar->barrier.slot, *ar->barrier.index);
    if (auto* wt = std::get_if<BarrierWait>(&op.v); wt && wt->barrier.index)
      f_slot(wt->barrier.slot, *wt->barrier.index);
    if (auto* l = std::get_if<Loop>(&op.v); l && l->carry) {
      for_each_vector_load(l->carry->next, [&](auto& load) {
        if (load.kind == VectorKind::kLoadInput) f_index(load.gmem_index);
        if (load.kind == VectorKind::kLoadSmem && !load.smem_index.empty())
          f_slot(load.smem_slot, load.smem_index[0]);
      });
    }
    if (auto* inner = nested_body(op)) for_each_read(*inner, f_index, f_slot);
  }
}

}  // namespace

void bind_loop_index(Body& body, const std::string& name, std::int64_t value) {
  for_each_read(
      body,
      [&](std::vector<IndexEntry>& index) {
        for (IndexEntry& e : index) {
          if (!reads(e.dyn_start, name)) continue;
          const auto v = dyn_fold(*e.dyn_start, [&](const std::string& a, bool loop) {
            return loop && a == name ? std::optional<std::int64_t>(value) : std::nullopt;
          });
          if (!v) continue;  // it still reads an axis
          (e.kind == IndexEntry::Kind::kAt ? e.at : e.start) = *v;
          e.dyn_start.reset();
        }
      },
      [&](std::optional<DynStart>& slot, std::int64_t& index) {
        if (!reads(slot, name)) return;
        index = dyn_value(*slot, value);
        slot.reset();
      });
}

bool reads_loop_index(const Body& body, const std::string& name) {
  bool found = false;
  for_each_read(
      body,
      [&](const std::vector<IndexEntry>& index) {
        for (const IndexEntry& e : index) found = found || reads(e.dyn_start, name);
      },
      [&](const std::optional<DynStart>& slot, const std::int64_t&) {
        found = found || reads(slot, name);
      });
  return found;
}

bool Loop::Nd::tiling_valid() const {
  if (tiling.empty()) return true;
  if (tiling.size() != grid.size()) return false;
  for (std::size_t k = 0; k < grid.size(); ++k) {
    if (grid[k] % tiling[k] != 0) return false;
  }
  return true;
}

std::int64_t Loop::Nd::grid_size() const {
  std::int64_t g = 1;
  for (const std::int64_t d : grid) g *= d;
  return g;
}

std::int64_t Loop::Nd::trips(std::int64_t a) const {
  const std::int64_t g = grid_size();
  return g / axis_size + (a < g % axis_size ? 1 : 0);
}

std::shared_ptr<const NdCoord> nd_coord(const Loop::Nd& nd, std::size_t d) {
  auto c = std::make_shared<NdCoord>();
  c->axes = nd.axes;
  c->axis_sizes = nd.axis_sizes;
  c->axis_size = nd.axis_size;
  // The grid the step is unravelled over: (*grid / tiling, *tiling) with a tiling.
  Shape unravelled = nd.grid;
  const bool tiled = !nd.tiling.empty() && nd.tiling_valid();
  if (tiled) {
    unravelled.clear();
    for (std::size_t k = 0; k < nd.grid.size(); ++k)
      unravelled.push_back(nd.grid[k] / nd.tiling[k]);
    unravelled.insert(unravelled.end(), nd.tiling.begin(), nd.tiling.end());
  }
  const auto stride = [&](std::size_t k) {
    std::int64_t s = 1;
    for (std::size_t m = k + 1; m < unravelled.size(); ++m) s *= unravelled[m];
    return s;
  };
  if (tiled) {
    c->pieces.push_back({stride(d), unravelled[d], nd.tiling[d]});
    const std::size_t sub = nd.grid.size() + d;
    c->pieces.push_back({stride(sub), unravelled[sub], 1});
  } else {
    c->pieces.push_back({stride(d), unravelled[d], 1});
  }
  return c;
}

void attach_nd_coords(Loop& l) {
  if (!l.nd) return;
  std::vector<std::pair<std::string, std::shared_ptr<const NdCoord>>> coords;
  for (std::size_t d = 0; d < l.nd->index_names.size(); ++d) {
    if (!l.nd->index_names[d].empty())
      coords.emplace_back(l.nd->index_names[d], nd_coord(*l.nd, d));
  }
  const auto attach = [&](bool loop, const std::string& name, std::shared_ptr<const NdCoord>& nd) {
    if (!loop) return;
    for (const auto& [n, c] : coords) {
      if (n == name) nd = c;
    }
  };
  const auto attach_index = [&](std::vector<IndexEntry>& index) {
    for (IndexEntry& e : index) {
      if (!e.dyn_start) continue;
      attach(e.dyn_start->loop, e.dyn_start->axis, e.dyn_start->nd);
      for (DynTerm& t : e.dyn_start->plus) attach(t.loop, t.axis, t.nd);
    }
  };
  const auto no_slot = [](std::optional<DynStart>&, std::int64_t&) {};
  for_each_read(l.body, attach_index, no_slot);
  if (l.carry) {
    for_each_vector_load(l.carry->next, [&](VectorValue& load) {
      if (load.kind == VectorKind::kLoadInput) attach_index(load.gmem_index);
    });
  }
}

}  // namespace collfuzz
