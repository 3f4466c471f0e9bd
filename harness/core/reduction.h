// What a reducing TMA store (`copy_smem_to_gmem(..., reduction_op=...)`, PTX
// cp.reduce.async.bulk.tensor) does to one GMEM element: the arithmetic of each op on the bit
// patterns of a dtype. Which ops a dtype allows is a rule (oracles/reference/rules.def,
// launch_context.tma.reduction_op), checked by the reference and the lowering each on its own;
// this is only the element arithmetic, shared as the dtype conversions are.
#pragma once

#include <cstdint>

#include "harness/core/case.h"

namespace collfuzz {

// The low `bits` bits set (all 64 for 64 or more): an element's mask.
inline std::uint64_t low_bits_mask(int bits) {
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

// `old` combined with `src` (both `dtype_bits(dtype)`-bit patterns in the low bits), as the
// hardware does it for `op` (docs/case-format.md "copy_smem_to_gmem"):
// - add: integers wrap modulo 2^bits; floats add exactly and round to nearest even (no flush of
//   subnormals is modelled; a NaN sum is PTX's canonical NaN, 0x7fff / 0x7fffffff);
// - min, max: floats (a NaN operand yields the other, two give the canonical NaN; -0 < +0);
// - umin, umax, smin, smax: unsigned or signed integer compare (min, max on an integer dtype
//   compare as the dtype's own signedness);
// - inc: old >= src ? 0 : old + 1, dec: (old == 0 || old > src) ? src : old - 1 (unsigned);
// - and, or, xor: bitwise.
std::uint64_t apply_reduction(ReductionOp op, DType dtype, std::uint64_t old, std::uint64_t src);

// The bit pattern of `v` rounded to nearest even in the float dtype `dtype` (float16, bfloat16,
// float32, float64; a magnitude past the largest finite value becomes an infinity).
std::uint64_t round_to_float_bits(DType dtype, double v);

}  // namespace collfuzz
