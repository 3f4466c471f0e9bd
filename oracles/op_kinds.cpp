#include "oracles/op_kinds.h"

#include <functional>

namespace collfuzz {
namespace {

int specificity(const std::string& mode) {
  if (mode == "copy_partitioned") return 4;
  if (mode == "copy_replicated") return 3;
  if (mode == "copy_multicast") return 2;
  if (mode == "copy") return 1;
  return 0;
}

std::string most_specific(const Case& c, const std::function<bool(const CopyGmemToSmem&)>& pick,
                          const std::string& fallback) {
  std::string best;
  std::function<void(const Body&)> walk = [&](const Body& body) {
    for (const Op& op : body) {
      if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
        if (pick(*cp)) {
          const std::string m = copy_mode(*cp);
          if (specificity(m) > specificity(best)) best = m;
        }
      } else if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
        walk(rs->body);
      } else if (const Body* b = nested_body(op)) {
        walk(*b);
      }
    }
  };
  walk(c.program);
  return best.empty() ? fallback : best;
}

}  // namespace

std::string copy_mode(const CopyGmemToSmem& cp) {
  if (cp.leader_tracked == LeaderTracked::kPartitioned) return "copy_partitioned";
  if (cp.leader_tracked == LeaderTracked::kReplicated) return "copy_replicated";
  if (cp.collective_axes && !cp.collective_axes->empty()) return "copy_multicast";
  return "copy";
}

std::string op_kind_for_buffer(const Case& c, const std::string& buffer) {
  return most_specific(
      c, [&](const CopyGmemToSmem& cp) { return cp.dst == buffer; }, "smem");
}

std::string op_kind_for_barrier(const Case& c, const std::string& barrier) {
  // No copy names it: a try_cluster_cancel's barrier is named after it, any other after its
  // arrivals.
  bool cancel = false;
  std::function<void(const Body&)> walk = [&](const Body& body) {
    for (const Op& op : body) {
      if (const auto* tc = std::get_if<TryClusterCancel>(&op.v))
        cancel = cancel || tc->barrier.alloc == barrier;
      if (const Body* b = nested_body(op)) walk(*b);
    }
  };
  walk(c.program);
  return most_specific(
      c, [&](const CopyGmemToSmem& cp) { return cp.barrier && cp.barrier->alloc == barrier; },
      cancel ? "try_cluster_cancel" : "barrier_arrive");
}

}  // namespace collfuzz
