// Rule families: the whole-kernel resource estimate (stage estimate), which JAX runs over every
// run_scoped before any lowering rule, and the kernel-level checks that follow it (stage module):
// TMEM mixing, the SMEM capacity, and barrier initialisation (spec 1.4, 1.5, 2.1).
#include <algorithm>

#include "harness/core/pyrepr.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {
namespace {

constexpr std::int64_t kSmemAlignment = 1024;
constexpr std::int64_t kMbarrierBytes = 8;

std::int64_t align_up(std::int64_t x, std::int64_t a) { return (x + a - 1) / a * a; }

// One mgpu.Barrier or mgpu.ClusterBarrier as the estimator keys it.
struct BarrierKey {
  std::string identity;  // equality of the dataclass
  std::int64_t num_barriers = 1;
  bool cluster = false;
  bool leader_tracked = false;
  std::size_t num_dims = 0;  // cluster: collective entries
  bool first_dim_grouped = false;
  std::string where;
};

// collections.Counter with insertion order, as `+` and `|` combine it.
struct BarrierCounts {
  std::vector<std::pair<BarrierKey, std::int64_t>> items;

  std::int64_t* find(const std::string& id) {
    for (auto& [k, n] : items) {
      if (k.identity == id) return &n;
    }
    return nullptr;
  }
  void combine(const BarrierCounts& other, bool max) {
    for (const auto& [k, n] : other.items) {
      if (std::int64_t* mine = find(k.identity)) {
        *mine = max ? std::max(*mine, n) : *mine + n;
      } else {
        items.emplace_back(k, n);
      }
    }
  }
};

struct Resources {
  std::int64_t smem = 0;
  BarrierCounts barriers;
  bool tmem_plain = false;
  bool tmem_collective = false;

  void add(const Resources& o) {  // Resources.__add__: nested scopes
    smem += o.smem;
    barriers.combine(o.barriers, false);
    tmem_plain |= o.tmem_plain;
    tmem_collective |= o.tmem_collective;
  }
  void or_(const Resources& o) {  // Resources.or_: sibling scopes share
    smem = std::max(smem, o.smem);
    barriers.combine(o.barriers, true);
    tmem_plain |= o.tmem_plain;
    tmem_collective |= o.tmem_collective;
  }
};

class Estimator {
 public:
  explicit Estimator(Checker& ck) : ck_(ck) {}

  Resources body(const Body& b) {
    Resources rs;
    for (const Op& op : b) {
      if (const auto* s = std::get_if<RunScoped>(&op.v)) rs.or_(scoped(op, *s));
      if (const auto* w = std::get_if<When>(&op.v); w && python_bool(w->cond).value_or(true))
        rs.or_(body(w->body));
    }
    return rs;
  }

 private:
  Checker& ck_;

  bool block_local(const AxisNames& axes) const {
    const std::string* wg = ck_.mesh.thread_name();
    if (!wg) return axes.empty();
    return axes.size() == 1 && !axes[0].is_tuple && axes[0].as_plain() == *wg;
  }

  // jax.tree.map(_resolve_cluster_axis, collective_axes): a tuple entry is a group whose parts
  // are resolved one by one.
  std::string resolve_cluster_barrier(const Op& op, const Alloc& a, BarrierKey& key) {
    std::string dims;
    const auto resolve = [&](const std::string& part) {
      const auto d = ck_.mesh.cluster_dim(AxisName::plain(part));
      ck_.check(RuleId::kEstimateClusterBarrierAxis, !d, op.path, [&] {
        return Holes{{"axis", part}, {"axes", ck_.mesh.reversed_cluster_names_repr()}};
      });
      return std::to_string(*d);
    };
    for (const AxisName& entry : a.collective_axes) {
      if (entry.is_tuple) {
        dims += "(";
        for (const auto& part : entry.parts) dims += resolve(part) + ",";
        dims += ")";
      } else {
        dims += resolve(entry.as_plain());
      }
      dims += ";";
    }
    key.num_dims = a.collective_axes.size();
    key.first_dim_grouped = !a.collective_axes.empty() && a.collective_axes[0].is_tuple;
    return dims;
  }

  Resources scoped(const Op& op, const RunScoped& rs) {
    Resources res;
    for (const Alloc& a : rs.allocs) {
      switch (a.kind) {
        case AllocKind::kBarrier: {
          const std::int64_t arrivals =
              a.orders_tensor_core ? a.num_arrivals : a.num_arrivals * (ck_.lane() ? 128 : 1);
          BarrierKey key;
          key.identity = "B" + std::to_string(arrivals) + "/" + std::to_string(a.num_barriers) +
                         "/" + (a.orders_tensor_core ? "t" : "f");
          key.num_barriers = a.num_barriers;
          key.where = op.path;
          Resources one;
          one.barriers.items.emplace_back(key, 1);
          res.add(one);
          break;
        }
        case AllocKind::kClusterBarrier: {
          BarrierKey key;
          key.cluster = true;
          key.leader_tracked = a.leader_tracked;
          key.num_barriers = a.num_barriers;
          key.where = op.path;
          key.identity = "C" + resolve_cluster_barrier(op, a, key) + "/" +
                         std::to_string(a.num_arrivals) + "/" + std::to_string(a.num_barriers) +
                         "/" + (a.orders_tensor_core ? "t" : "f") + (a.leader_tracked ? "L" : "");
          Resources one;
          one.barriers.items.emplace_back(key, 1);
          res.add(one);
          break;
        }
        case AllocKind::kTmem:
          (a.collective ? res.tmem_collective : res.tmem_plain) = true;
          break;
        case AllocKind::kSmem:
          res.smem += align_up(element_count(a.shape) * dtype_bits(a.dtype) / 8, kSmemAlignment);
          break;
        case AllocKind::kAcc:
          break;
        case AllocKind::kSemaphore:
          // Only REGULAR semaphores have the semaphore dtype the estimator looks for; a BARRIER
          // semaphore falls through to the unsupported memory space.
          if (a.semaphore == SemaphoreKind::kBarrier) {
            ck_.check(RuleId::kEstimateGmem, true, op.path);
          }
          ck_.check(RuleId::kEstimateSemaphoreScope, !block_local(rs.collective_axes), op.path);
          break;
        case AllocKind::kGmem:
          ck_.check(RuleId::kEstimateGmem, true, op.path);
          break;
      }
    }
    res.add(body(rs.body));
    return res;
  }
};

}  // namespace

void check_resources(Checker& ck) {
  // JAX 0.11.2 lowers plgpu.kernel through mpmd_map; pl.pallas_call finds no Mosaic GPU rule.
  ck.check(RuleId::kModulePallasCall, ck.c.target.entry == Entry::kPallasCall, "kernel");
  const Resources rs = Estimator(ck).body(ck.c.program);

  ck.check(RuleId::kModuleTmemMixed, rs.tmem_plain && rs.tmem_collective, "kernel");

  std::int64_t smem_bytes = rs.smem;
  for (const auto& [key, count] : rs.barriers.items)
    smem_bytes += count * key.num_barriers * kMbarrierBytes;
  if (rs.tmem_plain || rs.tmem_collective) smem_bytes += 4;
  const std::int64_t max_smem = ck.arch_major() >= 9 ? 227 * 1024 : 163 * 1024;
  ck.check(RuleId::kModuleSmemCapacity, smem_bytes > max_smem, "kernel", [&] {
    return Holes{{"bytes", std::to_string(smem_bytes)}, {"max", std::to_string(max_smem)}};
  });

  // 0.12.0.1: one hardware CTA barrier per warpgroup and one CTA-wide are reserved of 16; collfuzz
  // allocates no CTA barrier of its own, so only the reservation can overflow.
  const std::int64_t warpgroups = ck.c.mesh.num_threads.value_or(1);
  const std::int64_t available = 16 - (1 + warpgroups);
  ck.check(RuleId::kModuleCtaBarrierBudget, available < 0, "kernel", [&] {
    return Holes{
        {"n", "0"}, {"available", std::to_string(available)}, {"wg", std::to_string(warpgroups)}};
  });

  for (const auto& [key, count] : rs.barriers.items) {
    if (key.cluster && key.leader_tracked) {
      ck.check(RuleId::kModuleLeaderOneDim, key.num_dims != 1, key.where);
      ck.check(RuleId::kModuleLeaderUngrouped, key.first_dim_grouped, key.where);
    }
    ck.check(RuleId::kModuleBarrierGroup, key.num_barriers > 32, key.where);
  }

  const auto& cl = ck.mesh.cuda_cluster();
  ck.check(RuleId::kModuleTmemOddCluster, rs.tmem_collective && (cl[0] * cl[1] * cl[2]) % 2 != 0,
           "kernel", [&] {
             return Holes{
                 {"cluster", py::tuple_of_ints(std::vector<std::int64_t>(cl.begin(), cl.end()))}};
           });
}

}  // namespace collfuzz::ref
