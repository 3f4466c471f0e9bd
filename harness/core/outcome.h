// The outcome of running a case: a diagnostic, or what every barrier and buffer of every CTA of
// the modelled cluster saw. The reference and every executor produce this type;
// docs/outcome-format.md is its JSON form.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/undefined_behaviour.h"

namespace collfuzz {

enum class OutcomeKind : std::uint8_t {
  kRejected,     // a diagnostic: the implementation raised an exception (or aborted)
  kCompleted,    // accepted; every wait completed
  kDeadlock,     // accepted; at least one wait can never complete
  kTimeout,      // the executor gave up waiting (a bounded wait ran out, or a process timed out)
  kCrash,        // the executor itself failed (process died, protocol error)
  kUnavailable,  // the executor could not run this case; `reason` says why
  kUndefined,    // accepted, but the run meets undefined behaviour; `undefined` says which
};

const char* to_string(OutcomeKind k);
std::optional<OutcomeKind> parse_outcome_kind(std::string_view s);

// Another error the program may raise instead of the canonical one: what an interleaving of
// interpret mode's threads other than the reference's canonical schedule raises first
// (oracles/reference/interleavings.h), or the compiler's layout search running out of fuel before
// it proves its system unsatisfiable (oracles/reference/layout_inference_rules.cpp).
struct DiagnosticAlternative {
  std::string rule;
  std::string exception;
  std::string message;
  std::string op;
  bool operator==(const DiagnosticAlternative&) const = default;
};

struct Diagnostic {
  std::string stage;      // mesh, trace, interpret, estimate, module, lower, dialect, launch, run
  std::string exception;  // Python exception class, e.g. ValueError; `abort` for a process abort
  std::string message;    // exact text, holes filled
  std::string rule;       // stable rule id (oracles/reference/rules.def); empty when unknown
  std::string op;         // JSON path of the op that raised it, when there is one
  // A stored expectation only: instead of `message`, a regular expression searched in the
  // message (message_regex.h); `message` is then empty.
  std::string message_regex = {};
  // The same stage's other diagnostics that the program may raise instead, depending on how its
  // threads interleave (a racy use of a barrier in interpret mode) or on how far the layout
  // search gets: the diagnostic oracle accepts any of them. The reference fills them in; a stored
  // expectation lists other interleavings' by hand (freeze keeps the layout search's).
  std::vector<DiagnosticAlternative> alternatives = {};
  // Some interleaving raises no error at all and the kernel completes (every thread of a racy
  // barrier use keeps up): the diagnostic oracle also accepts a completed run, whose bytes and
  // memory are then not compared (no schedule's are predicted).
  bool may_complete = false;
};

// "stage: Exception: message", as the GPU executor's reasons quote a diagnostic.
inline std::string stage_exception_message(const Diagnostic& d) {
  return d.stage + ": " + d.exception + ": " + d.message;
}

struct WaitRecord {
  std::int64_t thread = 0;  // Pallas thread (warpgroup) index
  std::string op;           // JSON path of the barrier_wait or run_scoped
  std::string barrier;      // "alloc[index]"; "block_sync" for the run_scoped entry barrier
  std::int64_t phase = 0;   // the phase it waits for
  bool completed = false;
};

// Counts are in the units of the barrier's arrival count: one Pallas arrival for a Barrier (128
// hardware arrivals, one for orders_tensor_core), one remote arrival for a ClusterBarrier. An
// absent field is one the executor could not observe.
struct BarrierRecord {
  std::string alloc;
  std::int64_t index = 0;
  std::optional<std::int64_t> count;     // arrivals one phase needs
  std::optional<std::int64_t> arrivals;  // arrivals received over the run
  std::optional<std::int64_t> armed;     // bytes added by expect_tx over the run
  std::optional<std::int64_t> received;  // bytes completed by complete_tx over the run
  std::optional<std::int64_t> phases;    // phases completed
  std::optional<std::int64_t> pending;   // at the end: arrivals still missing in the open phase
  std::optional<std::int64_t> tx;        // at the end: armed minus received in the open phase
};

struct BufferRecord {
  std::string alloc;
  std::vector<std::uint8_t> bytes;  // logical row-major contents (int4: two per byte, low first)
  bool undefined =
      false;  // contents not predicted (undefined behaviour or racing writers wrote them)
  bool observed = true;  // false: the executor could not read it back
};

struct CtaRecord {
  std::int64_t rank = 0;             // CUDA cluster rank, x + y*sx + z*sx*sy
  std::vector<std::int64_t> coords;  // index along each Pallas cluster axis, declaration order
  std::vector<BarrierRecord> barriers;
  std::vector<BufferRecord> buffers;
  std::vector<WaitRecord> waits;
};

struct OutputRecord {
  std::string name;
  std::vector<std::uint8_t> bytes;
  std::vector<std::pair<std::int64_t, std::int64_t>> written;  // element ranges [begin, end)
};

// The longest traceback an outcome may carry (an adapter trims to 4 KB; longer is bad input).
inline constexpr std::size_t kMaxTracebackBytes = 16 * 1024;

struct Outcome {
  OutcomeKind kind = OutcomeKind::kUnavailable;
  Profile profile = Profile::kMosaic;
  std::string executor;
  std::optional<Diagnostic> diagnostic;      // kRejected
  std::optional<UndefinedRecord> undefined;  // kUndefined
  std::vector<CtaRecord> ctas;               // kCompleted, kDeadlock, kTimeout (what was seen)
  std::vector<OutputRecord> outputs;
  std::string reason;                       // kUnavailable, kCrash, kTimeout
  std::map<std::string, std::string> info;  // executor facts: jax_version, device, ...
  // Optional, from an external executor on a diagnostic or a crash: the Python traceback,
  // trimmed to its last frames (docs/outcome-format.md). Never compared: kept with findings.
  std::string traceback;

  bool accepted() const {
    return kind == OutcomeKind::kCompleted || kind == OutcomeKind::kDeadlock ||
           kind == OutcomeKind::kTimeout;
  }
  bool ran() const { return kind != OutcomeKind::kUnavailable; }
};

// The byte every SMEM buffer holds before anything writes it: executors pre-fill with it, so
// bytes nobody wrote are visible (as CUTLASS's testbeds do with 0xFF).
inline constexpr std::uint8_t kSmemSentinel = 0xA5;

std::string digest_hex(const std::vector<std::uint8_t>& bytes);  // "fnv1a64:0123456789abcdef"

}  // namespace collfuzz
