#include "harness/campaign/crash_report.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <iostream>

#include "generators/case_stream.h"
#include "harness/campaign/case_check.h"
#include "harness/campaign/case_shrinker.h"
#include "harness/campaign/finding_report.h"
#include "harness/campaign/findings_store.h"
#include "harness/campaign/isolated_loop.h"
#include "harness/campaign/worker_board.h"
#include "harness/core/build_info.h"
#include "harness/core/errors.h"
#include "harness/runner/atomic_file.h"
#include "oracles/verdict.h"

namespace collfuzz::campaign {
namespace {

std::string phase_name(std::uint32_t phase, const std::vector<std::string>& executors) {
  switch (phase) {
    case kGenerate:
      return "generate";
    case kReference:
      return "reference";
    case kCompare:
      return "compare";
    case kShrink:
      return "shrink";
    default:
      break;
  }
  const std::uint32_t k = phase - kFirstExecutor;
  return k < executors.size() ? executors[k] : "unknown";
}

// Whether checking `c` in a child process dies the way the worker did.
bool dies_the_same_way(CaseCheck& check, const Case& c, int signal, int exit_status) {
  process::ChildProcess child;
  std::string why_not;
  if (!child.fork(
          [&] {
            check.mismatches(c);
            return 0;
          },
          why_not))
    return false;
  const int status = child.wait();
  if (signal) return WIFSIGNALED(status) && WTERMSIG(status) == signal;
  return WIFEXITED(status) && WEXITSTATUS(status) == exit_status && exit_status != 0;
}

void write_finding(const CampaignOptions& o, FindingsStore& store, CaseCheck& check,
                   const CrashEvent& crash, const std::string& signature, const Case& c);

void report(const CampaignOptions& o, const CampaignDirectory& dir, const CrashEvent& crash) {
  const std::string signature = crash_signature(crash, o.executors);
  FindingsStore store(dir.findings());
  std::vector<std::unique_ptr<Executor>> executors;
  for (const auto& name : o.executors) executors.push_back(make_executor(name, o.executor_options));
  CaseCheck check(std::move(executors), o.level);

  Case c = generators::generate_case(o.seed, crash.index);
  // Not the case's fault unless it does it again (a hang was already given its whole budget).
  if (!crash.hang && !dies_the_same_way(check, c, crash.signal, crash.exit_status)) return;
  if (!store.claim(signature)) return;
  try {
    write_finding(o, store, check, crash, signature, c);
  } catch (const DiskFullError&) {
    // A claim without its finding would block the signature for good.
    if (!std::filesystem::exists(store.dir() / (FindingsStore::slug(signature) + ".outcomes.json")))
      store.unclaim(signature);
    throw;
  }
}

void write_finding(const CampaignOptions& o, FindingsStore& store, CaseCheck& check,
                   const CrashEvent& crash, const std::string& signature, const Case& c) {
  const FoundAt at{c.name, o.seed, crash.index, crash.worker, 0};
  nlohmann::json outcomes;
  outcomes["crash"] = {{"signal", crash.signal ? signal_name(crash.signal) : ""},
                       {"exit_status", crash.exit_status},
                       {"hang", crash.hang},
                       {"phase", phase_name(crash.phase, o.executors)}};
  outcomes["collfuzz"] = {{"version", collfuzz_version()}, {"commit", collfuzz_commit()}};
  outcomes["found"] = {{"case", at.case_name},
                       {"seed", at.seed},
                       {"index", at.index},
                       {"worker", at.worker},
                       {"reproduce", "collfuzz gen --seed " + std::to_string(at.seed) +
                                         " --first " + std::to_string(at.index) + " --count 1"}};
  outcomes["original_size"] = outcomes["size"] = size_json(case_size(c));
  outcomes["shrunk"] = false;
  Case reported = c;
  reported.notes =
      "collfuzz fuzz finding " + signature + " (as found; the worker process died on this case)";
  store.write(signature, reported, outcomes);
  if (!o.shrink || crash.hang) return;

  CaseShrinker shrinker(
      [&](const Case& cand) {
        return dies_the_same_way(check, cand, crash.signal, crash.exit_status);
      },
      ShrinkLimits{1000, std::chrono::milliseconds(30000)});
  Case shrunk = shrinker.shrink(generators::generate_shrinkable(o.seed, crash.index));
  shrunk.name = c.name + "-shrunk";
  shrunk.notes = "collfuzz fuzz finding " + signature + ", shrunk from " + c.name;
  outcomes["size"] = size_json(case_size(shrunk));
  outcomes["shrunk"] = true;
  outcomes["shrink"] = {{"candidates", shrinker.stats().candidates},
                        {"accepted", shrinker.stats().accepted}};
  store.write(signature, shrunk, outcomes);
}

}  // namespace

std::string crash_signature(const CrashEvent& crash, const std::vector<std::string>& executors) {
  const std::string how = crash.hang     ? "hang"
                          : crash.signal ? signal_name(crash.signal)
                                         : "exit-" + std::to_string(crash.exit_status);
  return make_signature("crash", how, phase_name(crash.phase, executors), "worker");
}

process::ChildProcess spawn_crash_reporter(const CampaignOptions& options,
                                           const CampaignDirectory& dir, const CrashEvent& crash) {
  process::ChildProcess child;
  std::string why_not;
  const bool forked = child.fork(
      [&] {
        std::signal(SIGINT, SIG_IGN);
        try {
          report(options, dir, crash);
        } catch (const DiskFullError& e) {
          std::cerr << "collfuzz: reporting the crash on case " << crash.index << ": " << e.what()
                    << "\n";
          return kWorkerExitDiskFull;
        } catch (const std::exception& e) {
          std::cerr << "collfuzz: reporting the crash on case " << crash.index << ": " << e.what()
                    << "\n";
          return kExitInternal;
        }
        return kExitOk;
      },
      why_not);
  if (!forked) std::cerr << "collfuzz: cannot report the crash: " << why_not << "\n";
  return child;
}

}  // namespace collfuzz::campaign
