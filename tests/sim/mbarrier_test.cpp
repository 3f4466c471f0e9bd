// The mbarrier model at hardware granularity: arrivals, the tx balance (negative within a phase),
// phase flips, parity waits.
#include <gtest/gtest.h>

#include "harness/sim/mbarrier.h"

namespace collfuzz::sim {
namespace {

TEST(Mbarrier, PhaseCompletesWhenArrivalsAndTxReachZero) {
  Mbarrier m;
  m.init(128);
  for (int lane = 0; lane < 127; ++lane) EXPECT_FALSE(m.arrive(1, 256));
  EXPECT_EQ(m.pending(), 1);
  EXPECT_EQ(m.tx(), 127 * 256);
  EXPECT_FALSE(m.arrive(1, 256));  // every arrival is in, but 32768 bytes are outstanding
  EXPECT_EQ(m.pending(), 0);
  EXPECT_EQ(m.tx(), 32768);
  EXPECT_FALSE(m.complete_tx(16384));
  EXPECT_TRUE(m.complete_tx(16384));
  EXPECT_EQ(m.phase(), 1);
  EXPECT_EQ(m.pending(), 128);  // the next phase starts afresh
  EXPECT_EQ(m.tx(), 0);
}

TEST(Mbarrier, TxMayGoNegativeWithinAPhase) {
  Mbarrier m;
  m.init(1);
  EXPECT_FALSE(m.complete_tx(512));  // a peer's multicast lands before this CTA armed
  EXPECT_EQ(m.tx(), -512);
  EXPECT_EQ(m.phase(), 0);
  EXPECT_TRUE(m.arrive(1, 512));  // the expect_tx balances it, the arrival completes the phase
  EXPECT_EQ(m.phase(), 1);
  EXPECT_EQ(m.tx(), 0);
}

TEST(Mbarrier, ArrivalsAloneCompleteAPhaseWithoutTx) {
  Mbarrier m;
  m.init(2);
  EXPECT_FALSE(m.arrive(1, 0));
  EXPECT_TRUE(m.arrive(1, 0));
  EXPECT_TRUE(m.arrive(2, 0));
  EXPECT_EQ(m.phase(), 2);
}

TEST(Mbarrier, ParityWaitPassesOnceThePhaseOfThatParityCompleted) {
  Mbarrier m;
  m.init(1);
  EXPECT_FALSE(m.parity_wait_passes(0));  // phase 0 still open
  EXPECT_TRUE(m.parity_wait_passes(1));   // "phase -1" (parity 1) counts as completed
  m.arrive(1, 0);
  EXPECT_TRUE(m.parity_wait_passes(0));
  EXPECT_FALSE(m.parity_wait_passes(1));
  m.arrive(1, 0);
  // Two phases ahead: a parity-0 wait does not pass again (hardware compares parities only).
  EXPECT_FALSE(m.parity_wait_passes(0));
  EXPECT_TRUE(m.parity_wait_passes(1));
}

TEST(Mbarrier, OverArrivalIsFlagged) {
  Mbarrier m;
  m.init(1);
  m.arrive(1, 64);  // pending 0, 64 bytes outstanding: the phase stays open
  EXPECT_FALSE(m.over_arrived());
  m.arrive(1, 0);  // no pending arrival left: undefined behaviour
  EXPECT_TRUE(m.over_arrived());
}

}  // namespace
}  // namespace collfuzz::sim
