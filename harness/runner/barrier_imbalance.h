// Why a kernel hangs or its byte count is wrong (`collfuzz explain`): the first barrier that does
// not balance in an outcome (the barrier of the first wait that never completes, in CTA rank and
// thread order; else the first barrier whose transaction count is not back to zero), its counts
// in that CTA, and the copies and arrivals of the program that name it, each with whether it runs
// in that CTA.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/outcome.h"

namespace collfuzz {

struct BarrierContributor {
  std::string op;    // JSON path
  std::string what;  // "copy_gmem_to_smem, multicast over (x)", "barrier_arrive"
  std::string here;  // whether and how it runs in the CTA: "runs (thread 0)", "does not run: ..."
};

struct BarrierImbalance {
  std::int64_t rank = 0;
  std::vector<std::int64_t> coords;
  std::string barrier;                  // "alloc[index]"
  std::optional<BarrierRecord> record;  // its counts in that CTA (absent: not reported)
  std::vector<WaitRecord> stuck;        // its waits in that CTA that never complete
  std::vector<BarrierContributor> contributors;
  std::vector<std::string> findings;  // what does not balance, in words
};

std::optional<BarrierImbalance> first_unbalanced_barrier(const Case& c, const Outcome& o);
std::string describe_imbalance(const BarrierImbalance& b);

}  // namespace collfuzz
