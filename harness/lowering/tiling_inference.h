// Warpgroup's layout inference of SMEM tilings against TMA copies (Mosaic GPU's
// layout_inference.py: the async_load / async_store and memref.subview constraint rules, and
// _check_unsatisfiable_divisibility_constraints).
#pragma once

#include "harness/lowering/kernel_ir.h"

namespace collfuzz::lowering {

// Raises the layout inference's error when a tiled SMEM ref's tiling does not divide what it
// proves of a copy's GMEM slice: its assertion or "prove the divisibility of index i" for a
// culprit, else the generic message (also that of a vector value without a layout, `vector`).
void infer_copy_tilings(const Case& c, const KernelIr& ir, const IrVectorStore* vector);

}  // namespace collfuzz::lowering
