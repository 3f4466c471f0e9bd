// Root-cause groups: one bug is one finding. A campaign reports one finding per signature
// (oracle:kind:what:executor), and one bug gives many signatures: a simulator that arms the wrong
// byte count disagrees on the bytes, the arrivals, the phases, the final state, the waits and the
// data of every copy kind; one that fires rule X too early disagrees with `diagnostic:rule:<Y>`
// for every rule Y the reference fires first. The group is the case's first divergence: of the
// mismatches one executor has on one case, the most upstream one (a diagnostic before bytes,
// a barrier's count before the bytes armed and received, those before arrivals, phases and final
// state, those before the data, and the waits and the kernel's hang last), reduced to what
// distinguishes a cause rather than a case:
//   - a diagnostic: the checks of the rule that disagrees, the one the executor fires where the
//     reference fires another or none (or fires with another message, exception or stage), or
//     the reference's when the executor accepts the case; a rule's checks are its family (the
//     rule id's first part: the JAX function or pass that holds it) and the spec section that
//     states it (a wrong chunk shape fails each of LaunchContext's section-3.3 checks that reads
//     it): diagnostic:check:<family>@<section>:<executor>, e.g.
//     diagnostic:check:launch_context@3.3:sim;
//   - bytes and memory: the quantity that first differs and the op family, every copy kind
//     (copy, multicast, partitioned, replicated) being one, and the bytes armed or received
//     being one quantity whichever way they differ: bytes:tx_bytes:copy:<executor>; data is
//     one quantity whether seen in SMEM or in a GMEM output stored from it (the JAX executors
//     see only outputs): memory:data:copy:<executor>;
//   - undefined behaviour where the reference predicts a defined run: the quantity it corrupts,
//     gone out of range (a wrong multicast mask that stays in the cluster delivers bytes to the
//     wrong CTAs; one that leaves it is a multicast outside the cluster: bytes:tx_bytes:copy; an
//     arrival outside the cluster: bytes:arrivals:barrier_arrive; an mbarrier count outside
//     mbarrier.init's range, as a count one short of 1 is: bytes:count:barrier_arrive): one
//     cause, one group, whichever way a case shows it;
//   - crashes, exceptions and anything else: the signature itself.
// Every mismatch of the case gets that group. Campaign findings (outcomes "group"), the
// summary's group table, `collfuzz merge` and the mutant figure (collfuzz_bugfind --groups) use it.
#pragma once

#include <string>
#include <vector>

#include "harness/core/outcome.h"
#include "oracles/verdict.h"

namespace collfuzz::campaign {

// The group of the mismatches `ms` that one executor (`executor`, its outcome `actual`) has on
// one case; empty when `ms` is empty.
std::string root_cause_group(const std::vector<Mismatch>& ms, const Outcome& actual,
                             const std::string& executor);

}  // namespace collfuzz::campaign
