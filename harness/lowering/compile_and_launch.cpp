#include "harness/lowering/compile_and_launch.h"

#include <array>

#include "harness/lowering/lowering_error.h"
#include "harness/lowering/rule_ids.h"

namespace collfuzz::lowering {
namespace {

[[noreturn]] void ptxas_refuses(const char* feature, const char* target, std::string_view rule) {
  raise(Stage::kCompile, "JaxRuntimeError",
        std::string("ptxas fatal   : Feature '") + feature + "' requires .target " + target, rule,
        "");
}

}  // namespace

void check_compile(const Case& c, const KernelIr& ir, const Resources& rs,
                   const ClusterGeometry& geometry) {
  const int major = arch_major(c.target.arch);
  // _launch emits barrier.cluster.arrive/wait for any cluster of more than one CTA.
  if (major < 9 && geometry.num_ctas() > 1)
    ptxas_refuses("barrier.cluster", "sm_90 or higher", rule_id::kClusterPreHopper);
  // Leader-tracked copies over two CTAs: cp.async.bulk.tensor ... .cta_group::2.
  if (major < 10 && ir.uses_cta_group2)
    ptxas_refuses(".cta_group::2", "sm_100a", rule_id::kCtaGroup2);
  // copy_smem_to_gmem is always a TMA store (cp.async.bulk ... global.shared::cta).
  if (major < 9 && !ir.stores.empty())
    ptxas_refuses("cp.async.bulk", "sm_90 or higher", rule_id::kTmaStorePreHopper);
  // TMEM: tcgen05.alloc in the kernel prologue.
  if (major < 10 && (rs.tmem || rs.tmem_collective))
    ptxas_refuses("tcgen05.alloc", "sm_100a", rule_id::kTmemArch);
  // Warpgroup semantics fence every accumulator with wgmma.fence (sm_90a only).
  if (c.target.semantics == Semantics::kWarpgroup && major != 9 && ir.uses_acc) {
    ptxas_refuses("wgmma.fence", "sm_90a", rule_id::kWgmmaArch);
  }
  // orders_tensor_core arrivals and waits emit tcgen05.fence.
  if (major < 10 && ir.uses_orders_tensor_core)
    ptxas_refuses("tcgen05.fence", "sm_100a", rule_id::kOrdersTcArch);
  // try_cluster_cancel: clusterlaunchcontrol.try_cancel.
  if (major < 10 && !ir.cluster_cancels.empty())
    ptxas_refuses("clusterlaunchcontrol", "sm_100a", rule_id::kClusterLaunchControlArch);
}

void check_launch(const Case& c, const ClusterGeometry& geometry) {
  const auto abort_launch = [](std::string message, std::string_view rule) {
    raise(Stage::kLaunch, "abort", std::move(message), rule, "");
  };
  if (geometry.threads_per_cta() * 128 > 1024)
    abort_launch("cuLaunchKernelEx: invalid argument", rule_id::kLaunchBlockThreads);
  // cuda_grid = reversed(parallel grid, >3 dims squashed into the leading one) * reversed(cluster)
  const Shape& g = c.mesh.grid;
  std::array<std::int64_t, 3> parallel{1, 1, 1};  // before reversal: (z, y, x)
  if (g.size() <= 3) {
    for (std::size_t i = 0; i < g.size(); ++i) parallel[3 - g.size() + i] = g[i];
  } else {
    std::int64_t squashed = 1;
    for (std::size_t i = 0; i + 2 < g.size(); ++i) {
      squashed = squashed > (std::int64_t{1} << 40) ? squashed : squashed * g[i];
    }
    parallel = {squashed, g[g.size() - 2], g[g.size() - 1]};
  }
  const auto& cl = geometry.cuda();
  const std::int64_t x = parallel[2] * cl[0];
  const std::int64_t y = parallel[1] * cl[1];
  const std::int64_t z = parallel[0] * cl[2];
  if (x > (std::int64_t{1} << 31) - 1 || y > 65535 || z > 65535) {
    abort_launch("cuLaunchKernelEx: invalid argument", rule_id::kLaunchGridDims);
  }
  if (geometry.num_ctas() > 16) {
    abort_launch("cuLaunchKernel failed with invalid cluster size (" + std::to_string(cl[0]) +
                     ", " + std::to_string(cl[1]) + ", " + std::to_string(cl[2]) +
                     "): maximum is 16",
                 rule_id::kLaunchClusterSize);
  }
}

}  // namespace collfuzz::lowering
