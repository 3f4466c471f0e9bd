// Rule family: LaunchContext.async_copy (spec 3.3 step 7, 3.4), for the TMA and cp.async
// implementations: the partition, GMEM strides, unit-dim dropping, the multicast split, the
// 16-byte minor dim and the 256-element box.
#include <algorithm>

#include "harness/core/ndarray.h"
#include "harness/core/pyrepr.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {
namespace {

void check_cp_async(Checker& ck, const CopyFacts& f, Stage stage) {
  const std::string& where = f.op->path;
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
  ck.check(RuleId::kLcCpAsyncSqueeze, max_squeezed >= 0 && min_sliced >= 0 && max_squeezed > min_sliced,
           where, stage);
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
  const CopyGmemToSmem& cp = *f.copy;

  // _prepare_async_copy: a partitioned load names a dst dim and is collective.
  if (cp.leader_tracked == LeaderTracked::kPartitioned) {
    ck.check(RuleId::kLcPartitionedAxis,
             cp.partition_axis >= static_cast<std::int64_t>(f.src_shape.size()), where, stage);
    ck.check(RuleId::kLcPartitionedNotCollective, f.dims.empty(), where, stage);
  }

  // _prepare_tma.
  const auto strides = row_major_strides(f.src->shape);
  bool strides_ok = true;
  for (std::size_t i = 0; i + 1 < strides.size(); ++i) {
    strides_ok = strides_ok && (strides[i] * f.bits_per_element) % 128 == 0;
  }
  ck.check(RuleId::kLcGmemStrides, !strides_ok, where, stage);

  const TmaShape t = tma_shape(f);
  ck.check(RuleId::kLcRank5, t.slice.size() > 5, where, stage);

  std::vector<std::int64_t> chunk = t.slice;
  if (f.n > 1 && cp.leader_tracked != LeaderTracked::kPartitioned) {
    std::int64_t rem = f.n;
    for (auto& size : chunk) {
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
    ck.check(RuleId::kLcMulticastSplit, rem > 1, where, [&] {
      return Holes{{"shape", py::list_of_ints(chunk)}, {"n", std::to_string(f.n)}};
    }, stage);
  }

  ck.check(RuleId::kLcRank0, chunk.empty(), where, stage);
  const std::int64_t minor_bits = chunk.back() * f.bits_per_element;
  ck.check(RuleId::kLcMinorBits, minor_bits % 128 != 0, where,
           [&] { return Holes{{"bits", std::to_string(minor_bits)}}; }, stage);

  // The bulk (non-tensor) path has no box limit.
  if (!bulk_path(f, t)) {
    const std::int64_t biggest = *std::max_element(chunk.begin(), chunk.end());
    ck.check(RuleId::kLcBox256, biggest > 256, where, [&] { return Holes{{"shape", py::tuple_of_ints(chunk)}}; },
             stage);
  }
}

}  // namespace

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
    const auto* cp = std::get_if<CopyGmemToSmem>(&op.v);
    if (!cp || ck.arch_major() < 9) return;
    CopyFacts f = copy_facts(op, *cp, ck.c, scope);
    resolve_collective(f, ck.mesh);
    std::vector<int> sorted = f.dims;
    std::sort(sorted.begin(), sorted.end());
    ck.check(RuleId::kVerifyDuplicateDims, std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end(),
             op.path);
  });
  walk_program(ck.c.program, [&](const Op& op, const Scope& scope) {
    const auto* cp = std::get_if<CopyGmemToSmem>(&op.v);
    if (!cp) return;
    CopyFacts f = copy_facts(op, *cp, ck.c, scope);
    resolve_collective(f, ck.mesh);
    check_launch_context(ck, f, Stage::kDialect);
  });
}

}  // namespace collfuzz::ref
