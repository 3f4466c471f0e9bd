#include "harness/lowering/kernel_trace.h"

#include "harness/core/pyrepr.h"
#include "harness/core/python_bool.h"
#include "harness/lowering/case_lookup.h"
#include "harness/lowering/jax_facts.h"
#include "harness/lowering/lowering_error.h"
#include "harness/lowering/rule_ids.h"

namespace collfuzz::lowering {

Shape indexed_src_shape(const ArraySpec& src, const std::vector<IndexEntry>& index) {
  Shape s;
  for (std::size_t i = 0; i < src.shape.size(); ++i) {
    if (i >= index.size()) {
      s.push_back(src.shape[i]);
    } else if (index[i].kind == IndexEntry::Kind::kSlice) {
      s.push_back(index[i].size);
    }
  }
  return s;
}

Shape indexed_dst_shape(const Alloc& dst, const std::vector<std::int64_t>& index,
                        const std::optional<IndexEntry>& slice) {
  Shape shape(dst.shape.begin() + static_cast<std::ptrdiff_t>(index.size()), dst.shape.end());
  if (slice && !shape.empty()) shape[0] = slice->size;
  return shape;
}

std::optional<std::int64_t> traced_axis_size(const Case& c, const AxisName& name) {
  // extend_axis_env_nd(mesh.shape.items()): a dict, so a repeated name keeps its last size.
  const Mesh& m = c.mesh;
  std::optional<std::int64_t> size;
  if (c.target.entry == Entry::kPallasCall) {
    // The pallas_call shim names its parallel grid axes d0, d1, ...
    for (std::size_t i = 0; i < m.grid.size(); ++i) {
      if (name == AxisName::plain("d" + std::to_string(i))) size = m.grid[i];
    }
    return size;
  }
  for (std::size_t i = 0; i < m.grid.size() && i < m.grid_names.size(); ++i) {
    if (m.grid_names[i] == name) size = m.grid[i];
  }
  for (std::size_t i = 0; i < m.cluster.size() && i < m.cluster_names.size(); ++i) {
    if (m.cluster_names[i] == name) size = m.cluster[i];
  }
  if (m.num_threads && m.thread_name && name == AxisName::plain(*m.thread_name))
    size = *m.num_threads;
  return size;
}

namespace {

class Tracer {
 public:
  explicit Tracer(const Case& c) : c_(c), lookup_(c) {}

  TracedBody body(const Body& ops) {
    TracedBody out;
    for (const Op& op : ops) {
      if (const auto* w = std::get_if<When>(&op.v)) {
        const auto constant = python_bool(w->cond);
        if (!constant || (op.from_warp_map && !op.warp_axis.empty())) {
          // lax.cond: the body is traced. A warp_map nested in another (warp_map.h) stays a
          // node, which the lowering refuses.
          out.push_back(TracedNode{&op, body(w->body)});
        } else if (*constant) {
          for (TracedNode& n : body(w->body)) out.push_back(std::move(n));  // f() is called inline
        }
        continue;  // when(False): the body is never called
      }
      if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
        for (const Alloc& a : rs->allocs) construct(op, a);
        for (const Alloc& a : rs->allocs) ref_aval(op, a);
        out.push_back(TracedNode{&op, body(rs->body)});
        continue;
      }
      if (const auto* l = std::get_if<Loop>(&op.v)) {
        if (l->nd) nd_loop(op, *l->nd);
        out.push_back(TracedNode{&op, body(l->body)});  // fori_loop traces its body once
        continue;
      }
      if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) copy(op, *cp);
      if (const auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
        transpose_ref(op, *lookup_.alloc(st->src),
                      !st->src_index.empty() || st->src_slot || st->src_slice, st->src_transpose);
      }
      if (const auto* wt = std::get_if<BarrierWait>(&op.v);
          wt && wt->arrive_first && !jax_facts(c_.target.jax).has_barrier_arrive_and_wait) {
        raise(Stage::kTrace, "AttributeError",
              "module 'jax.experimental.pallas.mosaic_gpu' has no attribute "
              "'barrier_arrive_and_wait'",
              rule_id::kArriveAndWaitMissing, op.path);
      }
      // _wait_smem_to_gmem_abstract_eval.
      if (const auto* ws = std::get_if<WaitSmemToGmem>(&op.v); ws && ws->n < 0) {
        raise(Stage::kTrace, "ValueError",
              "n must be a non-negative integer, got " + std::to_string(ws->n),
              rule_id::kWaitSmemToGmemN, op.path);
      }
      out.push_back(TracedNode{&op, {}});
    }
    return out;
  }

 private:
  const Case& c_;
  CaseLookup lookup_;

  // plgpu.nd_loop(grid, collective_axes=..., tiling=...) when called (helpers.py).
  void nd_loop(const Op& op, const Loop::Nd& nd) {
    if (nd.tiling.empty()) return;  // `if tiling:`
    const std::string args =
        py::tuple_of_ints(nd.tiling) + " and grid=" + py::tuple_of_ints(nd.grid);
    if (nd.tiling.size() != nd.grid.size()) {
      raise(Stage::kTrace, "ValueError", "tiling=" + args + " must have same length.",
            rule_id::kNdLoopTilingLength, op.path);
    }
    for (std::size_t k = 0; k < nd.grid.size(); ++k) {
      if (nd.grid[k] % nd.tiling[k] == 0) continue;
      raise(Stage::kTrace, "ValueError",
            "Tiling " + py::tuple_of_ints(nd.tiling) + " does not divide grid " +
                py::tuple_of_ints(nd.grid) + ".",
            rule_id::kNdLoopTilingDivides, op.path);
    }
  }

  // The allocation's constructor: plgpu.Barrier / ClusterBarrier / TMEM(...).
  void construct(const Op& op, const Alloc& a) {
    if (a.kind == AllocKind::kBarrier || a.kind == AllocKind::kClusterBarrier) {
      if (a.num_arrivals < 1) {
        raise(Stage::kTrace, "ValueError",
              "Num arrivals must be at least 1, but got " + std::to_string(a.num_arrivals),
              rule_id::kNumArrivals, op.path);
      }
    }
    if (a.kind == AllocKind::kTmem) construct_tmem(op, a);
    // plgpu.SwizzleTransform(s).__post_init__.
    const std::int64_t s = a.transforms.swizzle;
    if (a.kind == AllocKind::kSmem && s != 0 && s != 32 && s != 64 && s != 128) {
      raise(Stage::kTrace, "ValueError",
            "Swizzle " + std::to_string(s) + " is not supported. Only 32, 64 and 128 are accepted.",
            rule_id::kSwizzleValue, op.path);
    }
  }

  // run_scoped builds each ref's aval (GPUMemoryRef.get_ref_aval): its transforms' transform_type.
  void ref_aval(const Op& op, const Alloc& a) {
    if (a.kind != AllocKind::kSmem || !a.transforms.any()) return;
    Shape shape = a.shape;
    const Shape& tiling = a.transforms.tiling;
    if (!tiling.empty()) {
      // TilingTransform.transform_type: (leading, d // t..., t...), asserting t | d.
      const std::size_t lead = shape.size() - tiling.size();
      Shape tiled(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(lead));
      for (std::size_t j = 0; j < tiling.size(); ++j) {
        if (shape[lead + j] % tiling[j] != 0)
          raise(Stage::kTrace, "AssertionError", "", rule_id::kTilingDivides, op.path);
        tiled.push_back(shape[lead + j] / tiling[j]);
      }
      tiled.insert(tiled.end(), tiling.begin(), tiling.end());
      shape = std::move(tiled);
    }
    if (a.transforms.swizzle != 0) {
      const std::int64_t elems = a.transforms.swizzle * 8 / dtype_bits(a.dtype);
      if (shape.back() != elems) {
        raise(Stage::kTrace, "ValueError",
              "Swizzle " + std::to_string(a.transforms.swizzle) +
                  " requires the trailing dimension to be of size " + std::to_string(elems) +
                  ", but got shape: " + py::tuple_of_ints(shape),
              rule_id::kSwizzleMinor, op.path);
      }
    }
  }

  // MemorySpace.TMEM(shape, dtype, collective=...) with neither packed nor layout given.
  void construct_tmem(const Op& op, const Alloc& a) {
    if (dtype_bits(a.dtype) != 32) {
      raise(Stage::kTrace, "ValueError",
            "dtypes narrower than 32-bit require either the packed argument or an explicit TMEM "
            "layout",
            rule_id::kTmemNarrow, op.path);
    }
    // infer_tmem_layout(shape[-2:], ...) -> tcgen05._infer_tmem_layout(shape, collective,
    // packing=1)
    const Shape last2(a.shape.size() > 2 ? a.shape.end() - 2 : a.shape.begin(), a.shape.end());
    if (last2.size() != 2) {
      raise(Stage::kTrace, "ValueError",
            "TMEM can only represent 2D shapes, got " + py::tuple_of_ints(last2),
            rule_id::kTmemRank, op.path);
    }
    constexpr std::int64_t kTmemLanes = 128;  // tcgen05.TMEM_ROWS
    const std::int64_t rows = last2[0];
    const std::int64_t cols = last2[1];
    if (rows == kTmemLanes) return;
    if (rows == kTmemLanes / 2) {
      if (!a.collective && 1 > cols / 2) {  // tmem_half_lane_layout: packing > columns // 2
        raise(Stage::kTrace, "ValueError", "Packing must be <= 8 and a power of 2, got: 1", "",
              op.path);
      }
      if (cols % 16) {
        raise(Stage::kTrace, "ValueError",
              "Columns must be a multiple of 16, got: " + std::to_string(cols), "", op.path);
      }
      return;
    }
    raise(Stage::kTrace, "ValueError",
          "Unsupported shape: " + py::tuple_of_ints(last2) +
              ". TMEM references must have either 128 or 64 rows, but got " + std::to_string(rows) +
              ".",
          rule_id::kTmemRows, op.path);
  }

  // copy_gmem_to_smem(...): the Python check, then _copy_gmem_to_smem_abstract_eval.
  // plgpu.transpose_ref(ref, ...): `assert hasattr(ref, "memory_space")` meets the raw ref of an
  // untransformed allocation, whose memory_space attribute raises ValueError.
  void transpose_ref(const Op& op, const Alloc& a, bool indexed,
                     const std::optional<SmemTranspose>& t) {
    if (!t || !t->via_transpose_ref || indexed || a.transforms.any()) return;
    std::string dims;
    for (const std::int64_t d : a.shape) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    raise(Stage::kTrace, "ValueError",
          "The 'memory_space' attribute is not available on traced array with shape Ref<smem>{" +
              std::string(dtype_name(a.dtype)) + "[" + dims +
              "]}. Use `jax.typeof(x).memory_space` instead.",
          rule_id::kTransposeRefMemorySpace, op.path);
  }

  void copy(const Op& op, const CopyGmemToSmem& cp) {
    transpose_ref(op, *lookup_.alloc(cp.dst), !cp.dst_index.empty() || cp.dst_slot || cp.dst_slice,
                  cp.dst_transpose);
    if (cp.leader_tracked != LeaderTracked::kNone && !cp.collective_axes) {
      raise(Stage::kTrace, "ValueError",
            "`collective_axes` must be specified when `leader_tracked` is set",
            rule_id::kLeaderNeedsAxes, op.path);
    }
    const ArraySpec& src = *lookup_.input(cp.src);
    const Alloc& dst = *lookup_.alloc(cp.dst);
    if (src.dtype != dst.dtype) {
      raise(Stage::kTrace, "ValueError",
            "Expected dtypes to match but src had type " + std::string(dtype_name(src.dtype)) +
                " and dst had type " + std::string(dtype_name(dst.dtype)),
            rule_id::kCopyDtype, op.path);
    }
    const Shape src_shape = indexed_src_shape(src, cp.src_index);
    const Shape dst_shape = indexed_dst_shape(dst, cp.dst_index, cp.dst_slice);
    const bool partitioned = cp.leader_tracked == LeaderTracked::kPartitioned;
    std::int64_t axis_size = 1;
    if (partitioned && cp.collective_axes) {
      for (const AxisName& axis : *cp.collective_axes) {
        const auto size = traced_axis_size(c_, axis);
        if (!size)
          raise(Stage::kTrace, "NameError", "unbound axis name: " + axis.str(),
                rule_id::kUnboundAxis, op.path);
        axis_size *= *size;
      }
    }
    Shape expected = transposed_shape(dst_shape, cp.dst_transpose);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      if (partitioned && static_cast<std::int64_t>(i) == cp.partition_axis)
        expected[i] *= axis_size;
    }
    if (expected != src_shape) {
      const std::string desc = partitioned ? "Dim " + std::to_string(cp.partition_axis) +
                                                 " is partitioned over an axis of size " +
                                                 std::to_string(axis_size) + "."
                                           : "";
      raise(Stage::kTrace, "ValueError",
            "Expected source shape to be " + py::tuple_of_ints(expected) + ", but got " +
                py::tuple_of_ints(src_shape) + ". " + desc,
            rule_id::kSrcShape, op.path);
    }
  }
};

}  // namespace

TracedBody trace_kernel(const Case& c) { return Tracer(c).body(c.program); }

}  // namespace collfuzz::lowering
