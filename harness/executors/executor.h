// One interface for every executor: the CPU simulator, the CUDA executor, the JAX executors. An
// executor that cannot run a case returns an `unavailable` outcome with the reason, never a pass.
// Adding an executor is one file and one row of the registry (registry.cpp); no oracle or
// generator changes.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/outcome.h"

namespace collfuzz {

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string name() const = 0;
  // Which implementation it stands for: the oracles hold it against the reference's prediction
  // for this profile.
  virtual Profile profile() const = 0;
  // Empty when the executor can run on this machine; otherwise why not.
  virtual std::string unavailable_reason() const { return {}; }
  virtual Outcome run(const Case& c) = 0;
  // Whether a diagnostic of this stage (stage_names.h: "lower", "compile", ...) can come from
  // this executor. jax-lower stops after lowering and jax-ir neither compiles nor launches: a
  // case that fails later is unavailable there. The campaign counts, per executor, the rules it
  // can show.
  virtual bool observes_stage(std::string_view stage) const {
    (void)stage;
    return true;
  }
  // In a campaign, run this executor on one case in this many (by case index, so a seed still
  // gives the same campaign): a slow executor (real JAX) then costs a bounded share of the
  // time while the fast ones see every case. Replay and run use every executor on every case.
  virtual std::int64_t sample_every() const { return 1; }
  // Several cases at once, one outcome each, in order; an executor that can batch (the CUDA
  // executor launches cases of one cluster shape together) overrides it.
  virtual std::vector<Outcome> run_batch(const std::vector<Case>& cases) {
    std::vector<Outcome> out;
    out.reserve(cases.size());
    for (const Case& c : cases) out.push_back(run(c));
    return out;
  }
};

struct ExecutorOptions {
  double case_timeout_seconds = 60.0;  // external executors: per-case limit before a restart
  std::string python;                  // JAX executors: the interpreter (default: .venv-jax)
  std::string repo_root;               // where harness/jax lives
  std::int64_t slow_every = 0;         // campaigns: override the slow executors' sample_every()
  std::string log_dir;  // external executors' stderr logs ("": a private temporary directory)
};

struct ExecutorInfo {
  std::string_view name;
  std::string_view description;
};

// Every executor collfuzz knows, in a stable order.
const std::vector<ExecutorInfo>& executor_registry();
// Throws InputError (path "--executors") for an unknown name.
std::unique_ptr<Executor> make_executor(std::string_view name, const ExecutorOptions& options);
// "a,b,c" -> names, validated.
std::vector<std::string> parse_executor_list(std::string_view list);

// An outcome saying the executor did not run the case.
Outcome unavailable(const std::string& executor, Profile profile, std::string reason);

}  // namespace collfuzz
