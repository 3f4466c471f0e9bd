// A worker process that died (a signal, an abnormal exit) or hung, reported as a finding when the
// case it was on is to blame: the case is regenerated and rerun in a process of its own; only when
// that rerun dies the same way (a hang: always) is it written with the crash's signature, and
// shrunk with every candidate run in a process of its own (a crashing candidate must not take the
// shrinker down). A worker killed from outside (kill -9, the OOM killer once memory is back) is a
// worker crash the summary counts, not a finding.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/campaign/campaign_options.h"
#include "harness/campaign/campaign_state.h"
#include "harness/process/child_process.h"

namespace collfuzz::campaign {

struct CrashEvent {
  std::uint64_t index = 0;  // the case the worker was on
  std::uint32_t phase = 0;  // campaign::Phase
  int signal = 0;
  int exit_status = 0;
  bool hang = false;  // killed by the supervisor for making no progress
  std::int64_t worker = 0;
};

// crash:<SIGNAL|hang|exit-N>:<phase>:worker, the phase naming the part of collfuzz that died:
// generate, reference, compare, shrink, or an executor's name.
std::string crash_signature(const CrashEvent& crash, const std::vector<std::string>& executors);

// Forks the reporter (the supervisor waits for it before the summary). It exits with
// kWorkerExitDiskFull when the disk is full.
process::ChildProcess spawn_crash_reporter(const CampaignOptions& options,
                                           const CampaignDirectory& dir, const CrashEvent& crash);

}  // namespace collfuzz::campaign
