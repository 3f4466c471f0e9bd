// A vector value's equations in the jaxpr's order (each op after its operands, the left one
// first): Pallas lowers them one by one. A convert's operand has its `from` dtype, a broadcast's
// its own shape. Used by the Lane lowering of a value (lowering_rules.cpp) and by Warpgroup's
// dialect lowering of a WGMMA-layout one (wgmma_vectors.cpp).
#pragma once

#include <vector>

#include "harness/core/case.h"

namespace collfuzz::lowering {

// One equation of a vector value: its node, dtype and shape.
struct ValueEqn {
  const VectorValue* v = nullptr;
  DType dtype = DType::kFloat32;
  Shape shape;
};

inline void value_eqns(const VectorValue& v, DType d, const Shape& shape,
                       std::vector<ValueEqn>& eqns) {
  const DType operand = v.kind == VectorKind::kConvert ? v.from : d;
  for (const VectorValue& a : v.args)
    value_eqns(a, operand, v.kind == VectorKind::kBroadcast ? v.broadcast_shape : shape, eqns);
  eqns.push_back(ValueEqn{&v, d, shape});
}

}  // namespace collfuzz::lowering
