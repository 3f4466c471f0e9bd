// The per-op lowering rule families (stage lower), called in program order by check_lowering.
#pragma once

#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {

void check_scoped_lowering(Checker& ck, const Op& op, const RunScoped& rs);
void check_copy_lowering(Checker& ck, const Op& op, const CopyGmemToSmem& cp, const Scope& scope);
void check_barrier_op_lowering(Checker& ck, const Op& op, const BarrierUse& use, bool is_arrive,
                               const Scope& scope);

}  // namespace collfuzz::ref
