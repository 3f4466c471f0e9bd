// The process groups of a process's live children, kept where a signal handler (and, for a
// campaign worker, the supervisor through shared memory) can reach them, so that a process that
// dies abruptly can still take the groups of everything it started with it. Every ChildProcess
// registers its group here while it runs.
#pragma once

#include <sys/types.h>

#include <atomic>

namespace collfuzz::process {

// A fixed table of process group ids (0: a free slot); trivially destructible, so that it can
// live in a shared mapping.
struct GroupTable {
  static constexpr int kSlots = 16;
  std::atomic<pid_t> groups[kSlots];
};

// The table this process registers its children in: a private one unless pointed elsewhere (a
// campaign worker points it at its slot of the shared board).
GroupTable& group_table();
void use_group_table(GroupTable* table);

void register_group(pid_t group);
void unregister_group(pid_t group);

// SIGKILL to every group in `table`, then the slots are cleared. Async-signal-safe.
void kill_groups(GroupTable& table);

// Prepares a freshly forked child: a process group of its own, `death_signal` delivered when the
// parent dies (PR_SET_PDEATHSIG), and an empty private group table. Returns false when the parent
// `parent` died before the death signal was armed: the child must exit at once.
bool enter_child(pid_t parent, int death_signal);

// Makes `signal` (and SIGHUP) kill this process's registered child groups, then end it with
// status 128 + signal. A forked child that runs collfuzz code (a campaign worker) arms its death
// signal as SIGTERM and installs this, so that the executors it started die with it.
void die_with_children_on(int signal);

}  // namespace collfuzz::process
