// Rule family: SMEM transforms (plgpu.TilingTransform, plgpu.SwizzleTransform) as Pallas applies
// them: at construction and when the ref's aval is built (trace), and when a slice of a tiled ref
// is commuted through its untiling (the copy's lowering rule, before LaunchContext.async_copy).
// The launch-context rules of tiled copies are in launch_context_rules.cpp.
#include "harness/core/pyrepr.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {

void check_alloc_transform_constructors(Checker& ck, const Op& op, const Alloc& a) {
  if (a.kind != AllocKind::kSmem || a.transforms.swizzle == 0) return;
  const std::int64_t s = a.transforms.swizzle;
  ck.check(RuleId::kAllocSwizzleValue, s != 32 && s != 64 && s != 128, op.path, [&] {
    return Holes{{"swizzle", std::to_string(s)}};
  });
}

void check_alloc_transforms(Checker& ck, const Op& op, const RunScoped& rs) {
  for (const Alloc& a : rs.allocs) {
    if (a.kind != AllocKind::kSmem || !a.transforms.any()) continue;
    // GPUMemoryRef.get_ref_aval: the transforms' transform_type, in order.
    Shape shape = a.shape;
    const Shape& tiling = a.transforms.tiling;
    if (!tiling.empty()) {
      const std::size_t lead = shape.size() - tiling.size();
      bool divides = true;
      for (std::size_t j = 0; j < tiling.size(); ++j)
        divides = divides && shape[lead + j] % tiling[j] == 0;
      ck.check(RuleId::kAllocTilingDivides, !divides, op.path);
      Shape tiled(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(lead));
      for (std::size_t j = 0; j < tiling.size(); ++j) tiled.push_back(shape[lead + j] / tiling[j]);
      tiled.insert(tiled.end(), tiling.begin(), tiling.end());
      shape = tiled;
    }
    if (a.transforms.swizzle != 0) {
      const std::int64_t elems = a.transforms.swizzle * 8 / dtype_bits(a.dtype);
      ck.check(RuleId::kAllocSwizzleMinor, shape.back() != elems, op.path, [&] {
        return Holes{{"swizzle", std::to_string(a.transforms.swizzle)},
                     {"elems", std::to_string(elems)},
                     {"shape", py::tuple_of_ints(shape)}};
      });
    }
    if (ck.explaining()) {
      const std::int64_t s = a.transforms.swizzle;
      ck.notes.push_back(
          "layout: smem " + a.name + " " + py::tuple_of_ints(a.shape) + " " +
          std::string(dtype_name(a.dtype)) + " lies in SMEM as " + py::tuple_of_ints(shape) +
          " row-major" +
          (s != 0 ? ", each 128-byte row's 16-byte chunks XORed with the row's index modulo " +
                        std::to_string(s / 16) + " (swizzle " + std::to_string(s) + ")"
                  : std::string()) +
          "; its buffer's bytes are compared in that order");
    }
  }
}

void check_smem_slice_tiles(Checker& ck, const Op& op, const Alloc& a, std::size_t dim,
                            const std::optional<IndexEntry>& slice) {
  const Shape& tiling = a.transforms.tiling;
  if (!slice || tiling.empty() || dim + tiling.size() < a.shape.size()) return;
  const std::int64_t tile = tiling[dim + tiling.size() - a.shape.size()];
  // A dynamic start is not checked (it is divided by the tile, rounding up); its size is.
  const bool misaligned =
      (!slice->dyn_start && slice->start % tile != 0) || slice->size % tile != 0;
  ck.check(RuleId::kLowerSmemSliceTile, misaligned, op.path, [&] {
    return Holes{{"start", slice->dyn_start ? std::string("?") : std::to_string(slice->start)},
                 {"size", std::to_string(slice->size)},
                 {"tile", std::to_string(tile)}};
  });
}

}  // namespace collfuzz::ref
