// The rules of vector values (docs/case-format.md, "vector_store"): what Mosaic GPU's lowering of
// a vector store's value refuses (FragmentedArray._pointwise), in both releases alike.

#include "oracles/reference/program_walk.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {

void check_vector_store_lowering(Checker& ck, const Op& op, const VectorStore& vs,
                                 const Scope& scope, Stage stage) {
  DType dtype = DType::kFloat32;
  if (vs.to_smem) {
    dtype = scope.allocs.at(vs.dst)->dtype;
  } else {
    for (const auto& o : ck.c.outputs) {
      if (o.name == vs.dst) dtype = o.dtype;
    }
  }
  // Any add, sub, mul, min or max (FragmentedArray.min/max call _pointwise too): the value's
  // root is one when it is not a leaf.
  ck.check(RuleId::kLowerVectorPointwise8Bit, dtype_bits(dtype) == 8 && !vs.value.args.empty(),
           op.path, stage);
}

}  // namespace collfuzz::ref
