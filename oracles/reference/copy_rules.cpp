// Rule family: copy_gmem_to_smem's lowering rule in the real compiler (spec 3.3, steps 1-6), for
// Lane and Warpgroup semantics, the TMA and the cp.async paths.
#include "harness/core/pyrepr.h"
#include "oracles/reference/lowering_rules.h"

namespace collfuzz::ref {

void check_copy_lowering(Checker& ck, const Op& op, const CopyGmemToSmem& cp, const Scope& scope) {
  CopyFacts f = copy_facts(op, cp, ck.c, scope);
  // _handle_transforms(dst): a slice of a tiled ref commutes through its untiling.
  check_smem_slice_tiles(ck, op, *f.dst, cp.dst_index.size(), cp.dst_slice);

  // Step 1: every collective axis is a cluster axis.
  if (cp.collective_axes) {
    for (const AxisName& a : *cp.collective_axes) {
      ck.check(RuleId::kLowerCopyUnknownAxis, !ck.mesh.cluster_dim(a), op.path, [&] {
        return Holes{{"axis", a.str()}, {"axes", ck.mesh.reversed_cluster_names_repr()}};
      });
    }
  }
  resolve_collective(f, ck.mesh);

  // Step 2: whole bytes.
  ck.check(RuleId::kLowerCopyIntegerBytes, f.dst_bits % 8 != 0, op.path, [&] {
    return Holes{{"shape", py::list_of_ints(f.dst_shape)},
                 {"dtype", std::string(dtype_info(f.dst->dtype).mlir)}};
  });
  std::int64_t bytes = f.bytes;

  // Step 3: leader tracking doubles the bytes and needs one axis over a 2-CTA cluster.
  if (f.leader) {
    bytes *= 2;
    ck.check(RuleId::kLowerCopyLeaderOneAxis, f.dims.size() != 1, op.path, [&] {
      return Holes{{"axes", py::tuple_of_names(*cp.collective_axes)}};
    });
    const auto& cl = ck.mesh.cuda_cluster();
    ck.check(RuleId::kLowerCopyLeaderCluster2, cl[0] * cl[1] * cl[2] != 2, op.path, [&] {
      return Holes{{"cluster", py::tuple_of_ints(std::vector<std::int64_t>(cl.begin(), cl.end()))}};
    });
    // 0.12.0.1: the axis must be CUDA x (the last cluster name) and have size 2. The message names
    // the first declared cluster name and prints the cluster row-major (cuda_cluster reversed).
    const bool on_x2 = f.dims == std::vector<int>{0} && cl[0] == 2;
    ck.check(RuleId::kLowerCopyLeaderLastAxis, !on_x2, op.path, [&] {
      return Holes{
          {"axis", ck.c.mesh.cluster_names.empty() ? std::string("?")
                                                   : ck.c.mesh.cluster_names.front().str()},
          {"axes", py::tuple_of_names(*cp.collective_axes)},
          {"cluster", py::tuple_of_ints(std::vector<std::int64_t>(cl.rbegin(), cl.rend()))}};
    });
  }

  // Step 4: the implementation follows the architecture.
  const bool cp_async = ck.arch_major() < 9;
  if (cp_async) {
    ck.check(RuleId::kLowerCpAsyncBarrier, cp.barrier.has_value(), op.path);
    ck.check(RuleId::kLowerCpAsyncCollective, cp.collective_axes.has_value(), op.path);
    ck.check(RuleId::kLowerCpAsyncOob, cp.oob_mode != OobMode::kPromiseInBounds, op.path);
    ck.check(RuleId::kLowerCpAsyncPredicate, cp.predicate.has_value(), op.path);
  } else {
    ck.check(RuleId::kLowerTmaNoBarrier, !cp.barrier, op.path);
  }

  const bool barrier_group = cp.barrier && !cp.barrier->index && f.barrier->num_barriers != 1;
  const auto group_holes = [&] { return Holes{{"n", std::to_string(f.barrier->num_barriers)}}; };
  if (ck.lane()) {
    // Step 5: Lane arms the barrier from every thread, then calls LaunchContext.async_copy.
    if (!cp_async) {
      // 0.12.0.1 arms an orders_tensor_core barrier from one lane: any byte count lowers.
      const bool single_lane_arrive =
          f.barrier->orders_tensor_core && ck.jax_at_least(JaxVersion::k0_12_0_1);
      ck.check(RuleId::kLowerLaneBytes128, bytes % 128 != 0 && !single_lane_arrive, op.path, [&] {
        return Holes{{"bytes", std::to_string(bytes)}};
      });
      ck.check(RuleId::kLowerBarrierNotSingle, barrier_group, op.path, group_holes);
    }
    check_launch_context(ck, f, Stage::kLower);
  } else if (!cp_async) {
    // Step 6: Warpgroup emits dialect ops; async_copy runs in the dialect lowering (stage dialect).
    ck.check(RuleId::kLowerBarrierNotSingle, barrier_group, op.path, group_holes);
  }
}

}  // namespace collfuzz::ref
