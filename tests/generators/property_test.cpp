// Properties (RapidCheck with GoogleTest): the reference and the simulator agree on all three
// oracles, and metamorphic relations that the reference (and the simulator) must satisfy. A
// failing property prints RapidCheck's reproduce string (RC_PARAMS="reproduce=...") and writes
// its shrunk case to build/property-failures/<property>.json.
#include <gtest/gtest.h>

#include <set>

#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "generators/case_gen.h"
#include "generators/copy_gen.h"
#include "generators/mesh_gen.h"
#include "generators/program_builder.h"
#include "generators/target_gen.h"
#include "harness/core/fill.h"
#include "harness/core/ndarray.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"
#include "tests/generators/property_support.h"

namespace collfuzz {
namespace {

using generators::CopyMode;
using generators::CopyPlan;
using properties::mosaic_outcomes;
using properties::write_failing_case;

// Fails the property (after writing the case) unless `ok`.
// An executor that could not run one of two cases (unavailable) proves nothing either way.
bool both_ran(const Outcome& a, const Outcome& b) {
  return a.kind != OutcomeKind::kUnavailable && b.kind != OutcomeKind::kUnavailable;
}

void check(bool ok, const std::string& property, const Case& c, const std::string& why) {
  if (ok) return;
  write_failing_case(property, c);
  RC_FAIL(property + ": " + why);
}

std::string verdict_text(const Verdict& v) {
  std::string s;
  for (const auto& m : v.mismatches) s += m.signature + ": " + m.detail + "\n";
  return s;
}

// A case of one scope with one copy built from `plan` on a clean mesh and target: the cases the
// data-movement properties are about.
Case one_copy_case(const generators::MeshChoice& mesh, Target target, CopyPlan plan) {
  generators::ProgramPlan program;
  generators::ScopePlan scope;
  // Only the leader's barrier is armed by a leader-tracked copy: only the leader waits.
  if (plan.mode == CopyMode::kPartitioned || plan.mode == CopyMode::kReplicated)
    scope.wait = generators::WaitChoice::kLeaderOnly;
  scope.issuers = generators::Issuers::kThreadZero;  // one issue per CTA, whatever num_threads is
  plan.guard.reset();
  plan.predicate.reset();
  plan.dst_indexed = false;
  plan.layout = generators::SrcLayout::kExact;
  scope.copies.push_back(plan);
  program.scopes.push_back(scope);
  target.entry = Entry::kKernel;
  return generators::ProgramBuilder(generators::build_mesh(mesh, true), target, true)
      .build(program, "property");
}

const CopyGmemToSmem* first_copy(Case& c) {
  const CopyGmemToSmem* found = nullptr;
  properties::for_each_op(c.program, [&](Op& op) {
    if (!found) found = std::get_if<CopyGmemToSmem>(&op.v);
  });
  return found;
}

const Alloc* alloc_named(Case& c, const std::string& name) {
  const Alloc* found = nullptr;
  properties::for_each_op(c.program, [&](Op& op) {
    if (auto* rs = std::get_if<RunScoped>(&op.v)) {
      for (const auto& a : rs->allocs) {
        if (a.name == name) found = &a;
      }
    }
  });
  return found;
}

// Replaces every token of a message that is one of `names` by a placeholder.
std::string mask_names(const std::string& msg, const std::set<std::string>& names) {
  std::string out;
  std::size_t i = 0;
  const auto ident = [](char ch, bool first) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
           (!first && ch >= '0' && ch <= '9');
  };
  while (i < msg.size()) {
    if (ident(msg[i], true) && (i == 0 || !ident(msg[i - 1], false))) {
      std::size_t j = i;
      while (j < msg.size() && ident(msg[j], false)) ++j;
      const std::string tok = msg.substr(i, j - i);
      out += names.count(tok) ? "<axis>" : tok;
      i = j;
    } else {
      out += msg[i++];
    }
  }
  return out;
}

}  // namespace

RC_GTEST_PROP(Properties, ReferenceAndSimulatorAgreeOnAllThreeOracles, ()) {
  const auto sim = properties::simulator();
  if (!sim) RC_SUCCEED("no sim executor in this build");
  const Case c = *generators::any_case();
  const Verdict v = compare(c, predict(c, Profile::kMosaic).outcome, sim->run(c));
  // A case the simulator cannot run (it says unavailable, with the reason) proves nothing: discard.
  RC_PRE(v.ran);
  check(v.agrees(), "reference_vs_sim", c, verdict_text(v));
}

RC_GTEST_PROP(Properties, TheOrderOfCollectiveAxesDoesNotChangeTheOutcome, ()) {
  const Case c = *generators::any_case();
  const Case r = properties::reverse_collective_axes(c);
  const auto a = mosaic_outcomes(c);
  const auto b = mosaic_outcomes(r);
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (!both_ran(a[k].second, b[k].second)) continue;
    const Verdict v = compare(c, a[k].second, b[k].second, DiagnosticLevel::kRule);
    check(v.agrees(), "axis_order_" + a[k].first, c, verdict_text(v));
  }
}

RC_GTEST_PROP(Properties, RenamingAxesChangesOnlyTheNamesInMessages, ()) {
  const Case c = *generators::any_case();
  std::set<std::string> names;
  const Case r = properties::rename_axes(c, [&](const std::string& n) {
    names.insert(n);
    names.insert("r_" + n);
    return "r_" + n;
  });
  const auto a = mosaic_outcomes(c);
  const auto b = mosaic_outcomes(r);
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (!both_ran(a[k].second, b[k].second)) continue;
    const Verdict v = compare(c, a[k].second, b[k].second, DiagnosticLevel::kRule);
    check(v.agrees(), "axis_renaming_" + a[k].first, c, verdict_text(v));
    if (a[k].second.diagnostic && b[k].second.diagnostic) {
      const std::string ma = mask_names(normalize_message(a[k].second.diagnostic->message), names);
      const std::string mb = mask_names(normalize_message(b[k].second.diagnostic->message), names);
      check(ma == mb, "axis_renaming_message_" + a[k].first, c, ma + " != " + mb);
    }
  }
}

RC_GTEST_PROP(Properties, AMulticastOverSizeOneAxesEqualsAPlainCopy, ()) {
  Case c = *generators::any_case();
  if (c.target.arch == Arch::kSm80) c.target.arch = Arch::kSm90a;
  for (auto& d : c.mesh.cluster) d = 1;
  // Drop the axes of every copy that names distinct, declared cluster axes without leader
  // tracking: over size-1 axes such a multicast is a plain copy.
  Case plain = c;
  std::set<AxisName> declared(c.mesh.cluster_names.begin(), c.mesh.cluster_names.end());
  properties::for_each_op(plain.program, [&](Op& op) {
    auto* cp = std::get_if<CopyGmemToSmem>(&op.v);
    if (!cp || !cp->collective_axes || cp->collective_axes->empty() ||
        cp->leader_tracked != LeaderTracked::kNone)
      return;
    const std::set<AxisName> axes(cp->collective_axes->begin(), cp->collective_axes->end());
    if (axes.size() != cp->collective_axes->size()) return;
    for (const auto& a : axes) {
      if (!declared.count(a)) return;
    }
    cp->collective_axes.reset();
  });
  const auto a = mosaic_outcomes(c);
  const auto b = mosaic_outcomes(plain);
  for (std::size_t k = 0; k < a.size(); ++k) {
    const Verdict v = compare(c, a[k].second, b[k].second);
    check(v.agrees(), "size_one_multicast_" + a[k].first, c, verdict_text(v));
  }
}

RC_GTEST_PROP(Properties, TheBytesReceivedAcrossAMulticastGroupAreNTimesTheChunk, ()) {
  CopyPlan plan = *generators::copy();
  plan.mode = CopyMode::kMulticast;
  plan.axes.copy = generators::CopyAxes::kAll;
  const Case c = one_copy_case(*generators::mesh_choice(), *generators::target(), plan);
  Case mc = c;
  const CopyGmemToSmem* cp = first_copy(mc);
  RC_PRE(cp && cp->collective_axes.has_value());
  // Under a thread axis named like a cluster axis the builder cannot guard the issue by thread
  // index (the name reads the cluster axis): every Pallas thread issues the copy, and each CTA
  // receives the group's bytes once per thread.
  const bool shadowed =
      c.mesh.thread_name &&
      std::any_of(c.mesh.cluster_names.begin(), c.mesh.cluster_names.end(),
                  [&](const AxisName& a) { return a == AxisName::plain(*c.mesh.thread_name); });
  RC_PRE(!shadowed);
  // Repeated cluster names: the multicast mask spreads past the group (docs/jax-divergences.md).
  RC_PRE(std::set<AxisName>(c.mesh.cluster_names.begin(), c.mesh.cluster_names.end()).size() ==
         c.mesh.cluster_names.size());
  std::int64_t n = 1;
  for (std::size_t i = 0; i < c.mesh.cluster.size() && i < c.mesh.cluster_names.size(); ++i)
    n *= c.mesh.cluster[i];
  const Alloc* dst = alloc_named(mc, cp->dst);
  // The ref's bytes: a slice of the allocation's first dim takes part of it.
  std::int64_t elements = element_count(dst->shape);
  if (cp->dst_slice) elements = elements / dst->shape.front() * cp->dst_slice->size;
  const std::int64_t bytes = elements * dtype_bits(dst->dtype) / 8;
  for (const auto& [who, o] : mosaic_outcomes(c)) {
    RC_TAG(who + " " + to_string(o.kind));
    if (o.kind != OutcomeKind::kCompleted) continue;
    std::int64_t group_total = 0;
    for (const CtaRecord& cta : o.ctas) {
      for (const BarrierRecord& b : cta.barriers) {
        if (b.alloc != cp->barrier->alloc || !b.received) continue;
        check(*b.received == n * (bytes / n), "multicast_bytes_" + who, c,
              "CTA " + std::to_string(cta.rank) + " received " + std::to_string(*b.received) +
                  ", expected " + std::to_string(n) + " chunks of " + std::to_string(bytes / n));
        group_total += *b.received;
      }
    }
    check(group_total == static_cast<std::int64_t>(o.ctas.size()) * bytes,
          "multicast_group_bytes_" + who, c, "the cluster received " + std::to_string(group_total));
  }
}

RC_GTEST_PROP(Properties, PartitionedHalvesTileTheSourceExactlyOnce, ()) {
  CopyPlan plan = *generators::copy();
  plan.mode = CopyMode::kPartitioned;
  generators::MeshChoice mesh = *generators::mesh_choice();
  mesh.cluster = {2};
  mesh.grid = generators::GridVariant::kNone;
  Target target = *generators::target();
  target.arch = Arch::kSm100a;  // cta_group::2
  const Case c = one_copy_case(mesh, target, plan);
  Case mc = c;
  const CopyGmemToSmem* cp = first_copy(mc);
  RC_PRE(cp && cp->leader_tracked == LeaderTracked::kPartitioned);
  const ArraySpec& src = c.inputs.front();
  const Alloc* dst = alloc_named(mc, cp->dst);
  const auto p = static_cast<std::size_t>(cp->partition_axis);
  RC_PRE(p < src.shape.size() && dst->shape.size() == src.shape.size());
  // The check reads the buffer row-major in the source's order: not for a transformed (tiled,
  // swizzled), sliced or transposed one.
  RC_PRE(!dst->transforms.any() && !cp->dst_slice && !cp->dst_transpose);
  for (const auto& entry : mosaic_outcomes(c)) {
    // Not a structured binding: the lambda below captures it, which clang 14 cannot do.
    const std::string& who = entry.first;
    const Outcome& o = entry.second;
    RC_TAG(who + " " + to_string(o.kind));
    if (o.kind != OutcomeKind::kCompleted) continue;
    std::vector<std::vector<int>> written(
        2, std::vector<int>(static_cast<std::size_t>(element_count(dst->shape)), 0));
    const auto dst_strides = row_major_strides(dst->shape);
    bool ok = true;
    std::string why;
    for_each_coord(src.shape, [&](const std::vector<std::int64_t>& co) {
      const std::int64_t half = co[p] / dst->shape[p];
      std::int64_t local = 0;
      for (std::size_t d = 0; d < co.size(); ++d)
        local += (d == p ? co[d] % dst->shape[p] : co[d]) * dst_strides[d];
      std::int64_t flat = 0;
      const auto src_strides = row_major_strides(src.shape);
      for (std::size_t d = 0; d < co.size(); ++d) flat += co[d] * src_strides[d];
      const auto& buffers = o.ctas[static_cast<std::size_t>(half)].buffers;
      const auto it = std::find_if(buffers.begin(), buffers.end(),
                                   [&](const BufferRecord& b) { return b.alloc == dst->name; });
      if (it == buffers.end()) {
        ok = false;
        why = "no buffer";
        return;
      }
      ++written[static_cast<std::size_t>(half)][static_cast<std::size_t>(local)];
      if (load_element(it->bytes, dst->dtype, local) != fill_element_bits(src, flat) && ok) {
        ok = false;
        why = "element " + std::to_string(flat) + " of src is not at " + std::to_string(local) +
              " of CTA " + std::to_string(half);
      }
    });
    for (const auto& w : written) {
      for (int n : w) ok = ok && n == 1;
    }
    check(ok, "partitioned_halves_" + who, c,
          why.empty() ? "a dst element is not written exactly once" : why);
  }
}

RC_GTEST_PROP(Properties, AFalsePredicateLeavesEveryDestinationUnchanged, ()) {
  Case c = *generators::any_case();
  // A vector store into SMEM (`tile[...] = value`) writes its buffer whatever the copies do, and
  // a later scope's buffer at the same SMEM offset then holds its bytes: such programs are left
  // out of this property.
  std::set<std::string> vector_stored;
  properties::for_each_op(c.program, [&](Op& op) {
    if (auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      Cond f;
      f.kind = Cond::Kind::kConst;
      f.constant = false;
      cp->predicate = f;
    }
    if (const auto* vs = std::get_if<VectorStore>(&op.v); vs && vs->to_smem)
      vector_stored.insert(vs->dst);
  });
  RC_TAG(vector_stored.empty() ? "no vector store into SMEM" : "vector store into SMEM");
  if (!vector_stored.empty()) return;
  for (const auto& [who, o] : mosaic_outcomes(c)) {
    RC_TAG(who + " " + to_string(o.kind));
    if (!o.accepted()) continue;
    for (const CtaRecord& cta : o.ctas) {
      for (const BufferRecord& b : cta.buffers) {
        const bool untouched = std::all_of(b.bytes.begin(), b.bytes.end(),
                                           [](std::uint8_t x) { return x == kSmemSentinel; });
        check(untouched, "false_predicate_" + who, c,
              "CTA " + std::to_string(cta.rank) + " buffer " + b.alloc + " was written");
      }
    }
  }
}

}  // namespace collfuzz
