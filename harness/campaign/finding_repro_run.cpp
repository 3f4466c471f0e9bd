#include "harness/campaign/finding_repro_run.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "harness/core/bounded_json_reader.h"
#include "harness/runner/atomic_file.h"

namespace collfuzz::campaign {

namespace {

constexpr std::size_t kMaxStdoutLine = 64u << 10;
constexpr std::size_t kMaxWhy = 400;
constexpr auto kScanEvery = std::chrono::seconds(1);

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string fnv1a64(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : text) h = (h ^ ch) * 0x100000001b3ULL;
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string first_line(const std::string& text) {
  std::string s = text.substr(0, text.find('\n'));
  if (s.size() > kMaxWhy) s = s.substr(0, kMaxWhy) + "...";
  return s;
}

std::string executor_of(const std::string& signature) {
  return signature.substr(signature.rfind(':') + 1);
}

bool is_jax_executor(const std::string& executor) { return executor.starts_with("jax-"); }

// What a script that passed says about its finding.
std::string passed_why(const std::string& signature) {
  const std::string executor = executor_of(signature);
  std::string why = "the script passed: JAX does what collfuzz's reference predicts";
  if (!is_jax_executor(executor)) {
    why += " (the disagreement is " + executor + "'s own)";
  } else if (executor == "jax-ir" && !signature.starts_with("diagnostic:")) {
    why +=
        " up to lowering; a jax-ir finding about memory is reproduced by `collfuzz run CASE "
        "--executors jax-ir`";
  }
  return why;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

}  // namespace

nlohmann::json classify_script_run(int wait_status, const std::string& stderr_text,
                                   const std::string& last_stdout) {
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0)
    return {{"reproduced", "no"}, {"why", first_line(last_stdout)}};
  // The traceback's last "Name: message" line (or a bare "Name") is the exception that ended it.
  static const std::regex exception_line(R"(^([A-Za-z_][A-Za-z0-9_.]*)(: (.*))?$)");
  std::istringstream lines(stderr_text);
  std::string line;
  std::string name;
  std::string message;
  bool traceback = false;
  while (std::getline(lines, line)) {
    if (line.starts_with("Traceback (most recent call last)")) traceback = true;
    std::smatch m;
    if (traceback && !line.empty() && line[0] != ' ' && std::regex_match(line, m, exception_line) &&
        (m[1].str().ends_with("Error") || m[1].str().ends_with("Exception") ||
         m[1].str().ends_with("Interrupt") || m[1].str().ends_with("Exit"))) {
      name = m[1].str();
      message = m[3].str();
    }
  }
  if (name == "AssertionError")
    return {{"reproduced", "yes"},
            {"why", first_line(message.empty() ? "AssertionError" : message)}};
  if (!name.empty())
    return {{"reproduced", "error"},
            {"why", first_line("the script raised " + name + ": " + message)}};
  if (WIFSIGNALED(wait_status))
    return {{"reproduced", "error"},
            {"why", "the script died of " + process::signal_name(WTERMSIG(wait_status))}};
  return {{"reproduced", "error"},
          {"why", "the script exited " +
                      std::to_string(WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1) +
                      " without a traceback"}};
}

FindingReproRunner::FindingReproRunner(std::filesystem::path findings_dir, std::string python,
                                       std::filesystem::path log_dir, bool shrink, bool enabled)
    : dir_(std::move(findings_dir)),
      python_(std::move(python)),
      log_dir_(std::move(log_dir)),
      shrink_(shrink),
      enabled_(enabled) {}

FindingReproRunner::~FindingReproRunner() {
  if (running_) running_->child.stop();
}

void FindingReproRunner::record(const std::string& stem, const nlohmann::json& result) {
  try {
    write_file_atomically(dir_ / (stem + ".reproduced.json"), result.dump(2) + "\n");
  } catch (const std::exception&) {
    // A full disk: the summary says the script's result is missing; the campaign goes on.
  }
}

std::vector<std::string> FindingReproRunner::pending(bool final_only) {
  std::vector<std::string> out;
  std::vector<std::filesystem::path> outcomes;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".outcomes.json") && name[0] != '.') outcomes.push_back(e.path());
  }
  std::sort(outcomes.begin(), outcomes.end());
  for (const auto& f : outcomes) {
    const std::string name = f.filename().string();
    const std::string stem = name.substr(0, name.size() - std::string(".outcomes.json").size());
    if (running_ && running_->stem == stem) continue;
    const auto script = dir_ / (stem + ".py");
    std::filesystem::file_time_type mtime{};
    if (std::filesystem::exists(script, ec)) mtime = std::filesystem::last_write_time(script, ec);
    if (const auto it = settled_.find(stem); it != settled_.end() && it->second == mtime) continue;
    nlohmann::json done;
    const auto result_file = dir_ / (stem + ".reproduced.json");
    try {
      if (std::filesystem::exists(result_file, ec)) done = load_json_file(result_file);
    } catch (const std::exception&) {
      done = nullptr;  // unreadable: run it again
    }
    if (!std::filesystem::exists(script, ec)) {
      if (done.is_object() && done.value("reproduced", "") == "skipped") {
        settled_[stem] = mtime;
        continue;
      }
      const auto note = dir_ / (stem + ".repro.txt");
      if (!std::filesystem::exists(note, ec)) continue;  // being written: look again later
      std::string why = first_line(read_text(note));
      const std::string prefix = "No JAX script was written for this finding: ";
      if (why.starts_with(prefix)) why = why.substr(prefix.size());
      record(stem, {{"reproduced", "skipped"}, {"why", "no script: " + why}});
      settled_[stem] = mtime;
      continue;
    }
    if (done.is_object() && done.value("script", "") == fnv1a64(read_text(script)) &&
        done.value("reproduced", "") != "not run") {
      settled_[stem] = mtime;
      continue;
    }
    if (final_only && shrink_) {
      try {
        if (!load_json_file(f).value("shrunk", false)) continue;  // still shrinking
      } catch (const std::exception&) {
        continue;
      }
    }
    out.push_back(stem);
  }
  return out;
}

void FindingReproRunner::start(const std::string& stem, std::optional<Clock::time_point> until) {
  const auto now = Clock::now();
  Running r;
  r.stem = stem;
  r.digest = fnv1a64(read_text(dir_ / (stem + ".py")));
  r.started = now;
  r.kill_at = now + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(kScriptSeconds));
  if (until && *until < r.kill_at) {
    r.kill_at = *until;
    r.killed_for_time = true;  // if it is stopped, it is for the budget
  }
  std::error_code ec;
  std::filesystem::create_directories(log_dir_ / "repro", ec);
  const auto log = log_dir_ / "repro" / (stem + ".log");
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  std::string why;
  const bool ok = r.child.spawn({python_, (dir_ / (stem + ".py")).string()}, fd, why);
  if (fd >= 0) ::close(fd);
  if (!ok) {
    record(stem, {{"reproduced", "error"},
                  {"why", "cannot start " + python_ + ": " + why},
                  {"script", r.digest}});
    return;
  }
  ++runs_;
  running_.emplace(std::move(r));
}

void FindingReproRunner::poll(std::optional<Clock::time_point> until) {
  if (!running_) return;
  Running& r = *running_;
  std::string line;
  while (r.child.read_line(0, kMaxStdoutLine, line) == process::ChildProcess::Read::kLine)
    if (!line.empty()) r.last_stdout = line;
  const auto now = Clock::now();
  std::optional<int> status = r.child.poll_exit();
  nlohmann::json result;
  if (!status) {
    if (until && *until < r.kill_at) {
      r.kill_at = *until;
      r.killed_for_time = true;
    }
    if (now < r.kill_at) return;
    r.child.stop();
    const double s = std::chrono::duration<double>(now - r.started).count();
    result = r.killed_for_time ? nlohmann::json{{"reproduced", "not run"},
                                                {"why", "time: stopped at the budget's end after " +
                                                            seconds_text(s) + " s"}}
                               : nlohmann::json{{"reproduced", "error"},
                                                {"why", "the script did not finish in " +
                                                            seconds_text(kScriptSeconds) + " s"}};
  } else {
    result = classify_script_run(*status, read_text(log_dir_ / "repro" / (r.stem + ".log")),
                                 r.last_stdout);
    std::string signature;
    try {
      signature = load_json_file(dir_ / (r.stem + ".outcomes.json")).value("signature", "");
    } catch (const std::exception&) {
    }
    if (result["reproduced"] == "no") result["why"] = passed_why(signature);
  }
  result["seconds"] = std::chrono::duration<double>(now - r.started).count();
  result["script"] = r.digest;
  result["log"] = "logs/repro/" + r.stem + ".log";
  record(r.stem, result);
  std::error_code ec;
  settled_[r.stem] = std::filesystem::last_write_time(dir_ / (r.stem + ".py"), ec);
  running_.reset();
}

void FindingReproRunner::step(std::optional<Clock::time_point> until) {
  if (!enabled_) return;
  poll(until);
  if (running_) return;
  const auto now = Clock::now();
  if (now - last_scan_ < kScanEvery) return;
  last_scan_ = now;
  if (until && now >= *until) return;
  if (const auto stems = pending(/*final_only=*/true); !stems.empty()) start(stems[0], until);
}

void FindingReproRunner::finish(std::optional<Clock::time_point> until, bool interrupted) {
  if (!enabled_) {
    // No script digest: a later session that runs scripts runs these.
    for (const auto& stem : pending(/*final_only=*/false))
      record(stem, {{"reproduced", "skipped"}, {"why", "not run: --no-script-runs"}});
    return;
  }
  while (true) {
    poll(until);
    if (running_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    if (interrupted || (until && Clock::now() >= *until)) break;
    const auto stems = pending(/*final_only=*/false);
    if (stems.empty()) return;
    start(stems[0], until);
  }
  // What is left is recorded as not run (skipped findings are recorded by pending()).
  for (const auto& stem : pending(/*final_only=*/false)) {
    record(stem, {{"reproduced", "not run"},
                  {"why", interrupted ? "the campaign was interrupted"
                                      : "time: no time was left in the campaign's budget"},
                  {"script", fnv1a64(read_text(dir_ / (stem + ".py")))}});
  }
}

}  // namespace collfuzz::campaign
