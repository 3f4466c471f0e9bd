// The memory oracle: every SMEM buffer of every CTA, and the written parts of every output.
// Real multicast bugs show on one rank only, so no CTA is skipped.
#include <sstream>

#include "harness/core/fill.h"
#include "harness/core/outcome_json.h"
#include "oracles/op_kinds.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"

namespace collfuzz {
namespace {

std::string hex_element(std::uint64_t bits, int width) {
  std::ostringstream s;
  s << "0x" << std::hex << bits << " (" << std::dec << width << "-bit)";
  return s.str();
}

}  // namespace

void memory_oracle(const Case& c, const Outcome& expected, const Outcome& actual, Verdict& v) {
  if (!expected.accepted() || !actual.accepted()) return;
  // Per buffer name: the CTAs that differ, the first difference, the bytes that differ.
  struct Diff {
    std::vector<std::int64_t> ctas;
    std::string first;
    std::int64_t bytes = 0;
  };
  std::map<std::string, Diff> diffs;
  for (const CtaRecord& ec : expected.ctas) {
    const CtaRecord* ac = nullptr;
    for (const auto& x : actual.ctas) {
      if (x.rank == ec.rank) ac = &x;
    }
    for (const BufferRecord& eb : ec.buffers) {
      if (eb.undefined || !eb.observed) continue;
      const BufferRecord* ab = nullptr;
      if (ac) {
        for (const auto& x : ac->buffers) {
          if (x.alloc == eb.alloc) ab = &x;
        }
      }
      if (!ab || !ab->observed || ab->undefined) {
        ++v.unobserved;
        continue;
      }
      ++v.compared;
      const Alloc* a = find_alloc(c, eb.alloc);
      const DType dtype = a ? a->dtype : DType::kUInt8;
      if (ab->bytes.size() != eb.bytes.size()) {
        Diff& d = diffs[eb.alloc];
        d.ctas.push_back(ec.rank);
        if (d.first.empty()) {
          d.first = "CTA " + std::to_string(ec.rank) + " " + eb.alloc + ": expected " +
                    std::to_string(eb.bytes.size()) + " bytes, got " +
                    std::to_string(ab->bytes.size());
        }
        continue;
      }
      if (eb.bytes == ab->bytes) continue;  // the common case, at memcmp speed
      std::int64_t differing = 0;
      std::int64_t first_byte = -1;
      for (std::size_t i = 0; i < eb.bytes.size(); ++i) {
        if (eb.bytes[i] != ab->bytes[i]) {
          ++differing;
          if (first_byte < 0) first_byte = static_cast<std::int64_t>(i);
        }
      }
      if (differing == 0) continue;
      Diff& d = diffs[eb.alloc];
      d.ctas.push_back(ec.rank);
      d.bytes += differing;
      if (d.first.empty()) {
        const int bits = dtype_bits(dtype);
        const std::int64_t element = first_byte * 8 / bits;
        d.first = "CTA " + std::to_string(ec.rank) + " " + eb.alloc + " element " +
                  std::to_string(element) + ": expected " +
                  hex_element(load_element(eb.bytes, dtype, element), bits) + ", got " +
                  hex_element(load_element(ab->bytes, dtype, element), bits);
      }
    }
  }
  for (const auto& [name, d] : diffs) {
    std::string ctas;
    for (auto r : d.ctas) ctas += (ctas.empty() ? "" : ",") + std::to_string(r);
    add_mismatch(
        v, "memory", "data", op_kind_for_buffer(c, name),
        d.first + "; " + std::to_string(d.bytes) + " byte(s) differ; CTAs differing: " + ctas);
  }
  for (const OutputRecord& eo : expected.outputs) {
    const OutputRecord* ao = nullptr;
    for (const auto& x : actual.outputs) {
      if (x.name == eo.name) ao = &x;
    }
    const ArraySpec* spec = find_array(c.outputs, eo.name);
    if (!ao || !spec || ao->bytes.size() != eo.bytes.size()) {
      ++v.unobserved;
      continue;
    }
    ++v.compared;
    std::int64_t differing = 0;
    std::int64_t first = -1;
    for (const auto& [b, e] : eo.written) {
      for (std::int64_t i = b; i < e; ++i) {
        if (load_element(eo.bytes, spec->dtype, i) != load_element(ao->bytes, spec->dtype, i)) {
          ++differing;
          if (first < 0) first = i;
        }
      }
    }
    if (differing) {
      add_mismatch(v, "memory", "output", "copy_smem_to_gmem",
                   "output " + eo.name + " element " + std::to_string(first) + " differs (" +
                       std::to_string(differing) + " element(s))");
    }
  }
}

Verdict compare(const Case& c, const Outcome& expected, const Outcome& actual,
                DiagnosticLevel level) {
  Verdict v;
  v.executor = actual.executor;
  v.ran = actual.ran();
  if (!v.ran) {
    v.reason = actual.reason;
    return v;
  }
  if (actual.kind == OutcomeKind::kCrash) {
    add_mismatch(v, "executor", "crash", "-", actual.reason);
    return v;
  }
  if (actual.kind == OutcomeKind::kTimeout && expected.kind == OutcomeKind::kRejected) {
    add_mismatch(v, "diagnostic", "accepted_not_rejected", expected.diagnostic->rule,
                 "expected a diagnostic; the executor timed out");
    return v;
  }
  if (undefined_oracle(expected, actual, v)) return v;
  const Verdict before = v;
  diagnostic_oracle(expected, actual, level, v);
  if (v.mismatches.size() > before.mismatches.size() && expected.executor == "reference" &&
      (actual.kind == OutcomeKind::kRejected || actual.kind == OutcomeKind::kCompleted)) {
    // The reference's error differs from the executor's, or the executor completed: where other
    // interleavings of interpret mode's threads raise other errors, or none, the executor's
    // outcome may be one of theirs.
    Outcome with_alternatives = expected;
    if (add_interleaving_alternatives(c, with_alternatives) &&
        (!with_alternatives.diagnostic->alternatives.empty() ||
         with_alternatives.diagnostic->may_complete)) {
      v = before;
      diagnostic_oracle(with_alternatives, actual, level, v);
    }
  }
  byte_oracle(c, expected, actual, v);
  memory_oracle(c, expected, actual, v);
  return v;
}

}  // namespace collfuzz
