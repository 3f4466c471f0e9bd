// An mbarrier at hardware granularity (PTX ISA, "Contents of the mbarrier object"): the current
// phase, the pending arrival count of that phase, and its transaction count, which may go
// negative within a phase (a complete_tx can land before the expect_tx that accounts for it). A
// phase completes when both the pending count and the tx-count are zero; the next phase starts
// with the expected count and a tx-count of zero. A parity wait for parity p passes once the
// current phase's parity differs from p.
#pragma once

#include <cstdint>

namespace collfuzz::sim {

class Mbarrier {
 public:
  // mbarrier.init: count in [1, 2^20 - 1] (otherwise undefined behaviour).
  void init(std::int64_t count) {
    expected_ = count;
    pending_ = count;
    tx_ = 0;
    phase_ = 0;
  }

  // mbarrier.arrive.expect_tx(bytes) with `count` arrivals (bytes 0: a plain arrive): the
  // expect-tx happens before the arrive-on. Returns whether the phase completed.
  bool arrive(std::int64_t count, std::int64_t bytes) {
    tx_ += bytes;
    pending_ -= count;
    if (pending_ < 0) over_arrived_ = true;
    return settle();
  }
  // mbarrier.complete_tx / the complete_tx of an async copy. Returns whether the phase completed.
  bool complete_tx(std::int64_t bytes) {
    tx_ -= bytes;
    return settle();
  }

  bool parity_wait_passes(std::int64_t parity) const { return (phase_ & 1) != (parity & 1); }

  std::int64_t expected() const { return expected_; }
  std::int64_t pending() const { return pending_; }
  std::int64_t tx() const { return tx_; }
  std::int64_t phase() const { return phase_; }
  // An arrival found no pending arrival left in its phase (undefined behaviour on hardware; the
  // model lets the pending count go below zero, so that phase never completes).
  bool over_arrived() const { return over_arrived_; }

 private:
  bool settle() {
    if (pending_ != 0 || tx_ != 0) return false;
    ++phase_;
    pending_ = expected_;
    return true;
  }

  std::int64_t expected_ = 1;
  std::int64_t pending_ = 1;
  std::int64_t tx_ = 0;
  std::int64_t phase_ = 0;
  bool over_arrived_ = false;
};

}  // namespace collfuzz::sim
