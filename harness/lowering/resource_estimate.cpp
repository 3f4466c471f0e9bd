#include "harness/lowering/resource_estimate.h"

#include <algorithm>

#include "harness/core/pyrepr.h"
#include "harness/lowering/lowering_error.h"
#include "harness/lowering/rule_ids.h"

namespace collfuzz::lowering {

std::int64_t align_to(std::int64_t x, std::int64_t alignment) {
  const std::int64_t rem = x % alignment;
  return rem ? x + alignment - rem : x;
}

BarrierKey barrier_key(const Alloc& a, std::int64_t arrival_multiplier,
                       const ClusterGeometry& geometry) {
  BarrierKey k;
  k.num_barriers = a.num_barriers;
  k.orders_tensor_core = a.orders_tensor_core;
  if (a.kind == AllocKind::kBarrier) {
    k.arrival_count = a.orders_tensor_core ? a.num_arrivals : a.num_arrivals * arrival_multiplier;
    return k;
  }
  k.cluster = true;
  k.arrival_count = a.num_arrivals;
  k.leader_tracked = a.leader_tracked;
  for (const AxisName& entry : a.collective_axes) {
    std::vector<int> dims;
    for (const std::string& part : entry.parts)
      dims.push_back(geometry.resolve_cluster_axis(AxisName::plain(part)).value_or(-1));
    k.dims.push_back(std::move(dims));
    k.grouped.push_back(entry.is_tuple);
  }
  return k;
}

void Resources::add(const Resources& other) {
  smem_scratch_bytes += other.smem_scratch_bytes;
  tmem = tmem || other.tmem;
  tmem_collective = tmem_collective || other.tmem_collective;
  for (const Count& o : other.barrier_counts) {
    auto it = std::find_if(barrier_counts.begin(), barrier_counts.end(),
                           [&](const Count& m) { return m.key == o.key; });
    if (it != barrier_counts.end()) {
      it->count += o.count;
    } else {
      barrier_counts.push_back(o);
    }
  }
}

void Resources::or_(const Resources& other) {
  smem_scratch_bytes = std::max(smem_scratch_bytes, other.smem_scratch_bytes);
  tmem = tmem || other.tmem;
  tmem_collective = tmem_collective || other.tmem_collective;
  for (const Count& o : other.barrier_counts) {
    auto it = std::find_if(barrier_counts.begin(), barrier_counts.end(),
                           [&](const Count& m) { return m.key == o.key; });
    if (it != barrier_counts.end()) {
      it->count = std::max(it->count, o.count);
    } else {
      barrier_counts.push_back(o);
    }
  }
}

namespace {

class Estimator {
 public:
  Estimator(const Case& c, const ClusterGeometry& geometry) : c_(c), geometry_(geometry) {}

  Resources body(const TracedBody& nodes) {
    Resources rs;
    for (const TracedNode& n : nodes) {
      if (const auto* scoped = std::get_if<RunScoped>(&n.op->v)) {
        rs.or_(run_scoped(*n.op, *scoped, n.body));
      } else if (std::holds_alternative<When>(n.op->v) || std::holds_alternative<Loop>(n.op->v)) {
        Resources branches;  // the false branch is empty
        branches.or_(body(n.body));
        rs.or_(branches);
      }
    }
    return rs;
  }

 private:
  const Case& c_;
  const ClusterGeometry& geometry_;

  std::int64_t arrival_multiplier() const {
    return c_.target.semantics == Semantics::kLane ? 128 : 1;
  }

  bool block_local(const AxisNames& axes) const {
    const std::string* wg = geometry_.thread_name();
    if (!wg) return axes.empty();
    return axes.size() == 1 && axes[0] == AxisName::plain(*wg);
  }

  void resolve_cluster_axes(const Op& op, const Alloc& a) {
    // jax.tree.map(_resolve_cluster_axis, collective_axes): a tuple entry's parts one by one.
    for (const AxisName& entry : a.collective_axes) {
      for (const std::string& part : entry.parts) {
        if (!geometry_.resolve_cluster_axis(AxisName::plain(part))) {
          raise(
              Stage::kEstimate, "LookupError",
              "Unknown cluster axis " + part + ", available axes: " + geometry_.cluster_axes_repr(),
              rule_id::kEstimateClusterAxis, op.path);
        }
      }
    }
  }

  Resources run_scoped(const Op& op, const RunScoped& rs, const TracedBody& inner) {
    Resources res;
    for (const Alloc& a : rs.allocs) {
      Resources one;
      switch (a.kind) {
        case AllocKind::kBarrier:
          one.barrier_counts.push_back(
              {barrier_key(a, arrival_multiplier(), geometry_), 1, &op.path});
          break;
        case AllocKind::kClusterBarrier:
          resolve_cluster_axes(op, a);
          one.barrier_counts.push_back(
              {barrier_key(a, arrival_multiplier(), geometry_), 1, &op.path});
          break;
        case AllocKind::kTmem:
          // The constructor collapsed any batch dims, so only a 1D shape (which the constructor
          // already refused) is not 2D here.
          if (a.shape.size() < 2) {
            raise(Stage::kEstimate, "ValueError",
                  "TMEM allocations must be 2D. Got " + py::tuple_of_ints(a.shape), "", op.path);
          }
          (a.collective ? one.tmem_collective : one.tmem) = true;
          break;
        case AllocKind::kSmem:
          one.smem_scratch_bytes =
              align_to(element_count(a.shape) * dtype_bits(a.dtype) / 8, kSmemAlignment);
          break;
        case AllocKind::kAcc:
          break;  // registers
        case AllocKind::kSemaphore:
          // Only REGULAR semaphores are `semaphore` dtypes; a BARRIER semaphore's dtype is a
          // sibling (barrier_semaphore), so it falls through to the unsupported-memory-space
          // branch.
          if (a.semaphore == SemaphoreKind::kBarrier) {
            raise(Stage::kEstimate, "NotImplementedError", "Unsupported memory space: gmem",
                  rule_id::kEstimateGmem, op.path);
          }
          if (!block_local(rs.collective_axes)) {
            raise(Stage::kEstimate, "ValueError",
                  "Only thread-collective allocations are supported in run_scoped. To allocate "
                  "global semaphores, "
                  "use pl.get_global.",
                  rule_id::kEstimateSemaphore, op.path);
          }
          break;
        case AllocKind::kGmem:
          raise(Stage::kEstimate, "NotImplementedError", "Unsupported memory space: gmem",
                rule_id::kEstimateGmem, op.path);
      }
      res.add(one);
    }
    res.add(body(inner));
    return res;
  }
};

}  // namespace

Resources estimate_resources(const Case& c, const TracedBody& kernel,
                             const ClusterGeometry& geometry) {
  return Estimator(c, geometry).body(kernel);
}

}  // namespace collfuzz::lowering
