// A barrier at Pallas granularity: arrivals in the units of its arrival count (one Pallas
// arrival, or one remote arrival for a ClusterBarrier), and a transaction count in bytes that
// may go negative within a phase. A phase completes when its pending arrivals reach zero and its
// tx balance is zero (spec 3.5). Waits are parity waits, as the hardware does them.
#pragma once

#include <cstdint>

namespace collfuzz::ref {

struct BarrierCounters {
  std::int64_t arrivals = 0;
  std::int64_t armed = 0;
  std::int64_t received = 0;
  std::int64_t phases = 0;
};

class BarrierModel {
 public:
  void init(std::int64_t count) {
    count_ = count;
    pending_ = count;
    tx_ = 0;
    completed_ = 0;
  }
  std::int64_t count() const { return count_; }
  std::int64_t pending() const { return pending_; }
  std::int64_t tx() const { return tx_; }
  std::int64_t completed() const { return completed_; }

  // arrive (with expect_tx of `bytes`, possibly 0). Returns the phases it completed (0 or 1).
  std::int64_t arrive(std::int64_t arrivals, std::int64_t bytes) {
    tx_ += bytes;
    pending_ -= arrivals;
    return settle();
  }
  std::int64_t expect(std::int64_t bytes) {
    tx_ += bytes;
    return settle();
  }
  std::int64_t complete_tx(std::int64_t bytes) {
    tx_ -= bytes;
    return settle();
  }
  // A parity wait for parity `p` passes once the phase of that parity has completed, i.e. when
  // the current phase's parity differs from p.
  bool parity_wait_passes(std::int64_t p) const { return completed_ % 2 != p; }

 private:
  std::int64_t settle() {
    if (pending_ == 0 && tx_ == 0) {
      ++completed_;
      pending_ = count_;
      return 1;
    }
    return 0;
  }

  std::int64_t count_ = 1;
  std::int64_t pending_ = 1;
  std::int64_t tx_ = 0;
  std::int64_t completed_ = 0;
};

}  // namespace collfuzz::ref
