#include "harness/runner/barrier_imbalance.h"

#include <algorithm>
#include <functional>

#include "harness/core/terminal_text.h"
#include "harness/core/warp_map.h"
#include "harness/lowering/cluster_geometry.h"

namespace collfuzz {
namespace {

// The value of a condition in one CTA and thread; nullopt when it names an axis that is neither
// a plain cluster axis nor the thread axis.
std::optional<bool> eval(const Cond& c, const Case& k, const std::vector<std::int64_t>& coords,
                         std::int64_t thread) {
  switch (c.kind) {
    case Cond::Kind::kConst:
      return c.constant;
    case Cond::Kind::kAtom: {
      std::optional<std::int64_t> v;
      for (std::size_t i = 0; i < k.mesh.cluster_names.size() && i < coords.size(); ++i) {
        const AxisName& n = k.mesh.cluster_names[i];
        if (!n.is_tuple && n.parts.size() == 1 && n.parts[0] == c.axis) v = coords[i];
      }
      if (!v && k.mesh.thread_name && *k.mesh.thread_name == c.axis) v = thread;
      if (!v) return std::nullopt;
      switch (c.op) {
        case CmpOp::kEq:
          return *v == c.value;
        case CmpOp::kNe:
          return *v != c.value;
        case CmpOp::kLt:
          return *v < c.value;
        case CmpOp::kLe:
          return *v <= c.value;
        case CmpOp::kGt:
          return *v > c.value;
        case CmpOp::kGe:
          return *v >= c.value;
      }
      return std::nullopt;
    }
    case Cond::Kind::kAll:
    case Cond::Kind::kAny: {
      const bool all = c.kind == Cond::Kind::kAll;
      bool unknown = false;
      for (const Cond& ch : c.children) {
        const auto r = eval(ch, k, coords, thread);
        if (!r)
          unknown = true;
        else if (*r != all)
          return !all;
      }
      if (unknown) return std::nullopt;
      return all;
    }
    case Cond::Kind::kNot: {
      if (c.children.empty()) return std::nullopt;
      const auto r = eval(c.children[0], k, coords, thread);
      if (!r) return std::nullopt;
      return !*r;
    }
  }
  return std::nullopt;
}

std::string axes_text(const AxisNames& axes) {
  std::string out;
  for (const AxisName& a : axes) {
    std::string n;
    for (const auto& p : a.parts) n += (n.empty() ? "" : ",") + p;
    out += (out.empty() ? "" : ", ") + (a.is_tuple ? "(" + n + ")" : n);
  }
  return "(" + out + ")";
}

std::string barrier_name(const BarrierUse& u) {
  return u.alloc + "[" + std::to_string(u.index.value_or(0)) + "]";
}

// Whether the use names `barrier` ("alloc[index]"): a loop's slot names every barrier of its
// array on some trip.
bool names_barrier(const BarrierUse& u, const std::string& barrier) {
  if (u.slot) return barrier.rfind(u.alloc + "[", 0) == 0;
  return barrier_name(u) == barrier;
}

std::string threads_text(const std::vector<std::int64_t>& ts) {
  std::string out;
  for (auto t : ts) out += (out.empty() ? "" : ", ") + std::to_string(t);
  return (ts.size() == 1 ? "thread " : "threads ") + out;
}

void collect(const Case& k, const Body& body, std::vector<const Cond*>& guards,
             const std::string& barrier, const std::vector<std::int64_t>& coords,
             const std::vector<CtaRecord>& ctas, std::vector<BarrierContributor>& out) {
  const std::int64_t threads = k.mesh.num_threads.value_or(1);
  // Threads of this CTA for which every enclosing pl.when holds (unknown: -1 marks it).
  const auto running = [&](const Cond* extra, bool& unknown) {
    std::vector<std::int64_t> ts;
    unknown = false;
    for (std::int64_t t = 0; t < threads; ++t) {
      bool on = true;
      for (const Cond* g : guards) {
        const auto r = eval(*g, k, coords, t);
        if (!r) unknown = true;
        on = on && r.value_or(false);
      }
      if (extra && on) {
        const auto r = eval(*extra, k, coords, t);
        if (!r) unknown = true;
        on = r.value_or(false);
      }
      if (on) ts.push_back(t);
    }
    return ts;
  };
  // Which threads of this CTA an arrival runs on, as the contributor line says it.
  const auto arrival_here = [&]() {
    bool unknown = false;
    const auto ts = running(nullptr, unknown);
    std::string here = ts.empty() ? "does not run here (its pl.when is false in this CTA)"
                                  : "arrives here from " + threads_text(ts);
    if (unknown) here += " (a condition names an axis collfuzz cannot evaluate per CTA)";
    return here;
  };
  for (const Op& op : body) {
    if (const auto* s = std::get_if<RunScoped>(&op.v)) {
      collect(k, s->body, guards, barrier, coords, ctas, out);
    } else if (const auto* l = std::get_if<Loop>(&op.v)) {
      // A loop's copies and arrivals, each once per trip of this CTA's.
      const std::size_t first = out.size();
      collect(k, l->body, guards, barrier, coords, ctas, out);
      for (std::size_t i = first; i < out.size(); ++i)
        out[i].here +=
            "; once per trip of the " + std::string(l->nd ? "nd_loop" : "loop") + " at " + op.path;
    } else if (const auto* w = std::get_if<When>(&op.v)) {
      guards.push_back(&w->cond);
      collect(k, w->body, guards, barrier, coords, ctas, out);
      guards.pop_back();
    } else if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      if (!cp->barrier || !names_barrier(*cp->barrier, barrier)) continue;
      std::string what = "copy_gmem_to_smem " + cp->src + " -> " + cp->dst;
      if (cp->collective_axes && !cp->collective_axes->empty())
        what += ", multicast over " + axes_text(*cp->collective_axes) +
                " (its bytes complete the barrier in every CTA of the group; the issuer arms it)";
      if (cp->leader_tracked == LeaderTracked::kPartitioned)
        what += ", leader-tracked PARTITIONED(" + std::to_string(cp->partition_axis) +
                ") (arms the leader CTA's barrier only)";
      if (cp->leader_tracked == LeaderTracked::kReplicated)
        what += ", leader-tracked REPLICATED (arms the leader CTA's barrier only)";
      bool unknown = false;
      const auto ts = running(nullptr, unknown);
      std::string here = ts.empty() ? "does not run here (its pl.when is false in this CTA)"
                                    : "issued here by " + threads_text(ts);
      if (!ts.empty() && cp->predicate) {
        bool u2 = false;
        const auto on = running(&*cp->predicate, u2);
        unknown = unknown || u2;
        if (on.size() < ts.size())
          here +=
              "; its predicate is false for " + std::to_string(ts.size() - on.size()) + " of them";
      }
      if (unknown) here += " (a condition names an axis collfuzz cannot evaluate per CTA)";
      // A multicast's bytes come from every CTA of its group: say which CTAs issue it.
      if (cp->collective_axes && !cp->collective_axes->empty() && ctas.size() > 1) {
        std::string issuers;
        std::size_t n = 0;
        for (const CtaRecord& other : ctas) {
          bool any = false;
          for (std::int64_t t = 0; t < k.mesh.num_threads.value_or(1) && !any; ++t) {
            bool on = true;
            for (const Cond* g : guards) on = on && eval(*g, k, other.coords, t).value_or(false);
            any = on;
          }
          if (any) {
            issuers += (issuers.empty() ? "" : ", ") + std::to_string(other.rank);
            ++n;
          }
        }
        here += "; issued in " + std::to_string(n) + " of " + std::to_string(ctas.size()) +
                " CTAs (" + (issuers.empty() ? std::string("none") : "rank " + issuers) + ")";
      }
      out.push_back({op.path, what, here});
    } else if (const auto* tc = std::get_if<TryClusterCancel>(&op.v)) {
      if (!names_barrier(tc->barrier, barrier)) continue;
      std::string here = arrival_here();
      // The request: from the CTAs at index 0 along every named cluster axis, its 16-byte
      // response completing on this barrier of every CTA of the cluster.
      std::string issuers;
      std::size_t n = 0;
      for (const CtaRecord& other : ctas) {
        bool first = true;
        for (std::size_t d = 0; d < k.mesh.cluster_names.size() && d < other.coords.size(); ++d) {
          const AxisName& name = k.mesh.cluster_names[d];
          const bool named =
              !name.is_tuple && std::find(tc->collective_axes.begin(), tc->collective_axes.end(),
                                          name.as_plain()) != tc->collective_axes.end();
          first = first && (!named || other.coords[d] == 0);
        }
        if (!first) continue;
        issuers += (issuers.empty() ? "" : ", ") + std::to_string(other.rank);
        ++n;
      }
      here += "; the request is issued in " + std::to_string(n) + " of " +
              std::to_string(ctas.size()) + " CTAs (rank " + issuers +
              "), each response completing 16 B on this barrier of every CTA";
      out.push_back({op.path, "try_cluster_cancel", here});
    } else if (const BarrierUse* a = arrival_barrier(op)) {
      if (!names_barrier(*a, barrier)) continue;
      const std::string here = arrival_here();
      out.push_back({op.path,
                     std::holds_alternative<BarrierArrive>(op.v) ? "barrier_arrive"
                                                                 : "barrier_arrive_and_wait",
                     here});
    }
  }
}

std::string opt(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : "?"; }

// An nd_loop whose body names the barrier (one of the barrier's `contributors` lies in it) and
// whose CTAs run different numbers of trips: what each CTA runs (G // S + (a < G % S)), the usual
// reason a peer's arrival never comes.
void uneven_nd_loops(const Case& c, const Body& body,
                     const std::vector<BarrierContributor>& contributors,
                     const std::vector<CtaRecord>& ctas, std::vector<std::string>& findings) {
  for (const Op& op : body) {
    const auto* l = std::get_if<Loop>(&op.v);
    const std::string inside = op.path + ".body[";
    const bool named = l && l->nd &&
                       std::any_of(contributors.begin(), contributors.end(),
                                   [&](const auto& k) { return k.op.rfind(inside, 0) == 0; });
    if (named) {
      const lowering::ClusterGeometry geometry(c);
      std::string trips;
      std::int64_t least = -1;
      std::int64_t most = -1;
      for (const CtaRecord& r : ctas) {
        const std::int64_t n = loop_trips(
            *l, [&](const std::string& axis) { return geometry.axis_index(r.rank, 0, axis); });
        least = least < 0 ? n : std::min(least, n);
        most = std::max(most, n);
        trips += (trips.empty() ? "" : ", ") + std::string("CTA ") + std::to_string(r.rank) + ": " +
                 std::to_string(n);
      }
      if (least != most) {
        const std::int64_t g = l->nd->grid_size();
        const std::int64_t s = l->nd->axis_size;
        findings.push_back("the nd_loop at " + op.path +
                           " runs a different number of trips per CTA (" + trips +
                           "): its grid of " + std::to_string(g) + " steps over an axis of size " +
                           std::to_string(s) + " gives each " + std::to_string(g) + " // " +
                           std::to_string(s) + " + (axis_index < " + std::to_string(g % s) +
                           ") trips, so a CTA's last trip waits for peers that have left the loop");
      }
    }
    if (const Body* inner = nested_body(op))
      uneven_nd_loops(c, *inner, contributors, ctas, findings);
  }
}

}  // namespace

std::optional<BarrierImbalance> first_unbalanced_barrier(const Case& c, const Outcome& o) {
  const CtaRecord* cta = nullptr;
  std::string barrier;
  for (const CtaRecord& r : o.ctas) {
    for (const WaitRecord& w : r.waits) {
      if (!w.completed) {
        cta = &r;
        barrier = w.barrier;
        break;
      }
    }
    if (cta) break;
  }
  if (!cta) {
    for (const CtaRecord& r : o.ctas) {
      for (const BarrierRecord& b : r.barriers) {
        if ((b.tx && *b.tx != 0) || (b.armed && b.received && *b.armed != *b.received)) {
          cta = &r;
          barrier = b.alloc + "[" + std::to_string(b.index) + "]";
          break;
        }
      }
      if (cta) break;
    }
  }
  if (!cta) return std::nullopt;
  BarrierImbalance out;
  out.rank = cta->rank;
  out.coords = cta->coords;
  out.barrier = barrier;
  for (const BarrierRecord& b : cta->barriers)
    if (b.alloc + "[" + std::to_string(b.index) + "]" == barrier) out.record = b;
  for (const WaitRecord& w : cta->waits)
    if (!w.completed && w.barrier == barrier) out.stuck.push_back(w);
  std::vector<const Cond*> guards;
  // A warp_map's copies and arrivals are listed once per warp that issues them.
  const Case expanded = has_warp_map(c.program) ? expand_warp_maps(c) : Case{};
  const Case& walked = has_warp_map(c.program) ? expanded : c;
  collect(walked, walked.program, guards, barrier, cta->coords, o.ctas, out.contributors);
  if (barrier == "block_sync") {
    out.findings.push_back(
        "the block-wide barrier at a thread-collective run_scoped's entry: some Pallas thread of "
        "this CTA never reaches it");
    return out;
  }
  if (const auto& r = out.record) {
    if (r->pending && *r->pending > 0 && r->count)
      out.findings.push_back(std::to_string(*r->pending) + " of " + std::to_string(*r->count) +
                             " arrival(s) missing in the open phase (phase " + opt(r->phases) +
                             ")");
    if (r->tx && *r->tx > 0)
      out.findings.push_back(std::to_string(*r->tx) +
                             " B armed (expect_tx) but never received in the open phase");
    if (r->tx && *r->tx < 0)
      out.findings.push_back(std::to_string(-*r->tx) +
                             " B received beyond what was armed in the open phase");
  }
  uneven_nd_loops(walked, walked.program, out.contributors, o.ctas, out.findings);
  bool any_here = false;
  for (const auto& k : out.contributors)
    any_here = any_here || k.here.rfind("does not run", 0) != 0;
  if (out.contributors.empty())
    out.findings.push_back("no copy or arrival in the program names " + barrier);
  else if (!any_here)
    out.findings.push_back("no copy or arrival that names " + barrier +
                           " runs in this CTA: only other CTAs' multicasts can reach it");
  return out;
}

std::string describe_imbalance(const BarrierImbalance& b) {
  std::string coords;
  for (auto x : b.coords) coords += (coords.empty() ? "" : ",") + std::to_string(x);
  std::string out = "The first barrier that does not balance: " + terminal_text(b.barrier) +
                    " in CTA " + std::to_string(b.rank) + " (" + coords + ")\n";
  for (const WaitRecord& w : b.stuck)
    out += "  thread " + std::to_string(w.thread) + " waits for phase " + std::to_string(w.phase) +
           " at " + terminal_text(w.op) + " and never completes\n";
  if (const auto& r = b.record) {
    out += "  arrivals: " + opt(r->arrivals) + " received, " + opt(r->count) +
           " needed per phase; bytes: " + opt(r->armed) + " armed, " + opt(r->received) +
           " received; phases completed: " + opt(r->phases) + "\n";
  }
  for (const auto& f : b.findings) out += "  -> " + terminal_text(f) + "\n";
  if (!b.contributors.empty()) out += "  the copies and arrivals that name it, in program order:\n";
  for (const auto& k : b.contributors)
    out += "    " + terminal_text(k.op) + " " + terminal_text(k.what) + ": " +
           terminal_text(k.here) + "\n";
  return out;
}

}  // namespace collfuzz
