// JAX's strided vector layout for a warpgroup (Mosaic GPU's WGStridedFragLayout.from_shaped_type,
// fragmented_array.py, 0.11.2 and 0.12.0.1 alike): how many consecutive elements each lane holds
// in one register vector. Under Lane semantics a load gets the layout of its ref's dtype and a
// conversion keeps its operand's, and a binary op on two values of different layouts raises
// "Incompatible FragmentedArray layouts" (rule lower.vector.incompatible_layouts). Shared by the
// reference's rule and the lowering as the element arithmetic is (harness/core/vector_arith.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/core/pyrepr.h"

namespace collfuzz {

// vec_size = min(64 // bits, elements // 128), halved until 128 * vec_size divides the count;
// 0 when the count is no multiple of 128 (no strided layout).
inline std::int64_t strided_vec_size(int bits, std::int64_t elements) {
  if (bits <= 0 || elements % 128 != 0) return 0;
  std::int64_t vec = std::min<std::int64_t>(64 / bits, elements / 128);
  while (vec > 0 && elements % (vec * 128) != 0) vec /= 2;
  return vec;
}

// JAX 0.11.2's FragmentedArray._store_untiled_splat (a vector store of constants): the vec_size of
// the strided layout it builds, 64 // bits, or 1 under 64 // bits * 128 elements. Where
// vec_size * 128 does not divide the count, building it raises (rule lower.vector.splat_vec_size).
inline std::int64_t splat_store_vec_size_0_11_2(int bits, std::int64_t elements) {
  const std::int64_t vec = bits > 0 ? 64 / bits : 1;
  return elements < vec * 128 ? 1 : vec;
}

// FragmentedArray.is_supported_strided_layout_broadcast (fragmented_array.py, both releases; the
// Lane lowering and Warpgroup's layout inference both ask it): a strided value broadcasts when its
// dims go to the trailing ones (`trailing`) and every dim it expands (1 to more) comes before
// every dim it keeps (more than 1). `operand` is its shape, `shape` the result's.
inline bool strided_broadcast_supported(const std::vector<std::int64_t>& operand,
                                        const std::vector<std::int64_t>& shape, bool trailing) {
  if (!trailing) return false;
  const std::size_t lead = shape.size() - operand.size();
  std::size_t last_expanded = 0;
  bool expanded = false;
  std::size_t first_kept = operand.size();
  for (std::size_t k = 0; k < operand.size(); ++k) {
    if (operand[k] == 1 && shape[lead + k] > 1) {
      last_expanded = k;
      expanded = true;
    }
    if (operand[k] > 1 && first_kept == operand.size()) first_kept = k;
  }
  return !expanded || first_kept == operand.size() || last_expanded < first_kept;
}

// The repr of a warpgroup FragmentedArray's layout as JAX prints it in "Unsupported layout: ..."
// (rule lower.vector.broadcast_layout): WGSplatFragLayout(shape=...) for a splat (vec 0, a value
// of constants), else WGStridedFragLayout(shape=..., vec_size=...).
inline std::string fragmented_layout_repr(const std::vector<std::int64_t>& shape,
                                          std::int64_t vec) {
  if (vec == 0) return "WGSplatFragLayout(shape=" + py::tuple_of_ints(shape) + ")";
  return "WGStridedFragLayout(shape=" + py::tuple_of_ints(shape) +
         ", vec_size=" + std::to_string(vec) + ")";
}

}  // namespace collfuzz
