#include "gpu/cuda_executor.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpu/framed_outcome.h"
#include "harness/core/case_json.h"
#include "harness/executors/registry_entries.h"

#ifndef COLLFUZZ_BINARY_DIR
#define COLLFUZZ_BINARY_DIR "."
#endif

namespace collfuzz::gpu {
namespace {

constexpr const char* kWorkerName = "collfuzz-cuda-worker";

bool has_nvidia_device_node() {
  std::error_code ec;
  for (int i = 0; i < 64; ++i) {
    if (std::filesystem::exists("/dev/nvidia" + std::to_string(i), ec)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> default_worker_argv() {
  std::vector<std::string> argv;
  if (const char* env = std::getenv("COLLFUZZ_CUDA_WORKER"); env && *env) {
    argv.emplace_back(env);
  } else {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto beside = self.parent_path() / kWorkerName;
    if (!ec && std::filesystem::exists(beside, ec)) {
      argv.push_back(beside.string());
    } else {
      argv.push_back(std::string(COLLFUZZ_BINARY_DIR) + "/" + kWorkerName);
    }
  }
  if (const char* extra = std::getenv("COLLFUZZ_CUDA_WORKER_ARGS")) {
    std::istringstream words(extra);
    for (std::string w; words >> w;) argv.push_back(w);
  }
  return argv;
}

CudaExecutor::CudaExecutor(CudaExecutorOptions options) : options_(std::move(options)) {}

std::string CudaExecutor::unavailable_reason() const {
  if (options_.worker_argv.empty()) return "no CUDA worker program";
  std::error_code ec;
  if (!std::filesystem::exists(options_.worker_argv[0], ec)) {
    return options_.worker_argv[0] +
           " does not exist (collfuzz was built without CUDA, or set COLLFUZZ_CUDA_WORKER)";
  }
  const bool emulated = std::find(options_.worker_argv.begin(), options_.worker_argv.end(),
                                  "--emulate") != options_.worker_argv.end();
  if (options_.require_device_node && !emulated && !has_nvidia_device_node()) {
    return "no NVIDIA GPU on this machine (no /dev/nvidia0)";
  }
  return unavailable_;
}

Outcome CudaExecutor::failed(OutcomeKind kind, std::string reason) const {
  Outcome o;
  o.kind = kind;
  o.executor = name();
  o.profile = Profile::kMosaic;
  o.reason = std::move(reason);
  o.info = info_;
  return o;
}

bool CudaExecutor::ensure_started(std::string& why_not) {
  if (worker_ && worker_->running()) return true;
  worker_ = std::make_unique<WorkerProcess>(options_.worker_argv, options_.log_dir);
  if (!worker_->start(why_not)) return false;
  std::string hello_line;
  const auto read = worker_->read_line(options_.startup_timeout_s, hello_line);
  if (read != WorkerProcess::Read::kLine) {
    why_not = read == WorkerProcess::Read::kTimeout
                  ? "no hello within " + std::to_string(options_.startup_timeout_s) + " s"
                  : "it exited before saying hello";
    why_not += "; stderr ends: " + worker_->stderr_tail();
    worker_->kill();
    return false;
  }
  try {
    const auto hello = parse_json_bounded(hello_line, "cuda:hello");
    if (!hello.is_object() || hello.value("hello", "") != "collfuzz-executor/1") {
      why_not = "it does not speak collfuzz-executor/1: " + hello_line.substr(0, 200);
      worker_->kill();
      return false;
    }
    unavailable_ = hello.value("unavailable", "");
    info_.clear();
    if (hello.contains("info") && hello["info"].is_object()) {
      for (const auto& [k, v] : hello["info"].items()) {
        info_[k] = v.is_string() ? v.get<std::string>() : v.dump();
      }
    }
  } catch (const std::exception& e) {
    why_not = std::string("its hello is not JSON: ") + e.what();
    worker_->kill();
    return false;
  }
  return true;
}

void CudaExecutor::restart_later(const std::string&) {
  if (worker_) worker_->kill();
  ++restarts_;
}

std::vector<Outcome> CudaExecutor::request(const std::vector<Case>& cases, Failure& failure,
                                           std::string& reason) {
  failure = Failure::kNone;
  const std::int64_t id = next_id_++;
  nlohmann::json items = nlohmann::json::array();
  for (const Case& c : cases) items.push_back(case_to_json(c));
  const nlohmann::json req{{"id", id}, {"cases", std::move(items)}, {"binary", true}};
  if (!worker_->write_line(req.dump())) {
    failure = Failure::kCrash;
    reason = "the worker stopped reading its input; stderr ends: " + worker_->stderr_tail();
    return {};
  }
  const double timeout =
      options_.request_timeout_s + options_.per_case_timeout_s * static_cast<double>(cases.size());
  std::string line;
  const auto read = worker_->read_line(timeout, line);
  if (read == WorkerProcess::Read::kTimeout) {
    failure = Failure::kTimeout;
    reason = "the worker gave no answer within " + std::to_string(timeout) +
             " s; it was killed and will be restarted";
    return {};
  }
  if (read == WorkerProcess::Read::kEof) {
    failure = Failure::kCrash;
    reason = "the worker exited; stderr ends: " + worker_->stderr_tail();
    return {};
  }
  nlohmann::json response;
  try {
    response = parse_json_bounded(line, "cuda:answer");
  } catch (const std::exception& e) {
    failure = Failure::kCrash;
    reason =
        "the worker's answer is not JSON (" + std::string(e.what()) + "): " + line.substr(0, 200);
    return {};
  }
  if (!response.is_object() || response.value("id", std::int64_t{-1}) != id ||
      !response.contains("outcomes") || !response["outcomes"].is_array() ||
      response["outcomes"].size() != cases.size()) {
    failure = Failure::kCrash;
    reason = "protocol error: " + line.substr(0, 300);
    return {};
  }
  // The outcomes' bytes follow the line (binary framing).
  std::string blob;
  const auto blob_bytes = response.value("binary_bytes", std::uint64_t{0});
  if (blob_bytes > 0) {
    const auto got = worker_->read_bytes(blob_bytes, timeout, blob);
    if (got != WorkerProcess::Read::kLine) {
      failure = got == WorkerProcess::Read::kTimeout ? Failure::kTimeout : Failure::kCrash;
      reason = "the worker did not send the " + std::to_string(blob_bytes) +
               " bytes its answer announced; stderr ends: " + worker_->stderr_tail();
      return {};
    }
  }
  std::vector<Outcome> out;
  try {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      Outcome o = outcome_from_framed_json(std::move(response["outcomes"][i]), cases[i], blob,
                                           "cuda:outcome");
      o.executor = name();
      o.profile = Profile::kMosaic;
      out.push_back(std::move(o));
    }
  } catch (const std::exception& e) {
    failure = Failure::kCrash;
    reason = std::string("unreadable answer: ") + e.what();
    return {};
  }
  return out;
}

std::vector<Outcome> CudaExecutor::run_chunk(const std::vector<Case>& cases) {
  std::string why_not;
  if (!ensure_started(why_not)) {
    std::vector<Outcome> out;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      out.push_back(failed(OutcomeKind::kCrash, "could not start the CUDA worker: " + why_not));
    }
    return out;
  }
  if (!unavailable_.empty()) {
    return std::vector<Outcome>(cases.size(), failed(OutcomeKind::kUnavailable, unavailable_));
  }
  Failure failure = Failure::kNone;
  std::string reason;
  std::vector<Outcome> out = request(cases, failure, reason);
  if (failure != Failure::kNone) {
    restart_later(reason);
    if (cases.size() == 1) {
      return {failed(failure == Failure::kTimeout ? OutcomeKind::kTimeout : OutcomeKind::kCrash,
                     reason)};
    }
    // Isolate: one case per request, so that only the culprit is charged.
    out.clear();
    for (const Case& c : cases) out.push_back(run_chunk({c}).front());
    return out;
  }
  // A lost CUDA context: the worker exits after answering; its cases are rerun alone.
  bool lost = false;
  for (const Outcome& o : out) {
    lost = lost || (o.kind == OutcomeKind::kCrash && o.info.count("cuda_context_lost"));
  }
  if (lost) {
    restart_later("the CUDA context was lost");
    if (cases.size() > 1) {
      for (std::size_t i = 0; i < cases.size(); ++i) {
        if (out[i].kind == OutcomeKind::kCrash) out[i] = run_chunk({cases[i]}).front();
      }
    }
  }
  return out;
}

std::vector<Outcome> CudaExecutor::run_batch(const std::vector<Case>& cases) {
  if (const std::string why = unavailable_reason(); !why.empty()) {
    return std::vector<Outcome>(cases.size(), failed(OutcomeKind::kUnavailable, why));
  }
  std::vector<Outcome> out;
  out.reserve(cases.size());
  for (std::size_t first = 0; first < cases.size(); first += options_.max_request_cases) {
    const std::size_t last = std::min(cases.size(), first + options_.max_request_cases);
    const std::vector<Case> chunk(cases.begin() + static_cast<std::ptrdiff_t>(first),
                                  cases.begin() + static_cast<std::ptrdiff_t>(last));
    for (Outcome& o : run_chunk(chunk)) out.push_back(std::move(o));
  }
  return out;
}

Outcome CudaExecutor::run(const Case& c) { return run_batch({c}).front(); }

}  // namespace collfuzz::gpu

namespace collfuzz {

std::unique_ptr<Executor> make_cuda_executor(const ExecutorOptions& options) {
  gpu::CudaExecutorOptions o;
  o.worker_argv = gpu::default_worker_argv();
  o.request_timeout_s = options.case_timeout_seconds;
  o.log_dir = options.log_dir;
  return std::make_unique<gpu::CudaExecutor>(std::move(o));
}

}  // namespace collfuzz
