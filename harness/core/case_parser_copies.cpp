// The case reader: copies between GMEM and SMEM, and their SMEM and GMEM indices (case_parser.h).

#include "harness/core/case_parser.h"

#include "harness/core/case_json_fields.h"
#include "harness/core/errors.h"
#include "harness/core/index_json.h"
#include "harness/core/json_reader.h"
#include "harness/core/limits.h"
#include "harness/core/scratch_shapes.h"
#include "harness/core/warp_map.h"

namespace collfuzz::case_json {

Shape CaseParser::parse_smem_index(const json* j, const std::string& path, const Alloc& a,
                                   std::vector<std::int64_t>& out, std::optional<DynStart>* slot,
                                   std::optional<IndexEntry>* slice) {
  if (!j) return a.shape;
  jr::array(*j, path, a.shape.size());
  for (std::size_t i = 0; i < j->size(); ++i) {
    const std::string at = jr::index_path(path, i);
    const json& e = (*j)[i];
    if (slice && e.is_object() && e.contains("size")) {  // smem.at[..., pl.ds(start, size)]
      if (i + 1 != j->size()) {
        throw InputError(at, "a slice must be the SMEM index's last entry (later dims stay whole)");
      }
      IndexEntry ie = parse_gmem_index_entry(e, at, a.shape[i], index_axis_size());
      if (ie.kind != IndexEntry::Kind::kSlice || ie.whole) {
        throw InputError(at, "expected {\"start\": ..., \"size\": n}");
      }
      if (ie.dyn_start && ie.dyn_start->loop) {
        throw InputError(at + ".start", "a loop index in an SMEM slice is not expressible");
      }
      for (const DynTerm& t : ie.dyn_start ? ie.dyn_start->plus : std::vector<DynTerm>{}) {
        if (t.loop)
          throw InputError(at + ".start", "a loop index in an SMEM slice is not expressible");
      }
      const Shape& tiling = a.transforms.tiling;
      if (ie.dyn_start && i + tiling.size() >= a.shape.size() && !tiling.empty() &&
          ie.size % tiling[i + tiling.size() - a.shape.size()] != 0) {
        throw InputError(at + ".size",
                         "a dynamic slice of a tiled dim whose size is not a "
                         "multiple of the tile is not expressible");
      }
      if (ie.dyn_start && i + tiling.size() >= a.shape.size() && !tiling.empty()) {
        const std::int64_t tile = tiling[i + tiling.size() - a.shape.size()];
        bool aligned = ie.dyn_start->mul % tile == 0 && ie.dyn_start->add % tile == 0;
        for (const DynTerm& t : ie.dyn_start->plus) aligned = aligned && t.mul % tile == 0;
        if (!aligned) {
          throw InputError(at + ".start",
                           "a dynamic start into a tiled dim whose terms are not multiples of the "
                           "tile (" +
                               std::to_string(tile) +
                               ") is not expressible (the compiler rounds it up to a tile, "
                               "interpret mode does not)");
        }
      }
      if (ie.dyn_start && ie.dyn_start->mod > 0) {
        throw InputError(at + ".start", "a remainder in an SMEM slice is not expressible");
      }
      if (!ie.dyn_start && ie.start + ie.size > a.shape[i]) {
        throw InputError(at, "the slice [" + std::to_string(ie.start) + ", " +
                                 std::to_string(ie.start + ie.size) +
                                 ") is out of bounds of a dimension of size " +
                                 std::to_string(a.shape[i]));
      }
      check_store_slice_in_bounds(ie, a.shape[i], at);
      *slice = std::move(ie);
      Shape rest{slice->value().size};
      rest.insert(rest.end(), a.shape.begin() + static_cast<std::ptrdiff_t>(i + 1), a.shape.end());
      return rest;
    }
    if (i + 1 == a.shape.size()) {
      throw InputError(at,
                       "an SMEM ref keeps at least one dim (integer indices may not squeeze "
                       "every dim)");
    }
    if (i + a.transforms.tiling.size() >= a.shape.size() && !a.transforms.tiling.empty()) {
      throw InputError(at,
                       "an integer index into a tiled dim of an smem allocation is not "
                       "expressible");
    }
    if (i == 0 && slot && e.is_object()) {  // smem.at[i % 2]: a loop's slot
      *slot = parse_loop_slot(e, at, a.shape[0], slot_axis_size());
      out.push_back(0);
      continue;
    }
    out.push_back(jr::integer(e, at, 0, a.shape[i] - 1));
  }
  return Shape(a.shape.begin() + static_cast<std::ptrdiff_t>(out.size()), a.shape.end());
}

std::optional<std::int64_t> CaseParser::check_index_axis(const std::string& axis,
                                                         const std::string& path) const {
  // Inside a warp_map, its axis names the warp (JAX resolves it first).
  if (!warp_axes_.empty() && warp_axes_.back() == axis) return kWarpsPerWarpgroup;
  const Mesh& m = c_.mesh;
  std::optional<std::int64_t> size;
  int matches = 0;
  if (m.thread_name && *m.thread_name == axis) {
    ++matches;
    size = m.num_threads;
  }
  for (std::size_t i = 0; i < m.cluster_names.size(); ++i) {
    const AxisName& n = m.cluster_names[i];
    if (n.is_tuple || n.as_plain() != axis) continue;
    ++matches;
    size = i < m.cluster.size() ? std::optional<std::int64_t>(m.cluster[i]) : std::nullopt;
  }
  if (matches == 1) return size;
  if (matches > 1) {
    throw InputError(path, "\"" + axis +
                               "\" names more than one axis of the mesh; conditions and dynamic "
                               "indices need an unambiguous axis");
  }
  throw InputError(path, "\"" + axis +
                             "\" is not a cluster axis or the thread axis of the mesh "
                             "(conditions and dynamic indices may use only those)");
}
IndexAxisSize CaseParser::index_axis_size() const {
  return [this](const std::string& axis, bool loop,
                const std::string& p) -> std::optional<std::int64_t> {
    if (loop) return check_loop_index(axis, p);
    return check_index_axis(axis, p);
  };
}

IndexAxisSize CaseParser::slot_axis_size() const {
  return [this](const std::string& axis, bool loop,
                const std::string& p) -> std::optional<std::int64_t> {
    if (!loop) return check_index_axis(axis, p);
    const std::int64_t size = check_loop_index(axis, p);
    for (const LoopName& n : loop_names_) {
      if (n.name == axis && n.coordinate) {
        throw InputError(p, "\"" + axis +
                                "\" is a coordinate of the nd_loop's grid index; a slot reads the "
                                "loop's local index (loop_info.local_index)");
      }
    }
    return size;
  };
}

std::int64_t CaseParser::check_loop_index(const std::string& name, const std::string& path) const {
  for (const LoopName& n : loop_names_) {
    if (in_loop_ && n.name == name) return n.size;
  }
  throw InputError(path, "\"" + name +
                             "\" is not the index of an enclosing loop (a loop names its index "
                             "with \"index\"; dynamic entries read it inside its body only)");
}

void CaseParser::check_store_slice_in_bounds(const IndexEntry& e, std::int64_t dim,
                                             const std::string& path) const {
  if (!e.dyn_start || e.kind != IndexEntry::Kind::kSlice) return;
  const DynStart& d = *e.dyn_start;
  const auto size_of = [&](const std::string& axis, bool loop, const std::string& at) {
    const std::optional<std::int64_t> n =
        loop ? std::optional<std::int64_t>(check_loop_index(axis, at + ".loop"))
             : check_index_axis(axis, at + ".axis");
    if (!n) {
      throw InputError(at + ".axis", "the mesh gives the axis \"" + axis +
                                         "\" no size; a store's dynamic slice needs one");
    }
    return *n;
  };
  std::vector<std::int64_t> sizes{size_of(d.axis, d.loop, path + ".start")};
  for (std::size_t k = 0; k < d.plus.size(); ++k) {
    sizes.push_back(
        size_of(d.plus[k].axis, d.plus[k].loop, jr::index_path(path + ".start.plus", k)));
  }
  const std::int64_t last = dyn_max(d, sizes);
  if (last + e.size > dim) {
    throw InputError(path, "the store's dynamic slice reaches [" + std::to_string(last) + ", " +
                               std::to_string(last + e.size) + ") (" +
                               (d.loop ? "loop index " : "axis_index ") +
                               std::to_string(sizes[0] - 1) +
                               (d.plus.empty() ? "" : " and the largest of every term") +
                               "), out of bounds of a dimension of size " + std::to_string(dim) +
                               "; copy_smem_to_gmem's slices stay in bounds");
  }
}

Shape CaseParser::parse_gmem_index(const json* j, const std::string& path, const ArraySpec& arr,
                                   std::vector<IndexEntry>& out) {
  Shape result;
  const std::size_t n = j ? j->size() : 0;
  if (j) jr::array(*j, path, arr.shape.size());
  const IndexAxisSize axis_size = index_axis_size();
  for (std::size_t i = 0; i < arr.shape.size(); ++i) {
    if (i >= n) {
      result.push_back(arr.shape[i]);
      continue;
    }
    IndexEntry ie =
        parse_gmem_index_entry((*j)[i], jr::index_path(path, i), arr.shape[i], axis_size);
    if (ie.kind == IndexEntry::Kind::kSlice) result.push_back(ie.size);
    out.push_back(std::move(ie));
  }
  return result;
}

std::optional<SmemTranspose> CaseParser::parse_smem_transpose(const json& side,
                                                              const std::string& path,
                                                              const Alloc& a,
                                                              const Shape& ref_shape) const {
  const json* t = jr::member(side, "transpose");
  const json* via = jr::member(side, "transpose_ref");
  if (!t || t->is_null()) {
    if (via) throw InputError(path + ".transpose_ref", "only with \"transpose\"");
    return std::nullopt;
  }
  const std::string at = path + ".transpose";
  if (c_.target.arch == Arch::kSm80) {
    throw InputError(at,
                     "a transposed SMEM ref on a pre-Hopper target (the cp.async path) is not "
                     "expressible");
  }
  const std::size_t rank = ref_shape.size();
  jr::array(*t, at, rank);
  if (t->size() != rank) {
    throw InputError(at, "expected a permutation of the SMEM ref's " + std::to_string(rank) +
                             " dims, got " + std::to_string(t->size()) + " entries");
  }
  SmemTranspose out;
  std::vector<bool> seen(rank, false);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t p =
        jr::integer((*t)[i], jr::index_path(at, i), 0, static_cast<std::int64_t>(rank) - 1);
    if (seen[static_cast<std::size_t>(p)])
      throw InputError(jr::index_path(at, i), "dim " + std::to_string(p) + " appears twice");
    seen[static_cast<std::size_t>(p)] = true;
    out.permutation.push_back(p);
  }
  if (via) out.via_transpose_ref = jr::boolean(*via, path + ".transpose_ref");
  if (c_.target.semantics == Semantics::kWarpgroup &&
      transpose_reorders_tiled_dims(out, a.transforms.tiling.size())) {
    throw InputError(at,
                     "under Warpgroup, a transpose that reorders the tiled dims of a tiled smem "
                     "ref is not expressible (the compiler commutes it into the tiling)");
  }
  if (c_.target.semantics == Semantics::kWarpgroup &&
      transpose_order_by_strides_differs(out, ref_shape)) {
    throw InputError(at,
                     "under Warpgroup, a transpose that moves a dim of size 1 past a neighbour "
                     "it ties with is not expressible (the compiler recovers the permutation "
                     "from the strides)");
  }
  return out;
}

CopyGmemToSmem CaseParser::parse_copy_g2s(const json& j, const std::string& path) {
  jr::object(j, path,
             {"op", "src", "dst", "barrier", "collective_axes", "leader_tracked", "oob_mode",
              "predicate"});
  CopyGmemToSmem cp;
  const json& src = jr::required(j, path, "src");
  jr::object(src, path + ".src", {"input", "index"});
  cp.src = jr::identifier(jr::required(src, path + ".src", "input"), path + ".src.input");
  const ArraySpec& in = lookup_array(c_.inputs, cp.src, path + ".src.input", "input");
  parse_gmem_index(jr::member(src, "index"), path + ".src.index", in, cp.src_index);

  const json& dst = jr::required(j, path, "dst");
  jr::object(dst, path + ".dst", {"alloc", "index", "transpose", "transpose_ref"});
  cp.dst = jr::identifier(jr::required(dst, path + ".dst", "alloc"), path + ".dst.alloc");
  const Alloc* d = lookup_alloc(cp.dst, path + ".dst.alloc");
  if (d->kind != AllocKind::kSmem) {
    throw InputError(path + ".dst.alloc",
                     "\"" + cp.dst + "\" is a " + to_string(d->kind) +
                         " allocation; the destination must be an smem allocation");
  }
  const Shape dst_shape = parse_smem_index(jr::member(dst, "index"), path + ".dst.index", *d,
                                           cp.dst_index, &cp.dst_slot, &cp.dst_slice);
  cp.dst_transpose = parse_smem_transpose(dst, path + ".dst", *d, dst_shape);

  if (const json* b = jr::member(j, "barrier"); b && !b->is_null()) {
    cp.barrier = parse_barrier_use(*b, path + ".barrier", true);
  }
  if (const json* ca = jr::member(j, "collective_axes"); ca && !ca->is_null()) {
    cp.collective_axes = parse_axis_names(*ca, path + ".collective_axes");
  }
  if (const json* lt = jr::member(j, "leader_tracked"); lt && !lt->is_null()) {
    const std::string lp = path + ".leader_tracked";
    if (lt->is_string()) {
      if (lt->get<std::string>() != "replicated") {
        throw InputError(lp, "expected \"replicated\" or {\"partitioned\": axis}");
      }
      cp.leader_tracked = LeaderTracked::kReplicated;
    } else {
      jr::object(*lt, lp, {"partitioned"});
      cp.leader_tracked = LeaderTracked::kPartitioned;
      cp.partition_axis = jr::integer(jr::required(*lt, lp, "partitioned"), lp + ".partitioned", 0,
                                      limits::kMaxRank - 1);
    }
  }
  if (const json* m = jr::member(j, "oob_mode"); m && !m->is_null()) {
    cp.oob_mode = jr::choice(*m, path + ".oob_mode", kOobModes);
  }
  if (const json* p = jr::member(j, "predicate"); p && !p->is_null()) {
    cp.predicate = parse_cond(*p, path + ".predicate", 0);
  }
  return cp;
}

// A store from a tiled ref tiles the output's view too (TileTransform): a slice of a tiled dim that
// starts off a tile would write each tile's rows past the tile out of bounds, where nothing lands
// (jax-ir shows it; tests/jax/test_smem_transforms.py). Not modelled: not expressible.
void CaseParser::check_store_tiles(const CopySmemToGmem& cp, const Alloc& src, const ArraySpec& out,
                                   const std::string& path) const {
  const Shape& tiling = src.transforms.tiling;
  if (tiling.empty()) return;
  if (cp.src_transpose) {
    for (std::size_t d = 0; d < cp.dst_index.size(); ++d) {
      const IndexEntry& e = cp.dst_index[d];
      if (e.kind == IndexEntry::Kind::kSlice && (e.dyn_start || e.start != 0)) {
        throw InputError(jr::index_path(path + ".dst.index", d),
                         "a store from a transposed, tiled smem ref into an output slice that does "
                         "not start at 0 is not expressible");
      }
    }
    return;
  }
  std::vector<std::size_t> sliced;  // the output's dims the store's slice keeps
  for (std::size_t d = 0; d < out.shape.size(); ++d) {
    if (d >= cp.dst_index.size() || cp.dst_index[d].kind == IndexEntry::Kind::kSlice)
      sliced.push_back(d);
  }
  for (std::size_t j = 0; j < tiling.size() && j < sliced.size(); ++j) {
    const std::size_t d = sliced[sliced.size() - std::min(tiling.size(), sliced.size()) + j];
    if (d >= cp.dst_index.size()) continue;
    const IndexEntry& e = cp.dst_index[d];
    const std::int64_t t = tiling[tiling.size() - std::min(tiling.size(), sliced.size()) + j];
    bool aligned =
        e.dyn_start ? e.dyn_start->mul % t == 0 && e.dyn_start->add % t == 0 : e.start % t == 0;
    if (e.dyn_start) {
      for (const DynTerm& term : e.dyn_start->plus) aligned = aligned && term.mul % t == 0;
    }
    if (!aligned) {
      throw InputError(jr::index_path(path + ".dst.index", d),
                       "a store from a tiled smem ref into an output slice that starts off a tile "
                       "(" +
                           std::to_string(t) + ") is not expressible");
    }
  }
}

CopySmemToGmem CaseParser::parse_copy_s2g(const json& j, const std::string& path) {
  jr::object(
      j, path,
      {"op", "src", "dst", "reduction_op", "predicate", "commit_group", "wait", "commit_smem"});
  CopySmemToGmem cp;
  if (const json* f = jr::member(j, "commit_smem"))
    cp.commit_smem = jr::boolean(*f, path + ".commit_smem");
  if (const json* g = jr::member(j, "commit_group"))
    cp.commit_group = jr::boolean(*g, path + ".commit_group");
  if (const json* w = jr::member(j, "wait")) cp.wait = jr::boolean(*w, path + ".wait");
  if (const json* r = jr::member(j, "reduction_op"); r && !r->is_null())
    cp.reduction_op = jr::choice(*r, path + ".reduction_op", kReductionOps);
  if (const json* p = jr::member(j, "predicate"); p && !p->is_null())
    cp.predicate = parse_cond(*p, path + ".predicate", 0);
  const json& src = jr::required(j, path, "src");
  jr::object(src, path + ".src", {"alloc", "index", "transpose", "transpose_ref"});
  cp.src = jr::identifier(jr::required(src, path + ".src", "alloc"), path + ".src.alloc");
  const Alloc* s = lookup_alloc(cp.src, path + ".src.alloc");
  if (s->kind != AllocKind::kSmem) {
    throw InputError(path + ".src.alloc", "\"" + cp.src + "\" is a " + to_string(s->kind) +
                                              " allocation; the source must be an smem allocation");
  }
  const Shape smem_shape = parse_smem_index(jr::member(src, "index"), path + ".src.index", *s,
                                            cp.src_index, &cp.src_slot, &cp.src_slice);
  cp.src_transpose = parse_smem_transpose(src, path + ".src", *s, smem_shape);
  // The GMEM slice has the shape of the ref the store reads: the transposed one.
  const Shape src_shape = transposed_shape(smem_shape, cp.src_transpose);
  const json& dst = jr::required(j, path, "dst");
  jr::object(dst, path + ".dst", {"output", "index"});
  cp.dst = jr::identifier(jr::required(dst, path + ".dst", "output"), path + ".dst.output");
  const ArraySpec& out = lookup_array(c_.outputs, cp.dst, path + ".dst.output", "output");
  const Shape dst_shape =
      parse_gmem_index(jr::member(dst, "index"), path + ".dst.index", out, cp.dst_index);
  for (std::size_t d = 0; d < cp.dst_index.size(); ++d) {
    check_store_slice_in_bounds(cp.dst_index[d], out.shape[d],
                                jr::index_path(path + ".dst.index", d));
  }
  if (out.dtype != s->dtype || dst_shape != src_shape) {
    throw InputError(path + ".dst",
                     "the output slice must have the shape and dtype of the smem source");
  }
  check_store_tiles(cp, *s, out, path);
  return cp;
}

}  // namespace collfuzz::case_json
