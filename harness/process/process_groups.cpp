#include "harness/process/process_groups.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

namespace collfuzz::process {
namespace {

GroupTable g_private_table{};
std::atomic<GroupTable*> g_table{&g_private_table};

void kill_children_and_exit(int signal) {
  kill_groups(group_table());
  ::_exit(128 + signal);
}

}  // namespace

GroupTable& group_table() { return *g_table.load(); }

void use_group_table(GroupTable* table) {
  for (auto& g : table->groups) g.store(0);
  g_table.store(table);
}

void register_group(pid_t group) {
  for (auto& g : group_table().groups) {
    pid_t free = 0;
    if (g.compare_exchange_strong(free, group)) return;
  }
  // A full table: the child still dies with its parent (its death signal); only its own
  // children could outlive an abrupt end of this process.
}

void unregister_group(pid_t group) {
  for (auto& g : group_table().groups) {
    pid_t mine = group;
    if (g.compare_exchange_strong(mine, 0)) return;
  }
}

void kill_groups(GroupTable& table) {
  for (auto& g : table.groups) {
    const pid_t group = g.exchange(0);
    if (group > 0) ::kill(-group, SIGKILL);
  }
}

bool enter_child(pid_t parent, int death_signal) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, death_signal);
  // The parent may have died between fork() and prctl(): then the signal will never come.
  if (::getppid() != parent) return false;
  use_group_table(&g_private_table);
  return true;
}

void die_with_children_on(int signal) {
  struct sigaction sa {};
  sa.sa_handler = kill_children_and_exit;
  sigemptyset(&sa.sa_mask);
  ::sigaction(signal, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
}

}  // namespace collfuzz::process
