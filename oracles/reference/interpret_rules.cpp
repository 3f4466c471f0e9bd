// Rule family: GPU interpret mode's checks while it interprets the kernel jaxpr (spec 2.2, 4).
// The interpreter walks the jaxpr in program order, `when` bodies included.
#include <algorithm>

#include "harness/core/mutants.h"
#include "harness/core/pyrepr.h"

#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {
namespace {

// `[*mesh.cluster_names, mesh.thread_name]`, with a fresh object() standing in for a missing
// thread name; printed as str(list). The object's address is normalised by the oracle.
std::string thread_axis_names_repr(const Case& c) {
  const std::string thread =
      c.mesh.thread_name ? py::repr_str(*c.mesh.thread_name) : "<object object at 0x0>";
  std::string out = "[";
  if (mutant_active(Mutant::kInterpretAxesThreadFirst)) out += thread + ", ";
  for (const auto& n : c.mesh.cluster_names) out += n.repr() + ", ";
  if (mutant_active(Mutant::kInterpretAxesThreadFirst)) {
    out.resize(out.size() - 2);
    return out + "]";
  }
  out += thread;
  return out + "]";
}

bool is_thread_cluster_axis(const Case& c, const AxisName& a) {
  for (const auto& n : c.mesh.cluster_names) {
    if (n == a) return true;
  }
  return c.mesh.thread_name && !a.is_tuple && a.as_plain() == *c.mesh.thread_name;
}

void check_scoped(Checker& ck, const Op& op, const RunScoped& rs) {
  const Case& c = ck.c;
  // (Under pl.pallas_call, an effect-free run_scoped at the kernel's level, an empty one
  // included, is gone before interpretation: harness/core/pallas_call_dce.h. One inside a scope
  // that stays is interpreted.)
  bool regs = false;
  bool other = false;
  for (const Alloc& a : rs.allocs) (a.kind == AllocKind::kAcc ? regs : other) = true;
  if (regs) {
    ck.check(RuleId::kInterpRegsMixed, other, op.path);
    ck.check(RuleId::kInterpRegsCollective, !rs.collective_axes.empty(), op.path);
  } else {
    bool cluster_flag = false;
    bool thread_flag = false;
    for (const AxisName& a : rs.collective_axes) {
      ck.check(RuleId::kInterpAxisNotFound, !is_thread_cluster_axis(c, a), op.path, [&] {
        return Holes{{"axis", a.str()}, {"axes", thread_axis_names_repr(c)}};
      });
      if (c.mesh.thread_name && !a.is_tuple && a.as_plain() == *c.mesh.thread_name) {
        thread_flag = true;
      } else {
        cluster_flag = true;
      }
    }
    const bool has_thread = c.target.entry == Entry::kKernel && c.mesh.thread_name.has_value();
    if (!has_thread) {
      ck.check(RuleId::kInterpNoThreadAxis, cluster_flag || thread_flag, op.path);
    } else {
      if (mutant_active(Mutant::kInterpretScopedCheckOrder)) {
        ck.check(RuleId::kInterpThreadAxisRequired, !thread_flag, op.path);
        ck.check(RuleId::kInterpClusterAxes, cluster_flag, op.path);
      } else {
        ck.check(RuleId::kInterpClusterAxes, cluster_flag, op.path);
        ck.check(RuleId::kInterpThreadAxisRequired, !thread_flag, op.path);
      }
    }
  }
  for (const Alloc& a : rs.allocs) {
    if (a.kind == AllocKind::kSemaphore) {
      // The default uninitialized_memory="nan" has no value for semaphore dtypes.
      ck.check(RuleId::kInterpSemaphore, true, op.path, [&] {
        return Holes{
            {"dtype", a.semaphore == SemaphoreKind::kRegular ? "semaphore" : "barrier_semaphore"}};
      });
    }
    if (a.kind != AllocKind::kClusterBarrier) continue;
    ck.check(RuleId::kInterpClusterBarrierLeader, a.leader_tracked, op.path);
    for (const AxisName& axis : a.collective_axes) {
      ck.check(RuleId::kInterpClusterBarrierAxis, !is_thread_cluster_axis(c, axis), op.path, [&] {
        return Holes{{"axis", axis.str()}, {"axes", thread_axis_names_repr(c)}};
      });
    }
  }
}

void check_barrier_use(Checker& ck, const Op& op, const BarrierUse& use, const Scope& scope) {
  const Alloc* a = scope.allocs.at(use.alloc);
  ck.check(RuleId::kInterpBarrierUnindexed, !use.index && a->num_barriers != 1, op.path, [&] {
    return Holes{{"n", std::to_string(a->num_barriers)}};
  });
}

// The interpreter rebuilds the grid from the mesh's shape, a dict keyed by axis name: repeated
// names collapse and the sizes no longer multiply out.
void check_grid(Checker& ck) {
  const Mesh& m = ck.c.mesh;
  if (ck.c.target.entry != Entry::kKernel) return;
  AxisNames keys;
  Shape values;
  const auto put = [&](const AxisName& name, std::int64_t size) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == name) {
        values[i] = size;
        return;
      }
    }
    keys.push_back(name);
    values.push_back(size);
  };
  for (std::size_t i = 0; i < m.grid.size(); ++i) put(m.grid_names[i], m.grid[i]);
  for (std::size_t i = 0; i < m.cluster.size(); ++i) put(m.cluster_names[i], m.cluster[i]);
  if (m.num_threads) put(AxisName::plain(*m.thread_name), *m.num_threads);
  Shape expected = m.grid;
  expected.insert(expected.end(), m.cluster.begin(), m.cluster.end());
  expected.push_back(m.num_threads.value_or(1));
  ck.check(RuleId::kInterpGridDuplicates, element_count(values) != element_count(expected),
           "kernel", [&] {
             return Holes{{"grid", py::tuple_of_ints(values)},
                          {"expected", py::tuple_of_ints(expected)}};
           });
}

// plgpu.kernel wraps the body in a run_scoped collective over the thread axis (for its scratch
// shapes; none here), in both releases. A thread name that is also a cluster name makes that
// scope collective along a cluster axis, before any op of the program (found by the 0.11.2
// jax-interpret campaign, docs/upgrading-jax.md).
void check_kernel_scope(Checker& ck) {
  const Mesh& m = ck.c.mesh;
  if (ck.c.target.entry != Entry::kKernel || !m.thread_name) return;
  const bool clash =
      std::any_of(m.cluster_names.begin(), m.cluster_names.end(),
                  [&](const AxisName& n) { return n == AxisName::plain(*m.thread_name); });
  ck.check(RuleId::kInterpClusterAxes, clash, "kernel");
}

}  // namespace

void check_interpret(Checker& ck) {
  check_grid(ck);
  check_kernel_scope(ck);
  walk_program(ck.c.program, [&](const Op& op, const Scope& scope) {
    check_warp_context_interpret(ck, op);
    if (const auto* rs = std::get_if<RunScoped>(&op.v)) check_scoped(ck, op, *rs);
    if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      ck.check(RuleId::kInterpCopyNoBarrier, !cp->barrier, op.path);
      // The interpreter does not peel the predicate off: it lands among the barrier's transforms.
      ck.check(RuleId::kInterpCopyPredicate,
               cp->predicate.has_value() && !mutant_active(Mutant::kInterpretPredicateAccepted),
               op.path, [&] {
                 return Holes{{"n", cp->barrier->index ? "1" : "0"}};
               });
      if (cp->barrier) check_barrier_use(ck, op, *cp->barrier, scope);
    }
    if (const auto* ar = std::get_if<BarrierArrive>(&op.v))
      check_barrier_use(ck, op, ar->barrier, scope);
    if (const auto* tc = std::get_if<TryClusterCancel>(&op.v))
      check_barrier_use(ck, op, tc->barrier, scope);
    if (const auto* wt = std::get_if<BarrierWait>(&op.v))
      check_barrier_use(ck, op, wt->barrier, scope);
  });
}

}  // namespace collfuzz::ref
