#include "harness/runner/outcome_text.h"

#include <algorithm>
#include <map>
#include <optional>

#include "harness/core/loop_index.h"
#include "harness/core/outcome_json.h"
#include "harness/core/terminal_text.h"
#include "harness/lowering/cluster_geometry.h"
#include "harness/runner/element_values.h"

namespace collfuzz {
namespace {

std::string opt_or_dash(const std::optional<std::int64_t>& v) {
  return v ? std::to_string(*v) : "-";
}

// Every string below comes from a case file or an executor: escaped for the terminal.
std::string t(const std::string& s) { return terminal_text(s); }
std::string lines(const std::string& s) { return terminal_lines(s); }

// Op path -> the loop whose body holds the op (nested ops too).
void map_loop_bodies(const Body& body, const Op* loop, std::map<std::string, const Op*>& out) {
  for (const Op& op : body) {
    if (loop) out[op.path] = loop;
    if (const Body* inner = nested_body(op))
      map_loop_bodies(*inner, std::holds_alternative<Loop>(op.v) ? &op : loop, out);
  }
}

// " (trip k of the loop at PATH, i = k)" for the k-th wait of a thread at an op inside a loop:
// the body's ops run once per trip (conditions do not read the index), so the k-th wait of a
// thread at one op is trip k's.
// An nd_loop's trip also names its grid index there (loop_info.index), for the CTA and thread:
// " (trip k of the nd_loop at PATH, t = k, m = 1, n = 0)".
std::string trip_note(const std::map<std::string, const Op*>& loops,
                      std::map<std::pair<std::int64_t, std::string>, std::int64_t>& seen,
                      const WaitRecord& w, const lowering::ClusterGeometry* geometry,
                      std::int64_t rank) {
  const auto it = loops.find(w.op);
  if (it == loops.end()) return "";
  const std::int64_t k = seen[{w.thread, w.op}]++;
  const Loop& l = std::get<Loop>(it->second->v);
  std::string s = " (trip " + std::to_string(k) + " of the " + (l.nd ? "nd_loop" : "loop") +
                  " at " + t(it->second->path);
  if (!l.index.empty()) s += ", " + t(l.index) + " = " + std::to_string(k);
  if (geometry && l.nd && l.nd->tiling_valid()) {
    const auto axis_index = [&](const std::string& axis) {
      return geometry->axis_index(rank, w.thread, axis);
    };
    for (std::size_t d = 0; d < l.nd->index_names.size(); ++d) {
      if (l.nd->index_names[d].empty()) continue;
      s += ", " + t(l.nd->index_names[d]) + " = " +
           std::to_string(nd_value(*nd_coord(*l.nd, d), axis_index, k));
    }
  }
  return s + ")";
}

}  // namespace

std::string describe_outcome(const Outcome& o, const Case* c) {
  std::string out = std::string(to_string(o.kind)) + " (" + to_string(o.profile) + ")";
  if (!o.executor.empty()) out = t(o.executor) + ": " + out;
  out += "\n";
  if (o.diagnostic) {
    const Diagnostic& d = *o.diagnostic;
    out += "  " + t(d.exception) + " at stage " + t(d.stage) +
           (d.rule.empty() ? "" : " [" + t(d.rule) + "]") + (d.op.empty() ? "" : " in " + t(d.op)) +
           "\n    " + lines(d.message) + "\n";
    // Other errors it may raise (Diagnostic::alternatives), a few of them: other interleavings'
    // in interpret mode, the layout search's running out of fuel for the compiler.
    constexpr std::size_t kShown = 4;
    if (!d.alternatives.empty() && o.profile == Profile::kInterpret) {
      out += "  or, under other interleavings of its threads, one of " +
             std::to_string(d.alternatives.size()) + " other errors:\n";
    } else if (!d.alternatives.empty()) {
      out += "  or, where JAX's layout search runs out of fuel before it proves that:\n";
    }
    for (std::size_t i = 0; i < d.alternatives.size() && i < kShown; ++i) {
      const DiagnosticAlternative& a = d.alternatives[i];
      out += "    " + (a.rule.empty() ? "" : "[" + t(a.rule) + "] ") + lines(a.message) + "\n";
    }
    if (d.alternatives.size() > kShown) {
      out += "    ... and " + std::to_string(d.alternatives.size() - kShown) +
             " more (--json lists them)\n";
    }
    if (d.may_complete) {
      out +=
          "  or, under an interleaving where every thread keeps up, no error: the kernel may "
          "complete\n";
    }
  }
  if (o.undefined) {
    const UndefinedRecord& u = *o.undefined;
    const UndefinedBehaviourInfo& info = undefined_behaviour_info(u.code);
    out += "  undefined behaviour " + std::string(info.name) + " [" + std::string(info.id) + "]" +
           (u.op.empty() ? "" : " in " + t(u.op)) +
           (u.cta ? " on CTA " + std::to_string(*u.cta) : "") + "\n";
    if (!u.detail.empty()) out += "    " + lines(u.detail) + "\n";
    out += "    fix: " + std::string(info.fix) + "\n";
  }
  if (!o.reason.empty()) out += "  reason: " + lines(o.reason) + "\n";
  std::map<std::string, const Op*> loops;
  if (c) map_loop_bodies(c->program, nullptr, loops);
  // For the grid index of waits in an nd_loop: built once (a case with waits passed the mesh
  // checks).
  std::optional<lowering::ClusterGeometry> geometry;
  const bool nd_waits = std::any_of(o.ctas.begin(), o.ctas.end(),
                                    [](const CtaRecord& r) { return !r.waits.empty(); }) &&
                        std::any_of(loops.begin(), loops.end(), [](const auto& e) {
                          return std::get<Loop>(e.second->v).nd.has_value();
                        });
  if (c && nd_waits) geometry.emplace(*c);
  for (const CtaRecord& cta : o.ctas) {
    std::map<std::pair<std::int64_t, std::string>, std::int64_t> seen;
    std::string coords;
    for (auto x : cta.coords) coords += (coords.empty() ? "" : ",") + std::to_string(x);
    out += "  CTA " + std::to_string(cta.rank) + " (" + coords + ")\n";
    for (const BarrierRecord& b : cta.barriers) {
      out += "    barrier " + t(b.alloc) + "[" + std::to_string(b.index) + "]: count " +
             opt_or_dash(b.count) + ", arrivals " + opt_or_dash(b.arrivals) + ", armed " +
             opt_or_dash(b.armed) + " B, received " + opt_or_dash(b.received) + " B, phases " +
             opt_or_dash(b.phases) + ", open phase: pending " + opt_or_dash(b.pending) + " tx " +
             opt_or_dash(b.tx) + "\n";
    }
    for (const WaitRecord& w : cta.waits) {
      out += "    thread " + std::to_string(w.thread) + " waits on " + t(w.barrier) + " phase " +
             std::to_string(w.phase) + " at " + t(w.op) +
             trip_note(loops, seen, w, geometry ? &*geometry : nullptr, cta.rank) + ": " +
             (w.completed ? "completes" : "NEVER completes") + "\n";
    }
    for (const BufferRecord& b : cta.buffers) {
      out += "    buffer " + t(b.alloc) + ": ";
      if (!b.observed) {
        out += "not observed\n";
      } else if (b.undefined) {
        out += "undefined (written by undefined behaviour or by racing writers)\n";
      } else {
        out += std::to_string(b.bytes.size()) + " B, " + digest_hex(b.bytes) + "\n";
        if (const Alloc* a = c ? find_alloc(*c, b.alloc) : nullptr)
          out += "      " + t(std::string(dtype_name(a->dtype))) + " " +
                 elements_text(b.bytes, a->dtype, element_count(a->shape)) + "\n";
      }
    }
  }
  for (const OutputRecord& r : o.outputs) {
    std::int64_t n = 0;
    for (const auto& [b, e] : r.written) n += e - b;
    out += "  output " + t(r.name) + ": " + std::to_string(n) + " element(s) written, " +
           digest_hex(r.bytes) + "\n";
    if (const ArraySpec* a = c ? find_array(c->outputs, r.name) : nullptr)
      out += "    " + t(std::string(dtype_name(a->dtype))) + " " +
             elements_text(r.bytes, a->dtype, element_count(a->shape)) + "\n";
  }
  return out;
}

std::string describe_verdict(const Verdict& v) {
  // A case pinned to another JAX release than the executor's is not compared (not a divergence).
  if (!v.ran &&
      (v.reason.rfind("version mismatch", 0) == 0 || v.reason.rfind("not compared", 0) == 0))
    return t(v.executor) + ": " + lines(v.reason) + "\n";
  if (!v.ran) return t(v.executor) + ": unavailable: " + lines(v.reason) + "\n";
  if (v.mismatches.empty()) {
    return t(v.executor) + ": agrees with the reference (" + std::to_string(v.compared) +
           " compared, " + std::to_string(v.unobserved) + " unobserved)\n";
  }
  std::string out =
      t(v.executor) + ": " + std::to_string(v.mismatches.size()) + " disagreement(s)\n";
  for (const Mismatch& m : v.mismatches)
    out += "  " + t(m.signature) + "\n    " + lines(m.detail) + "\n";
  return out;
}

}  // namespace collfuzz
