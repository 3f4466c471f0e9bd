// The reference's execution: plgpu.try_cluster_cancel (docs/case-format.md,
// "try_cluster_cancel"), as try_cluster_cancel_lowering emits it (JAX 0.11.2 and 0.12.0.1, Lane
// and Warpgroup alike in what reaches the barrier):
//   - every Pallas thread arrives once on the barrier, arming 16 bytes if it is the first along
//     the thread axis when collective_axes names that axis (every thread otherwise), else none
//     (Lane: arrive_expect_tx(select(is_leader, 16, 0)); Warpgroup: arrive_expect_tx(16) or a
//     plain arrive);
//   - an arming thread of a CTA at index 0 along every cluster axis of collective_axes issues
//     clusterlaunchcontrol.try_cancel ... .multicast::cluster::all: per the PTX ISA the 16-byte
//     response is written at the result's offset in every CTA of the cluster, each write
//     signalled by a complete_tx of 16 bytes on that CTA's mbarrier at the barrier's offset.
// The response says whether a cluster not yet launched was cancelled, and which: a matter of the
// grid's scheduling, so its bytes are undefined (never compared). With collective_axes that
// leave several issuers in the cluster (`()` on two CTAs), each CTA receives a response per
// issuer: more bytes than it armed, and each response cancels one more cluster.
// GPU interpret mode (jaxpr_interpret.py _interpret_try_cluster_cancel_p, both releases) makes
// every cancel fail: each thread arrives once, plainly (no bytes), and the result is not written.

#include <algorithm>

#include "oracles/reference/execution_model.h"

namespace collfuzz::ref::exec {

void Execution::try_cluster_cancel(const Thread& th, const Op& op, const TryClusterCancel& tc) {
  const std::int64_t index = barrier_index_at(tc.barrier, iteration_);
  if (!mosaic_) {
    arrive(th.rank, tc.barrier.alloc, index, 1, 0, op.path);
    return;
  }
  const auto named = [&](const std::string& axis) {
    return std::find(tc.collective_axes.begin(), tc.collective_axes.end(), axis) !=
           tc.collective_axes.end();
  };
  const std::string* thread_axis = c_.mesh.thread_name ? &*c_.mesh.thread_name : nullptr;
  const bool first_thread = !thread_axis || !named(*thread_axis) || th.index == 0;
  arrive(th.rank, tc.barrier.alloc, index, 1, first_thread ? kResponseBytes : 0, op.path);
  bool first_cta = true;
  for (const std::string& axis : tc.collective_axes) {
    if (thread_axis && axis == *thread_axis) continue;
    first_cta = first_cta && mesh_.axis_index(th.rank, th.index, axis) == 0;
  }
  if (!first_thread || !first_cta) return;
  // The row's first byte: the same offset in every CTA.
  const std::int64_t row = smem_ref_base(tc.result, tc.result_index, std::nullopt) *
                           dtype_bits(allocs_.at(tc.result)->dtype) / 8;
  for (std::int64_t r = 0; r < mesh_.num_ctas(); ++r) {
    View result = buffer(r, tc.result);
    Memory& m = *result.mem;
    const auto at = static_cast<std::size_t>(result.offset + row);
    std::fill_n(m.undef.begin() + static_cast<std::ptrdiff_t>(at), kResponseBytes, 1);
    m.any_undef = true;
    complete_tx(r, tc.barrier.alloc, index, kResponseBytes);
  }
}

}  // namespace collfuzz::ref::exec
