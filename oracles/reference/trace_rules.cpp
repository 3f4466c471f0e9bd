// Rule family: what JAX checks while it traces the kernel body to a jaxpr, in program order:
// allocation constructors (spec 1.3-1.4) and copy_gmem_to_smem's Python-level check and abstract
// evaluation (spec 3.1-3.2). Identical under every profile.
#include "harness/core/pyrepr.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {
namespace {

void check_allocs(Checker& ck, const Op& op, const RunScoped& rs) {
  for (const Alloc& a : rs.allocs) {
    check_alloc_transform_constructors(ck, op, a);
    if (a.kind == AllocKind::kBarrier || a.kind == AllocKind::kClusterBarrier) {
      ck.check(RuleId::kAllocNumArrivals, a.num_arrivals < 1, op.path, [&] {
        return Holes{{"n", std::to_string(a.num_arrivals)}};
      });
    }
    if (a.kind == AllocKind::kTmem) {
      // plgpu.TMEM(...) infers its layout from the last two dims at construction.
      ck.check(RuleId::kAllocTmemNarrow, dtype_bits(a.dtype) != 32, op.path);
      const Shape last2(a.shape.size() > 2 ? a.shape.end() - 2 : a.shape.begin(), a.shape.end());
      ck.check(RuleId::kAllocTmemRank, last2.size() != 2, op.path, [&] {
        return Holes{{"shape", py::tuple_of_ints(last2)}};
      });
      ck.check(RuleId::kAllocTmemRows, last2[0] != 128 && last2[0] != 64, op.path, [&] {
        return Holes{{"shape", py::tuple_of_ints(last2)}, {"rows", std::to_string(last2[0])}};
      });
    }
  }
}

// plgpu.transpose_ref(ref, ...) on the copy's SMEM ref, called before the copy.
void check_transpose_ref(Checker& ck, const Op& op, const Alloc& a, bool indexed,
                         const std::optional<SmemTranspose>& t) {
  if (!t || !t->via_transpose_ref) return;
  ck.check(RuleId::kTraceTransposeRefMemorySpace, !indexed && !a.transforms.any(), op.path, [&] {
    std::string shape;
    for (const std::int64_t d : a.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    return Holes{{"ref", "Ref<smem>{" + std::string(dtype_name(a.dtype)) + "[" + shape + "]}"}};
  });
}

void check_copy(Checker& ck, const Op& op, const CopyGmemToSmem& cp, const Scope& scope) {
  check_transpose_ref(ck, op, *scope.allocs.at(cp.dst),
                      !cp.dst_index.empty() || cp.dst_slot || cp.dst_slice, cp.dst_transpose);
  ck.check(RuleId::kCopyLeaderNeedsAxes,
           cp.leader_tracked != LeaderTracked::kNone && !cp.collective_axes, op.path);
  const CopyFacts f = copy_facts(op, cp, ck.c, scope);
  ck.check(RuleId::kCopyDtype, f.src->dtype != f.dst->dtype, op.path, [&] {
    return Holes{{"src", std::string(dtype_name(f.src->dtype))},
                 {"dst", std::string(dtype_name(f.dst->dtype))}};
  });
  const bool partitioned = cp.leader_tracked == LeaderTracked::kPartitioned;
  std::int64_t axis_size = 1;
  if (partitioned && cp.collective_axes) {
    for (const AxisName& a : *cp.collective_axes) {
      const auto size = ck.mesh.env_size(a);
      ck.check(RuleId::kCopyUnboundAxis, !size, op.path, [&] { return Holes{{"axis", a.str()}}; });
      axis_size *= *size;
    }
  }
  Shape expected = f.view_shape;
  if (partitioned && cp.partition_axis < static_cast<std::int64_t>(expected.size())) {
    expected[static_cast<std::size_t>(cp.partition_axis)] *= axis_size;
  }
  ck.check(RuleId::kCopySrcShape, expected != f.src_shape, op.path, [&] {
    const std::string desc = partitioned ? "Dim " + std::to_string(cp.partition_axis) +
                                               " is partitioned over an axis of size " +
                                               std::to_string(axis_size) + "."
                                         : "";
    return Holes{{"expected", py::tuple_of_ints(expected)},
                 {"got", py::tuple_of_ints(f.src_shape)},
                 {"desc", desc}};
  });
}

// plgpu.nd_loop's checks of its tiling, when it is called (before its body is traced).
// No tiling (`if tiling:` false) passes both.
void check_nd_loop(Checker& ck, const Op& op, const Loop::Nd& nd) {
  const bool tiled = !nd.tiling.empty();
  const auto holes = [&] {
    return Holes{{"tiling", py::tuple_of_ints(nd.tiling)}, {"grid", py::tuple_of_ints(nd.grid)}};
  };
  ck.check(RuleId::kNdLoopTilingLength, tiled && nd.tiling.size() != nd.grid.size(), op.path,
           holes);
  ck.check(RuleId::kNdLoopTilingDivides, !nd.tiling_valid(), op.path, holes);
}

}  // namespace

void check_trace(Checker& ck) {
  walk_program(ck.c.program, [&](const Op& op, const Scope& scope) {
    if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
      check_allocs(ck, op, *rs);
      check_alloc_transforms(ck, op, *rs);
    }
    if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) check_copy(ck, op, *cp, scope);
    if (const auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
      check_transpose_ref(ck, op, *scope.allocs.at(st->src),
                          !st->src_index.empty() || st->src_slot || st->src_slice,
                          st->src_transpose);
    }
    if (const auto* l = std::get_if<Loop>(&op.v); l && l->nd) check_nd_loop(ck, op, *l->nd);
    // The attribute lookup raises before anything of the call is traced (until 0.12.0.1).
    if (const auto* wt = std::get_if<BarrierWait>(&op.v))
      ck.check(RuleId::kBarrierArriveAndWaitMissing, wt->arrive_first, op.path);
    if (const auto* ws = std::get_if<WaitSmemToGmem>(&op.v)) {
      ck.check(RuleId::kWaitSmemToGmemN, ws->n < 0, op.path, [&] {
        return Holes{{"n", std::to_string(ws->n)}};
      });
    }
  });
}

}  // namespace collfuzz::ref
