#include "harness/executors/external_executor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "harness/core/bounded_json_reader.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/outcome_json.h"
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

}  // namespace

ExternalExecutor::ExternalExecutor(std::string name, Profile profile, std::vector<std::string> argv,
                                   double case_timeout_seconds, double startup_timeout_seconds)
    : name_(std::move(name)),
      profile_(profile),
      argv_(std::move(argv)),
      case_timeout_(case_timeout_seconds),
      startup_timeout_(startup_timeout_seconds) {
  log_path_ = (std::filesystem::temp_directory_path() /
               ("collfuzz-" + name_ + "-" + std::to_string(::getpid()) + ".log"))
                  .string();
}

ExternalExecutor::~ExternalExecutor() { stop(); }

std::string ExternalExecutor::unavailable_reason() const {
  if (argv_.empty()) return "no program to run";
  if (!std::filesystem::exists(argv_[0])) return argv_[0] + " does not exist";
  for (std::size_t i = 1; i < argv_.size(); ++i) {
    if (argv_[i].ends_with(".py") && !std::filesystem::exists(argv_[i]))
      return argv_[i] + " does not exist";
  }
  return unavailable_;
}

bool ExternalExecutor::start(std::string& why_not) {
  int in_pipe[2];
  int out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) {
    why_not = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    why_not = std::string("pipe: ") + std::strerror(errno);
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return false;
  }
  std::vector<char*> args;
  for (auto& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    why_not = std::string("fork: ") + std::strerror(errno);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]}) ::close(fd);
    return false;
  }
  if (pid == 0) {
    // The child: its own process group, so that a timeout kills everything it started.
    ::setpgid(0, 0);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) ::dup2(log, 2);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  pid_ = pid;
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  buffer_.clear();
  eof_ = false;

  const auto hello_line = read_line(startup_timeout_);
  if (!hello_line || eof_) {
    why_not = hello_line ? "it exited before saying hello"
                         : "no hello within " + std::to_string(startup_timeout_) + " s";
    why_not += stderr_tail();
    stop();
    return false;
  }
  try {
    const auto hello = parse_json_bounded(*hello_line, name_ + ":hello");
    if (!hello.is_object() || hello.value("hello", "") != kProtocol) {
      why_not = "it does not speak " + std::string(kProtocol) + ": " + hello_line->substr(0, 200);
      stop();
      return false;
    }
    if (hello.contains("unavailable")) unavailable_ = hello["unavailable"].get<std::string>();
    if (hello.contains("info") && hello["info"].is_object()) {
      for (const auto& [k, v] : hello["info"].items())
        info_[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  } catch (const std::exception& e) {
    why_not = std::string("its hello is not JSON: ") + e.what();
    stop();
    return false;
  }
  return true;
}

void ExternalExecutor::stop() {
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  to_child_ = from_child_ = -1;
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
}

std::optional<std::string> ExternalExecutor::read_line(double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    const auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (eof_) return std::string();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{from_child_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) return std::nullopt;
    if (r <= 0) continue;
    char chunk[65536];
    const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      eof_ = true;
    } else if (n == 0) {
      eof_ = true;
    } else {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      if (buffer_.size() > (std::size_t{512} << 20)) {  // a runaway process: stop reading
        eof_ = true;
      }
    }
  }
}

bool ExternalExecutor::write_all(const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(to_child_, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string ExternalExecutor::stderr_tail() const {
  std::ifstream in(log_path_, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::streamoff>(in.tellg());
  const std::streamoff keep = 1200;
  in.seekg(size > keep ? size - keep : 0);
  std::string tail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return tail.empty() ? "" : "; stderr ends: " + tail;
}

Outcome ExternalExecutor::run(const Case& c) {
  if (const std::string why = unavailable_reason(); !why.empty())
    return unavailable(name_, profile_, why);
  if (pid_ <= 0) {
    std::string why_not;
    if (!start(why_not))
      return failed(name_, profile_, OutcomeKind::kCrash, "could not start: " + why_not);
    if (!unavailable_.empty()) return unavailable(name_, profile_, unavailable_);
  }
  // SIGPIPE from a dead child must not kill the harness.
  ::signal(SIGPIPE, SIG_IGN);
  const std::int64_t id = next_id_++;
  const nlohmann::json request{{"id", id}, {"case", case_to_json(c)}};
  if (!write_all(request.dump() + "\n")) {
    const std::string tail = stderr_tail();
    stop();
    ++restarts_;
    return failed(name_, profile_, OutcomeKind::kCrash,
                  "the process stopped reading its input" + tail);
  }
  const auto line = read_line(case_timeout_);
  if (!line) {
    stop();
    ++restarts_;
    return failed(name_, profile_, OutcomeKind::kTimeout,
                  "no answer within " + std::to_string(case_timeout_) +
                      " s; the process was killed and will be restarted");
  }
  if (eof_ && line->empty()) {
    const std::string tail = stderr_tail();
    stop();
    ++restarts_;
    return failed(name_, profile_, OutcomeKind::kCrash, "the process exited" + tail);
  }
  try {
    const auto response = parse_json_bounded(*line, name_ + ":answer");
    if (!response.is_object() || response.value("id", std::int64_t{-1}) != id ||
        !response.contains("outcome")) {
      stop();
      ++restarts_;
      return failed(name_, profile_, OutcomeKind::kCrash,
                    "protocol error: " + line->substr(0, 300));
    }
    Outcome o = outcome_from_json(response["outcome"], c, name_ + ":outcome");
    o.executor = name_;
    o.profile = profile_;
    for (const auto& [k, v] : info_) o.info.emplace(k, v);
    return o;
  } catch (const std::exception& e) {
    return failed(name_, profile_, OutcomeKind::kCrash,
                  std::string("unreadable outcome: ") + e.what());
  }
}

std::unique_ptr<Executor> make_jax_executor(const std::string& mode,
                                            const ExecutorOptions& options) {
  std::string root = options.repo_root;
  if (root.empty()) {
    const char* env = std::getenv("COLLFUZZ_ROOT");
    root = env ? env : COLLFUZZ_SOURCE_DIR;
  }
  std::string python = options.python;
  if (python.empty()) {
    const char* env = std::getenv("COLLFUZZ_JAX_PYTHON");
    python = env ? env : root + "/.venv-jax/bin/python";
  }
  const std::string name = mode == "interpret" ? "jax-interpret"
                           : mode == "gpu"     ? "jax-gpu"
                                               : "jax-lower";
  const Profile profile = mode == "interpret" ? Profile::kInterpret : Profile::kMosaic;
  auto ex = std::make_unique<ExternalExecutor>(
      name, profile,
      std::vector<std::string>{python, root + "/harness/jax/collfuzz_jax.py", "--mode", mode},
      options.case_timeout_seconds, std::max(120.0, options.case_timeout_seconds));
  // Real JAX runs 5 to 50 cases a second; the simulator thousands. In a campaign JAX sees one
  // case in this many (`--slow-every` overrides).
  ex->set_sample_every(options.slow_every > 0 ? options.slow_every
                                              : (mode == "interpret" ? 2000 : 200));
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

}  // namespace collfuzz
