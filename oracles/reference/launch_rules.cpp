// Rule families: compiling the module for the target GPU, and launching it (spec 1.1, 3.4).
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {

void check_compile_and_launch(Checker& ck) {
  const int major = ck.arch_major();
  const auto& cl = ck.mesh.cuda_cluster();
  const std::int64_t cluster_size = cl[0] * cl[1] * cl[2];

  bool cta_group2 = false;
  bool tmem = false;
  bool acc = false;
  bool orders_tc_used = false;
  bool cluster_cancel = false;
  bool store = false;
  walk_program(ck.c.program, [&](const Op& op, const Scope& scope) {
    if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
      for (const Alloc& a : rs->allocs) {
        tmem |= a.kind == AllocKind::kTmem;
        acc |= a.kind == AllocKind::kAcc;
      }
    }
    if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      CopyFacts f = copy_facts(op, *cp, ck.c, scope);
      resolve_collective(f, ck.mesh);
      cta_group2 |= f.leader && f.n == 2;
    }
    store |= std::holds_alternative<CopySmemToGmem>(op.v);
    const BarrierUse* use = nullptr;
    if (const auto* ar = std::get_if<BarrierArrive>(&op.v)) use = &ar->barrier;
    if (const auto* wt = std::get_if<BarrierWait>(&op.v)) use = &wt->barrier;
    if (use) orders_tc_used |= scope.allocs.at(use->alloc)->orders_tensor_core;
    cluster_cancel |= std::holds_alternative<TryClusterCancel>(op.v);
  });

  ck.check(RuleId::kCompileClusterPreHopper, major < 9 && cluster_size > 1, "kernel");
  ck.check(RuleId::kCompileCtaGroup2, major < 10 && cta_group2, "kernel");
  ck.check(RuleId::kCompileTmaStore, major < 9 && store, "kernel");
  ck.check(RuleId::kCompileTmem, major < 10 && tmem, "kernel");
  ck.check(RuleId::kCompileWgmma, !ck.lane() && major != 9 && acc, "kernel");
  ck.check(RuleId::kCompileOrdersTensorCore, major < 10 && orders_tc_used, "kernel");
  ck.check(RuleId::kCompileClusterLaunchControl, major < 10 && cluster_cancel, "kernel");

  ck.check(RuleId::kLaunchBlockThreads, ck.mesh.num_threads() * 128 > 1024, "kernel");

  // The CUDA grid: the parallel grid (leading dims squashed into z beyond 3), reversed, times
  // the cluster.
  const Shape& g = ck.c.mesh.grid;
  std::array<std::int64_t, 3> parallel{1, 1, 1};  // z, y, x before reversal
  if (g.size() <= 3) {
    for (std::size_t i = 0; i < g.size(); ++i) parallel[3 - g.size() + i] = g[i];
  } else {
    std::int64_t squashed = 1;
    for (std::size_t i = 0; i + 2 < g.size(); ++i) {
      squashed = squashed > (std::int64_t{1} << 40) ? squashed : squashed * g[i];
    }
    parallel = {squashed, g[g.size() - 2], g[g.size() - 1]};
  }
  const std::int64_t x = parallel[2] * cl[0];
  const std::int64_t y = parallel[1] * cl[1];
  const std::int64_t z = parallel[0] * cl[2];
  ck.check(RuleId::kLaunchGridDims, x > (std::int64_t{1} << 31) - 1 || y > 65535 || z > 65535,
           "kernel");

  ck.check(RuleId::kLaunchClusterSize, cluster_size > 16, "kernel", [&] {
    return Holes{
        {"x", std::to_string(cl[0])}, {"y", std::to_string(cl[1])}, {"z", std::to_string(cl[2])}};
  });
}

}  // namespace collfuzz::ref
