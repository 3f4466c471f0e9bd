#include "oracles/reference/undefined_runs.h"

namespace collfuzz::ref {
namespace {

// The first target outside the cluster, or -1.
std::int64_t first_outside(const std::vector<std::int64_t>& targets, std::int64_t num_ctas) {
  for (const std::int64_t r : targets) {
    if (r >= num_ctas) return r;
  }
  return -1;
}

[[noreturn]] void raise_undefined(UndefinedBehaviour code, const std::string& op,
                                  std::int64_t issuer, std::string detail) {
  throw UndefinedRun{UndefinedRecord{code, op, issuer, std::move(detail), {}}};
}

}  // namespace

void check_multicast_in_cluster(const std::vector<std::int64_t>& targets, std::int64_t num_ctas,
                                const std::string& op, std::int64_t issuer) {
  const std::int64_t r = first_outside(targets, num_ctas);
  if (r < 0) return;
  raise_undefined(
      UndefinedBehaviour::kMulticastOutsideCluster, op, issuer,
      "a multicast to CTA " + std::to_string(r) + " of a cluster of " + std::to_string(num_ctas));
}

void check_cluster_arrival_in_cluster(const std::vector<std::int64_t>& targets,
                                      std::int64_t num_ctas, const std::string& op,
                                      std::int64_t issuer) {
  const std::int64_t r = first_outside(targets, num_ctas);
  if (r < 0) return;
  raise_undefined(UndefinedBehaviour::kClusterArrivalOutsideCluster, op, issuer,
                  "a cluster-barrier arrival on CTA " + std::to_string(r) + " of a cluster of " +
                      std::to_string(num_ctas));
}

std::int64_t mbarrier_init_count(const Alloc& a, std::int64_t count) {
  constexpr std::int64_t kWarpgroupLanes = 128;
  return a.kind == AllocKind::kBarrier && !a.orders_tensor_core ? count * kWarpgroupLanes : count;
}

void check_mbarrier_count(std::int64_t hardware_count, const std::string& alloc) {
  constexpr std::int64_t kMaxCount = (std::int64_t{1} << 20) - 1;
  if (hardware_count >= 1 && hardware_count <= kMaxCount) return;
  raise_undefined(UndefinedBehaviour::kMbarrierInitCount, "", 0,
                  "mbarrier.init of " + alloc + " with an arrival count of " +
                      std::to_string(hardware_count) + " (the range is 1 to 2^20 - 1)");
}

void check_warp_no_complete(const std::vector<std::vector<WarpArrival>>& warps,
                            std::int64_t pending, const std::vector<const std::string*>& ops,
                            const std::string& barrier, std::int64_t issuer,
                            const std::function<std::vector<UndefinedBehaviour>()>& also) {
  const std::optional<NoCompleteHit> hit = no_complete_completion(warps, pending);
  if (!hit) return;
  const WarpArrival& a = warps[hit->warp][hit->arrival];
  UndefinedRecord record{UndefinedBehaviour::kMbarrierNoCompleteCompletes,
                         *ops.at(static_cast<std::size_t>(a.tag)), issuer,
                         "warp " + std::to_string(hit->warp) + "'s no-complete arrival on " +
                             barrier + " completes its phase after " + std::to_string(hit->before) +
                             " other arrivals of its " + std::to_string(pending) +
                             " pending hardware arrivals, in some order of the warps",
                         also ? also() : std::vector<UndefinedBehaviour>{}};
  throw UndefinedRun{std::move(record)};
}

Outcome undefined_outcome(const UndefinedRun& u, Profile profile) {
  Outcome o;
  o.kind = OutcomeKind::kUndefined;
  o.profile = profile;
  o.executor = "reference";
  o.undefined = u.record;
  return o;
}

}  // namespace collfuzz::ref
