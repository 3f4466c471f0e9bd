// The element arithmetic of vector values (docs/case-format.md, "vector_store"): one binary op
// on the bit patterns of a dtype, as Mosaic GPU's vector ops compute it on the hardware (PTX
// add/sub/mul of the dtype; f16 and bf16 natively on sm_90) and XLA on the CPU. Shared, as the
// dtype conversions and the reduction ops are; which values a case may hold is the case reader's.
#pragma once

#include <cstdint>

#include "harness/core/case.h"

namespace collfuzz {

// Who computes an element: the hardware (Mosaic GPU's arith ops: arith.truncf/extf/sitofp/
// uitofp/fptosi/fptoui/trunci/extsi/extui, PTX cvt; arith.shli/shrui/shrsi) or XLA on the CPU
// (JAX's interpret mode).
enum class ComputedBy : std::uint8_t { kHardware, kXlaCpu };

struct VectorElement {
  std::uint64_t bits = 0;
  // A result whose bit pattern the executors need not agree on: a NaN (PTX's canonical NaN
  // against the CPU's propagated payload), a subnormal (XLA on the CPU flushes them to zero; the
  // hardware keeps them), or the hardware's shift past the width (poison). Not compared.
  bool unspecified = false;
};

// `a op b` for op kAdd, kSub or kMul: integers wrap modulo 2^bits; floats are computed exactly
// and rounded once to nearest even (no double rounding: a double holds the exact sum or product
// of two float32, float16 or bfloat16 values, and rounds it to float32 correctly, 53 >= 2*24+2).
// kMin, kMax: one of the operands, compared as the dtype's values (signed or unsigned integers);
// a NaN, a subnormal and a +0/-0 tie are unspecified. kAnd, kOr, kXor: the bits of two integers
// (Mosaic GPU's arith.andi/ori/xori, PTX and/or/xor.b32; XLA's on the CPU). kShiftLeft,
// kShiftRightLogical, kShiftRightArithmetic: `a` shifted by `b` bits, `b` read as an unsigned
// integer of the width (a negative amount is past it). Past the width the shift is XLA's (every
// bit out, or the sign everywhere) by the CPU and unspecified on the hardware (arith.shli/shrui/
// shrsi, LLVM's shl/lshr/ashr: poison); only `by` tells them apart.
VectorElement vector_binary(VectorKind op, DType dtype, std::uint64_t a, std::uint64_t b,
                            ComputedBy by = ComputedBy::kHardware);

// A shift of the `bits`-wide pattern `a` by `amount` (arith.shli/shrui/shrsi, PTX shl.b/shr.u/
// shr.s; XLA's shift_left/shift_right_logical/shift_right_arithmetic agree below the width; at or
// past it XLA's rule, which vector_binary marks unspecified on the hardware).
std::uint64_t vector_shift(VectorKind op, int bits, std::uint64_t a, std::uint64_t amount);

// Element `index` of an iota (lax.broadcasted_iota) of `dtype`: Mosaic GPU's
// FragmentedArray.broadcasted_iota casts the index with arith.index_cast (an integer dtype wraps
// modulo 2^bits) or arith.uitofp of its int32 (a float rounds to nearest even, once); XLA's iota on
// the CPU gives the same numbers (checked on int8, uint8, float16 and bfloat16 past their exact
// range).
std::uint64_t vector_iota(DType dtype, std::int64_t index);

// `a.astype(to)` of an element `a` of dtype `from` (both among float32, float16, bfloat16, int16,
// int32, uint16, uint32): floats round to nearest even (cvt.rn), overflowing to infinity;
// integers extend by the source's signedness and narrow by wrapping; an integer becomes the
// nearest float, ties to even, rounded once (XLA on the CPU rounds a 32-bit integer to float32
// first when the target is bfloat16: twice); a float becomes an integer truncated toward zero.
// XLA saturates a float outside the integer dtype to its bounds and a NaN to 0; on the hardware
// they are unspecified (under Lane LLVM's fptosi/fptoui leave them undefined, poison; Warpgroup
// clamps first and would saturate, a difference this model does not draw).
// Unspecified too: a NaN float result and a subnormal one.
VectorElement vector_convert(DType from, DType to, std::uint64_t a, ComputedBy by);

}  // namespace collfuzz
