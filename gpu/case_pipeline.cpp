#include "gpu/case_pipeline.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

#include "gpu/case_admission.h"
#include "gpu/outcome_decoder.h"
#include "gpu/parallel_for.h"
#include "gpu/table_emulator.h"
#include "harness/lowering/lowering.h"

namespace collfuzz::gpu {
namespace {

constexpr std::uint64_t kMaxProbeBlocks = std::uint64_t{1} << 24;

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t kMax = std::uint64_t{1} << 62;
  if (a == 0 || b == 0) return 0;
  return a > kMax / b ? kMax : a * b;
}

// Mosaic GPU's launch geometry (lower_jaxpr_to_module): the cluster padded to 3 dims and
// reversed, the parallel grid likewise with dims beyond 3 squashed into z, the CUDA grid their
// elementwise product, 128 threads per Pallas thread.
LaunchProbe launch_of(const Case& c) {
  LaunchProbe p;
  const Shape& cl = c.mesh.cluster;
  for (std::size_t i = 0; i < cl.size() && i < 3; ++i) {
    p.cluster[i] = static_cast<std::uint32_t>(cl[cl.size() - 1 - i]);
  }
  const Shape& g = c.mesh.grid;
  std::array<std::uint64_t, 3> parallel{1, 1, 1};  // x, y, z
  if (g.size() <= 3) {
    for (std::size_t i = 0; i < g.size(); ++i) {
      parallel[i] = static_cast<std::uint64_t>(g[g.size() - 1 - i]);
    }
  } else {
    std::uint64_t squashed = 1;
    for (std::size_t i = 0; i + 2 < g.size(); ++i) {
      squashed = saturating_mul(squashed, static_cast<std::uint64_t>(g[i]));
    }
    parallel = {static_cast<std::uint64_t>(g[g.size() - 1]),
                static_cast<std::uint64_t>(g[g.size() - 2]), squashed};
  }
  for (std::size_t d = 0; d < 3; ++d) p.grid[d] = saturating_mul(parallel[d], p.cluster[d]);
  p.block_threads = 128 * static_cast<std::uint64_t>(c.mesh.num_threads.value_or(1));
  return p;
}

}  // namespace

struct CasePipeline::Prepared {
  const Case* c = nullptr;
  std::optional<Outcome> outcome;
  std::optional<Diagnostic> probe;  // a launch-stage prediction, tried on the device later
  std::optional<EncodedCase> encoded;
  std::vector<std::uint64_t> input_offsets;
  std::vector<TensorMapBytes> tensor_maps;
};

struct CasePipeline::Batch {
  BatchImage image;
  std::vector<Prepared*> members;
  std::uint64_t results_bytes = 0;
  std::uint64_t table_bytes = 0;
};

CasePipeline::CasePipeline(DeviceBackend& backend, PipelineOptions options)
    : backend_(backend),
      options_(std::move(options)),
      host_threads_(options_.host_threads > 0
                        ? options_.host_threads
                        : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16)),
      arena_(backend.input_arena_bytes(),
             [&backend](std::uint64_t offset, const std::vector<std::uint8_t>& bytes) {
               return backend.upload_input(offset, bytes);
             }) {}

Outcome CasePipeline::outcome(OutcomeKind kind, std::string reason) const {
  Outcome o;
  o.kind = kind;
  o.executor = options_.executor;
  o.profile = Profile::kMosaic;
  o.reason = std::move(reason);
  o.info = backend_.info();
  o.info["lowering_jax_version"] = lowering::kLoweringJaxVersion;
  return o;
}

std::vector<Outcome> CasePipeline::run(const std::vector<Case>& cases) {
  stats_.cases += cases.size();
  std::vector<Prepared> prepared(cases.size());
  // Lowering and encoding are independent per case: spread them over the host's cores.
  parallel_for(cases.size(), host_threads_, 16, [&](std::size_t i) {
    prepared[i].c = &cases[i];
    if (context_lost_) {
      prepared[i].outcome = outcome(OutcomeKind::kCrash,
                                    "not run: the CUDA context was lost earlier in this process");
      return;
    }
    try {
      prepare(cases[i], prepared[i]);
    } catch (const std::exception& e) {
      prepared[i].outcome = outcome(OutcomeKind::kCrash, std::string("host error: ") + e.what());
    }
  });
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (prepared[i].probe) probe_lowering_launch(cases[i], *prepared[i].probe, prepared[i]);
  }
  std::map<LaunchShape, std::vector<Prepared*>> groups;
  for (Prepared& p : prepared) {
    if (!p.outcome && p.encoded) groups[p.encoded->shape].push_back(&p);
  }
  for (const auto& [shape, group] : groups) run_shape(shape, group);
  std::vector<Outcome> out;
  out.reserve(cases.size());
  for (Prepared& p : prepared) {
    out.push_back(p.outcome ? std::move(*p.outcome)
                            : outcome(OutcomeKind::kCrash, "internal error: no outcome"));
  }
  return out;
}

void CasePipeline::prepare(const Case& c, Prepared& p) {
  Admission a = admit_case(c, backend_);
  switch (a.kind) {
    case Admission::Kind::kRun:
      p.encoded = std::move(a.encoded);
      return;
    case Admission::Kind::kProbeLaunch:
      p.probe = std::move(a.diagnostic);  // the device is asked after the parallel part
      return;
    case Admission::Kind::kRejected: {
      Outcome o = outcome(OutcomeKind::kRejected, "");
      o.diagnostic = std::move(a.diagnostic);
      p.outcome = std::move(o);
      return;
    }
    case Admission::Kind::kUnavailable:
      p.outcome = outcome(OutcomeKind::kUnavailable, std::move(a.reason));
      return;
    case Admission::Kind::kUndefined: {
      Outcome o = outcome(OutcomeKind::kUndefined, "");
      o.undefined = std::move(a.undefined);
      p.outcome = std::move(o);
      return;
    }
  }
}

void CasePipeline::probe_lowering_launch(const Case& c, const Diagnostic& predicted, Prepared& p) {
  LaunchProbe probe = launch_of(c);
  const std::uint64_t blocks =
      saturating_mul(saturating_mul(probe.grid[0], probe.grid[1]), probe.grid[2]);
  if (blocks > kMaxProbeBlocks) {
    if (predicted.rule == "launch.grid_dims") {
      p.outcome =
          outcome(OutcomeKind::kUnavailable,
                  "the lowering predicts a launch failure (" + stage_exception_message(predicted) +
                      ") for a grid of " + std::to_string(blocks) +
                      " blocks; the executor does not launch a grid that large to check");
      return;
    }
    probe.grid = {probe.cluster[0], probe.cluster[1], probe.cluster[2]};
  }
  if (auto diagnostic = backend_.probe_launch(probe)) {
    Outcome o = outcome(OutcomeKind::kRejected, "");
    o.diagnostic = std::move(diagnostic);
    p.outcome = std::move(o);
    return;
  }
  p.outcome =
      outcome(OutcomeKind::kUnavailable,
              "the device accepts the launch that the lowering predicts it refuses (" +
                  stage_exception_message(predicted) + "); without a plan there is nothing to run");
}

bool CasePipeline::place_inputs(Prepared& p, std::string& error) {
  p.input_offsets.clear();
  for (const ArraySpec& in : p.encoded->inputs) {
    const auto offset = arena_.place(in, error);
    if (!offset) return false;
    p.input_offsets.push_back(*offset);
  }
  return true;
}

void CasePipeline::run_shape(const LaunchShape& shape, const std::vector<Prepared*>& group) {
  Batch batch{BatchImage(shape), {}, 0, 0};
  for (Prepared* p : group) {
    if (context_lost_) {
      p->outcome = outcome(OutcomeKind::kCrash,
                           "not run: the CUDA context was lost earlier in this request");
      continue;
    }
    std::string error;
    bool placed = place_inputs(*p, error);
    if (!placed && error.empty()) {
      flush(batch);  // its inputs stay valid until it has run
      arena_.clear();
      placed = place_inputs(*p, error);
    }
    if (!placed) {
      p->outcome = outcome(OutcomeKind::kUnavailable,
                           error.empty() ? "the inputs do not fit the input arena" : error);
      continue;
    }
    const EncodedCase& e = *p->encoded;
    p->tensor_maps.assign(e.tensor_maps.size(), TensorMapBytes{});
    bool encoded = true;
    for (std::size_t k = 0; k < e.tensor_maps.size() && encoded; ++k) {
      const TensorMapRequest& req = e.tensor_maps[k];
      if (auto d = backend_.encode_tensor_map(
              req, p->input_offsets[static_cast<std::size_t>(req.input)], p->tensor_maps[k])) {
        Outcome o = outcome(OutcomeKind::kRejected, "");
        o.diagnostic = std::move(d);
        p->outcome = std::move(o);
        encoded = false;
      }
    }
    if (!encoded) continue;
    const std::uint64_t tables = e.steps.size() * sizeof(DevStep) +
                                 e.tensor_maps.size() * kTensorMapBytes +
                                 e.stores.size() * sizeof(DevStore) + 4096;
    if (!batch.members.empty() &&
        (batch.members.size() >= options_.max_batch_cases ||
         batch.results_bytes + e.results_bytes > options_.max_batch_results_bytes ||
         batch.table_bytes + tables > options_.max_batch_table_bytes)) {
      flush(batch);
    }
    batch.image.add(e, p->input_offsets, p->tensor_maps);
    batch.members.push_back(p);
    batch.results_bytes += e.results_bytes + 256;
    batch.table_bytes += tables;
  }
  flush(batch);
}

void CasePipeline::flush(Batch& batch) {
  if (batch.members.empty()) return;
  const LaunchShape shape = batch.image.shape();
  batch.image.finish();
  LaunchResult r = backend_.launch(batch.image, options_.timing);
  ++stats_.launches;
  stats_.launched_cases += batch.members.size();
  stats_.kernel_ms += r.kernel_ms;
  const std::string batch_cases = std::to_string(batch.members.size());
  switch (r.status) {
    case LaunchResult::Status::kOk: {
      DecodeOptions d;
      d.executor = options_.executor;
      d.timeout_ms = static_cast<double>(options_.timing.timeout_ns) / 1e6;
      d.info = backend_.info();
      d.info["lowering_jax_version"] = lowering::kLoweringJaxVersion;
      d.info["batch_cases"] = batch_cases;
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.3f", r.kernel_ms);
      d.info["batch_kernel_ms"] = ms;
      parallel_for(batch.members.size(), host_threads_, 16, [&](std::size_t k) {
        const std::uint8_t* results = r.results + batch.image.results_base(k);
        DevCaseStatus status;
        std::memcpy(&status, results, sizeof status);
        Prepared& p = *batch.members[k];
        if (status.bits & kStatusEmulatorUndefined) {
          p.outcome = outcome(OutcomeKind::kUnavailable,
                              "undefined behaviour the emulator gives no meaning to (an arrival on "
                              "a phase with no pending arrival)");
          return;
        }
        p.outcome = decode_outcome(*p.encoded, results, d);
      });
      break;
    }
    case LaunchResult::Status::kRefused:
      refused(batch, r.message);
      break;
    case LaunchResult::Status::kSticky:
      context_lost_ = true;
      for (Prepared* p : batch.members) {
        Outcome o = outcome(OutcomeKind::kCrash, "a sticky CUDA error in a launch of " +
                                                     batch_cases + " case(s): " + r.message +
                                                     "; the worker process must restart");
        o.info["cuda_context_lost"] = "1";
        o.info["batch_cases"] = batch_cases;
        p->outcome = std::move(o);
      }
      break;
  }
  batch.image = BatchImage(shape);
  batch.members.clear();
  batch.results_bytes = 0;
  batch.table_bytes = 0;
}

void CasePipeline::refused(Batch& batch, const std::string& message) {
  const LaunchShape shape = batch.image.shape();
  if (batch.members.size() > 1) {
    // Each case alone: a batch's SMEM is its largest case's, and one case may be what the device
    // cannot fit.
    const std::vector<Prepared*> members = batch.members;
    for (Prepared* p : members) {
      Batch single{BatchImage(shape), {p}, 0, 0};
      single.image.add(*p->encoded, p->input_offsets, p->tensor_maps);
      flush(single);
    }
    return;
  }
  Prepared& p = *batch.members.front();
  LaunchProbe probe;
  probe.cluster = shape.cluster;
  probe.grid = {shape.cluster[0], shape.cluster[1], shape.cluster[2]};
  probe.block_threads = std::uint64_t{shape.threads_per_cta} * kLanes;
  probe.smem_bytes = p.encoded->smem_bytes;
  if (auto diagnostic = backend_.probe_launch(probe)) {
    Outcome o = outcome(OutcomeKind::kRejected, "");
    o.diagnostic = std::move(diagnostic);
    p.outcome = std::move(o);
    return;
  }
  p.outcome = outcome(OutcomeKind::kUnavailable,
                      "the interpreter kernel cannot be launched for this case (" + message +
                          ") although the device accepts the configuration itself");
}

}  // namespace collfuzz::gpu
