// Rule family: LaunchContext.async_copy (spec 3.3 step 7, 3.4), for the TMA and cp.async
// implementations: the partition, GMEM strides, unit-dim dropping, the multicast split, the
// 16-byte minor dim and the 256-element box.
#include <algorithm>

#include "harness/core/ndarray.h"
#include "harness/core/pyrepr.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {
namespace {

// Checked in LaunchContext.async_copy right after _prepare_async_copy: the squeezed dims lead the
// slice (the TMA path moved them there; the cp.async path did not), and the rest of the slice is
// the SMEM ref's shape. `slice` is the slice in the array's dims after the PARTITIONED split.
void check_slice_against_smem(Checker& ck, const CopyFacts& f,
                              const std::vector<std::int64_t>& slice, bool squeezed_moved_front,
                              Stage stage) {
  const std::string& where = f.op->path;
  std::size_t num_squeezed = 0;
  for (bool sq : f.squeezed) num_squeezed += sq ? 1 : 0;
  std::vector<std::int64_t> ordered;
  if (squeezed_moved_front) {
    ordered.assign(num_squeezed, 1);
    for (const std::size_t i : kept_dims_in_smem_order(f)) ordered.push_back(slice[i]);
  } else {
    ordered = slice;
  }
  bool leading_ones = true;
  for (std::size_t i = 0; i < num_squeezed; ++i) leading_ones = leading_ones && ordered[i] == 1;
  ck.check(RuleId::kLcSqueezedAssert, !leading_ones, where, stage);
  const std::vector<std::int64_t> rest(ordered.begin() + static_cast<std::ptrdiff_t>(num_squeezed),
                                       ordered.end());
  // Both shapes as JAX holds them: tiled when the SMEM ref is.
  const auto tiled = [&](const std::vector<std::int64_t>& shape) {
    Shape out;
    for (const TiledDim& d : tile_dims(shape, f.dst->transforms.tiling)) out.push_back(d.size);
    return out;
  };
  ck.check(
      RuleId::kLcSmemShape, rest != f.dst_shape, where,
      [&] {
        return Holes{{"smem", py::tuple_of_ints(tiled(f.dst_shape))},
                     {"slice", py::tuple_of_ints(tiled(rest))}};
      },
      stage);
}

// The slice in the array's dims: squeezed dims have size 1.
std::vector<std::int64_t> full_slice(const CopyFacts& f) {
  std::vector<std::int64_t> slice;
  std::size_t k = 0;
  for (std::size_t i = 0; i < f.squeezed.size(); ++i)
    slice.push_back(f.squeezed[i] ? 1 : f.src_shape[k++]);
  return slice;
}

void check_cp_async(Checker& ck, const CopyFacts& f, Stage stage) {
  const std::string& where = f.op->path;
  check_slice_against_smem(ck, f, full_slice(f), false, stage);
  std::int64_t max_squeezed = -1;
  std::int64_t min_sliced = -1;
  for (std::size_t i = 0; i < f.squeezed.size(); ++i) {
    const auto d = static_cast<std::int64_t>(i);
    if (f.squeezed[i]) {
      max_squeezed = std::max(max_squeezed, d);
    } else if (min_sliced < 0) {
      min_sliced = d;
    }
  }
  ck.check(RuleId::kLcCpAsyncSqueeze,
           max_squeezed >= 0 && min_sliced >= 0 && max_squeezed > min_sliced, where, stage);
  // WGStridedFragLayout.from_shaped_type over the destination.
  const std::int64_t size = element_count(f.dst_shape);
  const std::int64_t bits = f.bits_per_element;
  std::int64_t vec = 0;
  if (size % 128 == 0) {
    vec = std::min<std::int64_t>(64 / bits, size / 128);
    while (vec > 0 && size % (vec * 128) != 0) vec /= 2;
  }
  ck.check(RuleId::kLcCpAsyncElements, vec == 0 || (vec * bits) % 8 != 0, where, stage);
  ck.check(RuleId::kLcCpAsyncBytes, vec * bits < 32, where, stage);
}

void check_tma(Checker& ck, const CopyFacts& f, Stage stage) {
  const std::string& where = f.op->path;
  std::vector<std::int64_t> slice = full_slice(f);

  // _prepare_async_copy: a partitioned load names a dst dim, is collective, and splits evenly.
  // 0.12.0.1 checks any leader-tracked copy for a collective first, and finds the partitioned dim
  // only when the collective size exceeds 1.
  const bool v012 = ck.jax_at_least(JaxVersion::k0_12_0_1);
  if (f.leader_tracked != LeaderTracked::kNone)
    ck.check(RuleId::kLcLeaderNotCollective, f.dims.empty(), where, stage);
  if (f.leader_tracked == LeaderTracked::kPartitioned) {
    if (!v012 || f.n > 1) {
      ck.check(RuleId::kLcPartitionedAxis,
               f.partition_axis >= static_cast<std::int64_t>(f.src_shape.size()), where, stage);
    }
    ck.check(RuleId::kLcPartitionedNotCollective, f.dims.empty(), where, stage);
    if (f.n > 1) {
      std::size_t p = 0;  // the partitioned dim among the array's dims
      for (std::int64_t seen = -1; p < f.squeezed.size(); ++p) {
        if (!f.squeezed[p] && ++seen == f.partition_axis) break;
      }
      ck.check(
          RuleId::kLcPartitionedDivide, slice[p] % f.n != 0, where,
          [&] {
            return Holes{{"n", std::to_string(f.n)}, {"s", std::to_string(slice[p])}};
          },
          stage);
      slice[p] /= f.n;
    }
  }
  // TileTransform.transform_shape's own check: the slice's tiled dims are whole tiles. Without a
  // PARTITIONED split the slice has the SMEM ref's shape (trace), whose tiled dims are whole tiles
  // (alloc.smem.tiling_divides, lower.smem.slice_tile_aligned; the parser refuses integer indices
  // into tiled dims); the split can leave half a tile. The squeezed dims lead (TransposeTransform,
  // then the batched TileTransform), as the message shows the shape.
  const Shape& tiling = f.dst->transforms.tiling;
  if (!tiling.empty()) {
    std::vector<std::int64_t> moved;
    for (std::size_t i = 0; i < slice.size(); ++i)
      if (f.squeezed[i]) moved.push_back(slice[i]);
    for (const std::size_t i : kept_dims_in_smem_order(f)) moved.push_back(slice[i]);
    bool whole = moved.size() >= tiling.size();
    for (std::size_t j = 0; whole && j < tiling.size(); ++j)
      whole = moved[moved.size() - tiling.size() + j] % tiling[j] == 0;
    ck.check(
        RuleId::kLcSliceTiling, !whole, where,
        [&] {
          return Holes{{"shape", py::tuple_of_ints(moved)}, {"tiling", py::tuple_of_ints(tiling)}};
        },
        stage);
  }
  check_slice_against_smem(ck, f, slice, true, stage);

  // _prepare_tma.
  const auto strides = row_major_strides(f.src->shape);
  bool strides_ok = true;
  for (std::size_t i = 0; i + 1 < strides.size(); ++i) {
    strides_ok = strides_ok && (strides[i] * f.bits_per_element) % 128 == 0;
  }
  ck.check(RuleId::kLcGmemStrides, !strides_ok, where, stage);

  // transform_gmem_shape: each tiled GMEM dim, last first, is at most or a multiple of its tile.
  if (!tiling.empty()) {
    std::vector<std::int64_t> gmem;
    for (std::size_t i = 0; i < f.src->shape.size(); ++i)
      if (f.squeezed[i]) gmem.push_back(f.src->shape[i]);
    for (const std::size_t i : kept_dims_in_smem_order(f)) gmem.push_back(f.src->shape[i]);
    for (std::size_t j = tiling.size(); j-- > 0;) {
      const std::size_t d = gmem.size() - tiling.size() + j;
      const std::int64_t size = gmem[d];
      ck.check(
          RuleId::kLcGmemTiling, size > tiling[j] && size % tiling[j] != 0, where,
          [&] {
            return Holes{{"d", std::to_string(d)},
                         {"t", std::to_string(tiling[j])},
                         {"s", std::to_string(size)}};
          },
          stage);
    }
  }
  const TmaShape t = tma_shape(f);
  ck.check(RuleId::kLcRank5, t.slice.size() > 5, where, stage);

  std::vector<std::int64_t> chunk = t.slice;
  if (f.n > 1 && f.leader_tracked != LeaderTracked::kPartitioned) {
    std::int64_t rem = f.n;
    // With a swizzle the minor dim is never split.
    const std::size_t splittable =
        f.dst->transforms.swizzle != 0 && !chunk.empty() ? chunk.size() - 1 : chunk.size();
    for (std::size_t k = 0; k < splittable; ++k) {
      auto& size = chunk[k];
      if (size % rem == 0) {
        size /= rem;
        rem = 1;
        break;
      }
      if (rem % size != 0) break;
      if (size > 1) {
        rem /= size;
        size = 1;
      }
    }
    ck.check(
        RuleId::kLcMulticastSplit, rem > 1, where,
        [&] {
          return Holes{{"shape", py::list_of_ints(chunk)}, {"n", std::to_string(f.n)}};
        },
        stage);
  }

  // 0.12.0.1 checks the strides here (after the rank and the multicast split), and a rank-0
  // slice has a minor dim of 1 instead of an IndexError.
  ck.check(RuleId::kLcGmemStridesAfterSplit, !strides_ok, where, stage);
  ck.check(RuleId::kLcRank0, chunk.empty(), where, stage);
  const std::int64_t minor_bits = (chunk.empty() ? 1 : chunk.back()) * f.bits_per_element;
  ck.check(
      RuleId::kLcMinorBits, minor_bits % 128 != 0, where,
      [&] {
        return Holes{{"bits", std::to_string(minor_bits)}};
      },
      stage);

  // The bulk (non-tensor) path has no box limit and no tensor map.
  if (!bulk_path(f, t)) {
    const std::int64_t biggest = *std::max_element(chunk.begin(), chunk.end());
    ck.check(
        RuleId::kLcBox256, biggest > 256, where,
        [&] {
          return Holes{{"shape", py::tuple_of_ints(chunk)}};
        },
        stage);
    // _get_tma_desc: the GMEM element type's TMA data type (_tma_dma_type); f64 has none.
    ck.check(
        RuleId::kLcTmaDtype, f.src->dtype == DType::kFloat64, where,
        [&] {
          return Holes{{"dtype", std::string(dtype_info(f.src->dtype).mlir)}};
        },
        stage);
  }
}

// _is_tma_reduction_op_supported, by the MLIR element type (signless: int32 and uint32 are both
// i32).
bool tma_reduction_supported(ReductionOp op, DType dtype) {
  const std::string_view t = dtype_info(dtype).mlir;
  const auto one_of = [&](std::initializer_list<std::string_view> types) {
    return std::find(types.begin(), types.end(), t) != types.end();
  };
  switch (op) {
    case ReductionOp::kAdd:
      return one_of({"f16", "f32", "bf16", "i32", "i64"});
    case ReductionOp::kMin:
    case ReductionOp::kMax:
      return one_of({"f16", "bf16"});
    case ReductionOp::kInc:
    case ReductionOp::kDec:
      return t == "i32";
    default:  // umin umax smin smax and or xor
      return one_of({"i32", "i64"});
  }
}

// LaunchContext.async_copy's first check, before the slice and the partition.
void check_reduction(Checker& ck, const CopyFacts& f, Stage stage) {
  if (!f.reduction_op) return;
  ck.check(
      RuleId::kLcTmaReduction, !tma_reduction_supported(*f.reduction_op, f.src->dtype), f.op->path,
      [&] {
        return Holes{{"op", to_string(*f.reduction_op)},
                     {"dtype", std::string(dtype_info(f.src->dtype).mlir)}};
      },
      stage);
}

}  // namespace

void check_store_launch_context(Checker& ck, const CopyFacts& f, Stage stage) {
  check_reduction(ck, f, stage);
  check_tma(ck, f, stage);
}

// Scratch.finalize_size builds the host-side TMA descriptors after the dialect lowering, in the
// order the copies were lowered: each tensor-map copy's last GMEM dim must have stride 1.
void check_finalize(Checker& ck) {
  if (ck.arch_major() < 9) return;
  walk_program(ck.c.program, [&](const Op& op, const Scope& scope) {
    CopyFacts f;
    if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      f = copy_facts(op, *cp, ck.c, scope);
      resolve_collective(f, ck.mesh);
    } else if (const auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
      f = store_facts(op, *st, ck.c, scope);
    } else {
      return;
    }
    const TmaShape t = tma_shape(f);
    if (bulk_path(f, t)) return;
    ck.check(RuleId::kLcLastStride, t.strides.back() != 1, op.path, [&] {
      return Holes{{"s", std::to_string(t.strides.back())}};
    });
  });
}

void check_launch_context(Checker& ck, const CopyFacts& f, Stage stage) {
  if (ck.arch_major() < 9) {
    check_cp_async(ck, f, stage);
  } else {
    check_tma(ck, f, stage);
  }
}

void check_dialect(Checker& ck) {
  if (ck.lane()) return;
  // Module verification runs over every op before the dialect lowering.
  walk_program(ck.c.program, [&](const Op& op, const Scope& scope) {
    if (const auto* tc = std::get_if<TryClusterCancel>(&op.v))
      check_try_cluster_cancel_verify(ck, op, *tc, scope);
    const auto* cp = std::get_if<CopyGmemToSmem>(&op.v);
    if (!cp || ck.arch_major() < 9) return;
    CopyFacts f = copy_facts(op, *cp, ck.c, scope);
    resolve_collective(f, ck.mesh);
    std::vector<int> sorted = f.dims;
    std::sort(sorted.begin(), sorted.end());
    ck.check(RuleId::kVerifyDuplicateDims,
             std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end(), op.path);
  });
  // The layout inference pass, after verification and before the dialect lowering.
  check_layout_inference(ck);
  CarryLayouts carries;  // not read under Warpgroup
  walk_program(
      ck.c.program,
      [&](const Op& op, const Scope& scope) {
        check_loop_carry_lowering(ck, op, scope, Stage::kDialect, false, carries);
        check_warp_context_dialect(ck, op, scope);
        if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
          CopyFacts f = copy_facts(op, *cp, ck.c, scope);
          resolve_collective(f, ck.mesh);
          check_launch_context(ck, f, Stage::kDialect);
        } else if (const auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
          check_store_launch_context(ck, store_facts(op, *st, ck.c, scope),
                                     Stage::kDialect);  // stores are always TMA
        } else if (const auto* vs = std::get_if<VectorStore>(&op.v)) {
          check_vector_store_lowering(ck, op, *vs, scope, Stage::kDialect, carries);
        }
      },
      [&](const Op& op, const Scope& scope) {
        check_loop_carry_lowering(ck, op, scope, Stage::kDialect, true, carries);
      });
}

}  // namespace collfuzz::ref
