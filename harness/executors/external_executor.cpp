#include "harness/executors/external_executor.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "harness/core/bounded_json_reader.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/outcome_json.h"
#include "harness/executors/jax_python.h"
#include "harness/executors/registry_entries.h"

#ifndef COLLFUZZ_SOURCE_DIR
#define COLLFUZZ_SOURCE_DIR "."
#endif

namespace collfuzz {

namespace {

constexpr const char* kProtocol = "collfuzz-executor/1";

Outcome failed(const std::string& executor, Profile profile, OutcomeKind kind, std::string reason) {
  Outcome o;
  o.kind = kind;
  o.executor = executor;
  o.profile = profile;
  o.reason = std::move(reason);
  return o;
}

// The one place where a line from an executor (its hello, an answer) is parsed as JSON.
// Every protocol line (hello and answers) goes through the bounded reader (limits.h).
nlohmann::json parse_protocol_line(const std::string& line, const std::string& source) {
  return parse_json_bounded(line, source);
}

std::string seconds_text(double s) {
  std::string t = std::to_string(s);
  t.erase(t.find_last_not_of('0') + 1);
  if (t.ends_with('.')) t.pop_back();
  return t;
}

}  // namespace

ExternalExecutor::ExternalExecutor(std::string name, Profile profile, std::vector<std::string> argv,
                                   double case_timeout_seconds, double startup_timeout_seconds,
                                   const std::string& log_dir)
    : name_(std::move(name)),
      profile_(profile),
      argv_(std::move(argv)),
      case_timeout_(case_timeout_seconds),
      startup_timeout_(startup_timeout_seconds),
      log_(log_dir, name_) {}

ExternalExecutor::~ExternalExecutor() = default;

std::string ExternalExecutor::unavailable_reason() const {
  if (argv_.empty()) return "no program to run";
  if (!std::filesystem::exists(argv_[0])) return argv_[0] + " does not exist";
  for (std::size_t i = 1; i < argv_.size(); ++i) {
    if (argv_[i].ends_with(".py") && !std::filesystem::exists(argv_[i]))
      return argv_[i] + " does not exist";
  }
  if (failed_starts_ >= kMaxFailedStarts) {
    return "it failed to start " + std::to_string(failed_starts_) +
           " times in a row; the last time: " + start_failure_;
  }
  return unavailable_;
}

bool ExternalExecutor::observes_stage(std::string_view stage) const {
  return std::find(unobserved_.begin(), unobserved_.end(), stage) == unobserved_.end();
}

std::string ExternalExecutor::stderr_tail() const {
  const std::string tail = log_.tail(1200);
  return tail.empty() ? "" : "; stderr ends: " + tail;
}

void ExternalExecutor::restart_later() {
  child_.stop();
  ++restarts_;
}

Outcome ExternalExecutor::broken(OutcomeKind kind, std::string reason) {
  reason += stderr_tail();
  restart_later();
  return failed(name_, profile_, kind, std::move(reason));
}

bool ExternalExecutor::start(std::string& why_not) {
  if (!child_.spawn(argv_, log_.fd(), why_not)) return false;
  std::string hello_line;
  const auto read = child_.read_line(startup_timeout_, kMaxLineBytes, hello_line);
  if (read != process::ChildProcess::Read::kLine) {
    why_not = read == process::ChildProcess::Read::kTimeout
                  ? "no hello within " + seconds_text(startup_timeout_) + " s (--timeout)"
              : read == process::ChildProcess::Read::kTooLong
                  ? "its hello is longer than " + std::to_string(kMaxLineBytes) + " bytes"
                  : "it exited before saying hello";
    why_not += stderr_tail();
    child_.stop();
    return false;
  }
  try {
    const auto hello = parse_protocol_line(hello_line, name_ + ":hello");
    if (!hello.is_object() || hello.value("hello", "") != kProtocol) {
      why_not = "it does not speak " + std::string(kProtocol) + ": " + hello_line.substr(0, 200);
      child_.stop();
      return false;
    }
    if (hello.contains("unavailable")) unavailable_ = hello["unavailable"].get<std::string>();
    if (hello.contains("info") && hello["info"].is_object()) {
      for (const auto& [k, v] : hello["info"].items())
        info_[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  } catch (const std::exception& e) {
    why_not = std::string("its hello is not a protocol line: ") + e.what();
    child_.stop();
    return false;
  }
  return true;
}

std::string ExternalExecutor::probe() {
  if (std::string why = unavailable_reason(); !why.empty()) return why;
  if (!child_.running()) {
    std::string why_not;
    if (!start(why_not)) return "could not start: " + why_not;
  }
  return unavailable_;
}

Outcome ExternalExecutor::run(const Case& c) {
  if (const std::string why = unavailable_reason(); !why.empty())
    return unavailable(name_, profile_, why);
  if (!child_.running()) {
    std::string why_not;
    if (!start(why_not)) {
      // The case never ran: it is not to blame. Starts that keep failing make the executor
      // unavailable (unavailable_reason()).
      ++failed_starts_;
      start_failure_ = why_not;
      return unavailable(name_, profile_, "could not start: " + why_not);
    }
    failed_starts_ = 0;
    if (!unavailable_.empty()) return unavailable(name_, profile_, unavailable_);
  }
  const std::int64_t id = next_id_++;
  const nlohmann::json request{{"id", id}, {"case", case_to_json(c)}};
  if (!child_.write_line(request.dump()))
    return broken(OutcomeKind::kCrash, "the process stopped reading its input");
  std::string line;
  const auto read = child_.read_line(case_timeout_, kMaxLineBytes, line);
  if (read == process::ChildProcess::Read::kTimeout) {
    restart_later();
    return failed(name_, profile_, OutcomeKind::kTimeout,
                  "no answer within " + seconds_text(case_timeout_) +
                      " s; the process was killed and will be restarted");
  }
  if (read == process::ChildProcess::Read::kTooLong) {
    return broken(OutcomeKind::kCrash, "protocol error: an answer line longer than " +
                                           std::to_string(kMaxLineBytes) + " bytes");
  }
  if (read == process::ChildProcess::Read::kEof)
    return broken(OutcomeKind::kCrash, "the process exited");
  // Any line that is not this request's answer breaks the protocol: the process is restarted, so
  // that no stale line can be read as the answer to a later case.
  try {
    const auto response = parse_protocol_line(line, name_ + ":answer");
    if (!response.is_object() || response.value("id", std::int64_t{-1}) != id ||
        !response.contains("outcome")) {
      return broken(OutcomeKind::kCrash, "protocol error: " + line.substr(0, 300));
    }
    Outcome o = outcome_from_json(response["outcome"], c, name_ + ":outcome");
    o.executor = name_;
    o.profile = profile_;
    for (const auto& [k, v] : info_) o.info.emplace(k, v);
    // The process says it exits after this answer (a hung kernel thread it cannot wake): stop it
    // now, so that the next case starts a fresh one instead of writing to a process that is
    // going away.
    if (response.value("exiting", false)) restart_later();
    return o;
  } catch (const std::exception& e) {
    return broken(OutcomeKind::kCrash, std::string("protocol error: unreadable answer (") +
                                           e.what() + "): " + line.substr(0, 300));
  }
}

std::unique_ptr<Executor> make_jax_executor(const std::string& mode,
                                            const ExecutorOptions& options) {
  const JaxPython jax = JaxPython::resolve(options.python, options.repo_root);
  const std::string name = mode == "interpret" ? "jax-interpret"
                           : mode == "gpu"     ? "jax-gpu"
                           : mode == "ir"      ? "jax-ir"
                                               : "jax-lower";
  const Profile profile = mode == "interpret" ? Profile::kInterpret : Profile::kMosaic;
  auto ex = std::make_unique<ExternalExecutor>(
      name, profile,
      std::vector<std::string>{jax.python, jax.script("collfuzz_jax.py"), "--mode", mode},
      options.case_timeout_seconds, options.case_timeout_seconds, options.log_dir);
  // Real JAX runs 5 to 50 cases a second; the simulator thousands. In a campaign JAX sees one
  // case in this many (`--slow-every` overrides).
  ex->set_sample_every(options.slow_every > 0 ? options.slow_every
                                              : (mode == "interpret" ? 2000 : 200));
  // lower mode stops after .lower(); ir mode evaluates the lowered module without ptxas or the
  // driver (docs/ir-executor.md): their cases that fail later are unavailable.
  if (mode == "lower") ex->set_unobserved_stages({"compile", "launch", "run"});
  if (mode == "ir") ex->set_unobserved_stages({"compile", "launch"});
  return ex;
}

std::unique_ptr<Executor> make_jax_interpret_executor(const ExecutorOptions& o) {
  return make_jax_executor("interpret", o);
}
std::unique_ptr<Executor> make_jax_gpu_executor(const ExecutorOptions& o) {
  return make_jax_executor("gpu", o);
}
std::unique_ptr<Executor> make_jax_lower_executor(const ExecutorOptions& o) {
  return make_jax_executor("lower", o);
}
std::unique_ptr<Executor> make_jax_ir_executor(const ExecutorOptions& o) {
  return make_jax_executor("ir", o);
}

}  // namespace collfuzz
