#include "gpu/outcome_decoder.h"

#include <cstdio>
#include <cstring>

namespace collfuzz::gpu {
namespace {

template <typename T>
T read(const std::uint8_t* base, std::uint64_t offset) {
  T v;
  std::memcpy(&v, base + offset, sizeof v);
  return v;
}

std::string hex64(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string format_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", ms);
  return buf;
}

}  // namespace

Outcome decode_outcome(const EncodedCase& c, const std::uint8_t* results,
                       const DecodeOptions& options) {
  Outcome o;
  o.executor = options.executor;
  o.profile = Profile::kMosaic;
  o.info = options.info;
  const auto status = read<DevCaseStatus>(results, 0);
  if (status.bits & kStatusSmemMisaligned) {
    o.kind = OutcomeKind::kUnavailable;
    o.reason = "dynamic shared memory starts at shared address " +
               std::to_string(status.smem_base) +
               ", not 128-byte aligned: TMA destinations would be misaligned";
    return o;
  }
  if (status.bits & kStatusBadGeometry) {
    o.kind = OutcomeKind::kCrash;
    o.reason = "the kernel saw a block or cluster shape other than the case's";
    return o;
  }
  if (status.bits & kStatusUnsupportedStep) {
    o.kind = OutcomeKind::kUnavailable;
    o.reason =
        "the plan has a step this build of the interpreter cannot execute (.cta_group::2 "
        "copies need an sm_100a build)";
    return o;
  }
  if (!(status.bits & kStatusRan)) {
    o.kind = OutcomeKind::kCrash;
    o.reason = "the kernel did not run the case's cluster";
    return o;
  }

  std::string timeouts;
  int timed_out = 0;
  std::vector<CtaRecord> ctas(c.num_ctas);
  for (std::uint32_t r = 0; r < c.num_ctas; ++r) {
    ctas[r].rank = r;
    ctas[r].coords = c.cta_coords[r];
  }
  for (const BufferMeta& b : c.buffer_meta) {
    if (read<std::uint32_t>(results, b.flag_offset) == 0) continue;
    BufferRecord rec;
    rec.alloc = b.alloc;
    rec.bytes.assign(results + b.result_offset, results + b.result_offset + b.bytes);
    ctas[static_cast<std::size_t>(b.cta)].buffers.push_back(std::move(rec));
  }
  for (std::size_t i = 0; i < c.waits.size(); ++i) {
    const auto w = read<DevWaitResult>(results, c.waits_offset + i * sizeof(DevWaitResult));
    if (w.status == kWaitNotReached) continue;
    const WaitMeta& m = c.waits[i];
    const bool completed = w.status == kWaitCompleted;
    ctas[static_cast<std::size_t>(m.cta)].waits.push_back(
        WaitRecord{m.thread, m.op, m.barrier, m.phase, completed});
    if (!completed) {
      ++timed_out;
      if (timed_out <= 4) {
        timeouts += (timeouts.empty() ? "" : "; ") + std::string("CTA ") + std::to_string(m.cta) +
                    " thread " + std::to_string(m.thread) + " at " + m.op + " on " + m.barrier +
                    " (phase " + std::to_string(m.phase) + ")";
        if (m.barrier != "block_sync") timeouts += ", mbarrier word " + hex64(w.mbarrier_word);
      }
    }
  }
  for (const OutputMeta& m : c.outputs) {
    OutputRecord rec;
    rec.name = m.name;
    rec.bytes.assign(results + m.offset, results + m.offset + m.bytes);
    const std::uint8_t* written = results + m.written_offset;
    for (std::int64_t e = 0; e < m.elements;) {
      if (!written[e]) {
        ++e;
        continue;
      }
      const std::int64_t begin = e;
      while (e < m.elements && written[e]) ++e;
      rec.written.emplace_back(begin, e);
    }
    o.outputs.push_back(std::move(rec));
  }
  o.ctas = std::move(ctas);
  if (timed_out > 0 || (status.bits & kStatusTimeout)) {
    o.kind = OutcomeKind::kTimeout;
    o.reason = std::to_string(timed_out) + " wait(s) did not complete within " +
               format_ms(options.timeout_ms) + " ms: " + timeouts + (timed_out > 4 ? "; ..." : "") +
               "; the kernel drained and exited";
  } else {
    o.kind = OutcomeKind::kCompleted;
  }
  o.info["wait_budget_ms"] = format_ms(options.timeout_ms);
  return o;
}

}  // namespace collfuzz::gpu
