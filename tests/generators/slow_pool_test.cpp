// The slow pool's queue and novelty ranking: offering never blocks and stays bounded; a slow
// worker takes rare classes before common ones, with a floor of uniform random picks.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <set>

#include "generators/case_stream.h"
#include "harness/campaign/shared_memory.h"
#include "harness/campaign/slow_pool.h"
#include "harness/core/case_json.h"
#include "oracles/reference/reference.h"

namespace collfuzz::campaign {
namespace {

std::size_t queued(const SlowQueue& q) {
  std::size_t n = 0;
  for (const auto& s : q.slots) n += s.state.load() == 2 ? 1 : 0;
  return n;
}

TEST(SlowPool, OfferingIsBoundedAndNeverWaits) {
  SharedMemory<SlowQueue> q;
  for (std::uint64_t i = 0; i < 20000; ++i) offer_candidate(*q, i, 1, 1);
  EXPECT_EQ(q->offered.load(), 20000);
  EXPECT_LE(queued(*q), kSlowQueueSlots);
  EXPECT_GT(queued(*q), kSlowQueueSlots / 2);
  EXPECT_GT(q->overwritten.load(), 0);
}

TEST(SlowPool, OffersFollowHowFastThePoolDrains) {
  SharedMemory<SlowQueue> q;
  std::uint64_t i = 0;
  // An empty queue wants every offer until it is half full.
  while (pool_wants_offer(*q, i) && i < 10 * kSlowQueueSlots) offer_candidate(*q, i++, 1, 1);
  EXPECT_EQ(q->full.load(), static_cast<std::int64_t>(queued(*q)));
  EXPECT_GE(queued(*q), kSlowQueueSlots / 2);
  // Then few offers pass (one in 64, to keep the candidates fresh) ...
  int wanted = 0;
  for (std::uint64_t k = 0; k < 6400; ++k) wanted += pool_wants_offer(*q, 1000000 + k) ? 1 : 0;
  EXPECT_GT(wanted, 50);
  EXPECT_LT(wanted, 200);
  EXPECT_GE(q->not_offered.load(), 6000);
  // ... until the pool takes candidates.
  NoveltyPicker picker(1);
  for (std::size_t k = 0; k < kSlowQueueSlots / 4; ++k) ASSERT_TRUE(picker.pick(*q, 1u));
  EXPECT_EQ(q->full.load(), static_cast<std::int64_t>(queued(*q)));
  EXPECT_TRUE(pool_wants_offer(*q, 7));
}

TEST(SlowPool, RareClassesGoFirst) {
  SharedMemory<SlowQueue> q;
  constexpr std::uint64_t kCommon = 7;
  constexpr std::uint64_t kRare = 8;
  for (std::uint64_t i = 0; i < 200; ++i) offer_candidate(*q, i, kCommon, 0);
  offer_candidate(*q, 100000, kRare, 0);
  NoveltyPicker picker(1, /*random_floor=*/0);
  std::set<std::uint64_t> first_two;
  for (int k = 0; k < 2; ++k) {
    const auto c = picker.pick(*q, 1u);
    ASSERT_TRUE(c);
    picker.ran(*c, 1u);
    first_two.insert(c->klass[0]);
  }
  EXPECT_EQ(first_two, (std::set<std::uint64_t>{kCommon, kRare}));
  EXPECT_EQ(picker.classes(Profile::kMosaic), 2u);
  // Only common ones are left: they are still taken (the rank orders, it does not filter).
  EXPECT_TRUE(picker.pick(*q, 1u));
}

TEST(SlowPool, EachKeyGetsItsTurnBeforeNewClassesOfASeenKey) {
  // Key 1 (say, completed cases) comes in many classes, each new; key 2 (a rule) in one. Ranked
  // by class alone, key 1's new classes would fill every pick; a key never run goes first in
  // both ranks (the first two picks are the two keys), then the picks ranked by key (every other
  // one) alternate between the keys, and those ranked by class take key 1's new classes.
  SharedMemory<SlowQueue> q;
  for (std::uint64_t i = 0; i < 100; ++i) offer_candidate(*q, i, 5000 + i, 0, 1, 0);
  for (std::uint64_t i = 0; i < 4; ++i) offer_candidate(*q, 100000 + i, 77, 0, 2, 0);
  NoveltyPicker picker(1, /*random_floor=*/0);
  std::vector<std::uint64_t> keys;
  for (int k = 0; k < 6; ++k) {
    const auto c = picker.pick(*q, 1u);
    ASSERT_TRUE(c);
    picker.ran(*c, 1u);
    keys.push_back(c->key[0]);
  }
  EXPECT_EQ(std::count(keys.begin(), keys.end(), 2u), 2) << ::testing::PrintToString(keys);
  EXPECT_EQ(std::set<std::uint64_t>(keys.begin(), keys.begin() + 2),
            (std::set<std::uint64_t>{1, 2}))
      << "each key never run goes first";
  EXPECT_EQ(keys[4], 2u);  // by key: key 2 was run once, key 1 three times
  EXPECT_EQ(keys[3], 1u);  // by class: a class never run
  EXPECT_EQ(keys[5], 1u);
  EXPECT_EQ(picker.key_seen(Profile::kMosaic, 2), 2);
}

TEST(SlowPool, AKeyThatTookTheWholeTimeoutWaitsItsTurn) {
  // Key 3's first case took 60 s (a deadlock JAX ran to its timeout), key 4's took 1 s each:
  // key 4 is taken until it has had as much of the executor's time.
  SharedMemory<SlowQueue> q;
  for (std::uint64_t i = 0; i < 20; ++i) offer_candidate(*q, i, 300, 0, 3, 0);
  for (std::uint64_t i = 0; i < 20; ++i) offer_candidate(*q, 1000 + i, 400 + i, 0, 4, 0);
  NoveltyPicker picker(1, /*random_floor=*/0);
  std::vector<std::uint64_t> keys;
  for (int k = 0; k < 12; ++k) {
    const auto c = picker.pick(*q, 1u);
    ASSERT_TRUE(c);
    picker.ran(*c, 1u);
    picker.spent(*c, 1u, c->key[0] == 3 ? 60.0 : 1.0);
    keys.push_back(c->key[0]);
  }
  EXPECT_EQ(std::count(keys.begin(), keys.end(), 3u), 1) << ::testing::PrintToString(keys);
}

TEST(SlowPool, ARuleReachedTwoWaysIsTwoClasses) {
  // interpret.scoped.cluster_axes fired by a run_scoped collective over a cluster axis alone and
  // by one over the cluster and the thread axis: one key, two classes.
  const auto make = [](const std::string& axes) {
    return case_from_json(nlohmann::json::parse(
        R"({"format": 1, "name": "t", "mesh": {"cluster": [2], "cluster_names": ["x"], "num_threads": 2,
            "thread_name": "wg"}, "target": {"arch": "sm_90a", "semantics": "lane", "profile": "interpret"},
            "inputs": [], "outputs": [], "program": [{"op": "run_scoped", "allocs": [{"name": "s",
            "kind": "smem", "shape": [128], "dtype": "float32"}], "collective_axes": )" +
        axes + R"(, "body": []}]})"));
  };
  const Case cluster = make(R"(["x"])");
  const Case both = make(R"(["x", "wg"])");
  const Outcome a = predict(cluster, Profile::kInterpret).outcome;
  const Outcome b = predict(both, Profile::kInterpret).outcome;
  ASSERT_TRUE(a.diagnostic && b.diagnostic);
  EXPECT_EQ(a.diagnostic->rule, "interpret.scoped.cluster_axes");
  EXPECT_EQ(b.diagnostic->rule, "interpret.scoped.cluster_axes");
  EXPECT_EQ(behaviour_key(a), behaviour_key(b));
  EXPECT_NE(behaviour_class(cluster, a), behaviour_class(both, b));
}

TEST(SlowPool, TheRandomFloorTakesCommonClassesToo) {
  SharedMemory<SlowQueue> q;
  // One rare candidate kept queued among commons: without the floor it would be taken every
  // time; with a floor of 1 in 4, a quarter of the picks are uniform.
  int commons_taken = 0;
  NoveltyPicker picker(3, /*random_floor=*/4);
  for (int round = 0; round < 40; ++round) {
    for (std::uint64_t i = 0; i < 50; ++i) offer_candidate(*q, 1000 * round + i, 1, 0);
    offer_candidate(*q, 999999 - round, 1000 + round, 0);  // a new rare class each round
    const auto c = picker.pick(*q, 1u);
    ASSERT_TRUE(c);
    picker.ran(*c, 1u);
    commons_taken += c->klass[0] == 1 ? 1 : 0;
  }
  EXPECT_GE(commons_taken, 5);
  EXPECT_LE(commons_taken, 15);
}

TEST(SlowPool, ClassesSeparateOutcomesAndFeatures) {
  std::set<std::uint64_t> classes;
  std::set<std::uint64_t> keys;
  for (std::uint64_t i = 0; i < 4000; ++i) {
    const Case c = generators::generate_case(1, i);
    const Outcome predicted = predict(c, Profile::kInterpret).outcome;
    classes.insert(behaviour_class(c, predicted));
    keys.insert(behaviour_key(predicted));
  }
  EXPECT_GT(classes.size(), 20u);  // the stream has many behaviours
  // and they repeat, so that ranking has something to rank: the keys (a rule, an outcome kind)
  // often, the classes within a key less (they order the candidates of one key).
  EXPECT_LT(classes.size(), 4000u / 2) << classes.size();
  EXPECT_GT(keys.size(), 10u);
  EXPECT_LT(keys.size(), 60u) << keys.size();
  std::cout << "classes in 4000 cases: " << classes.size() << ", keys: " << keys.size() << "\n";
  const Case c = generators::generate_case(1, 0);
  Outcome a = predict(c, Profile::kInterpret).outcome;
  Outcome b = a;
  b.kind = a.kind == OutcomeKind::kRejected ? OutcomeKind::kCompleted : OutcomeKind::kRejected;
  EXPECT_NE(behaviour_class(c, a), behaviour_class(c, b));
}

}  // namespace
}  // namespace collfuzz::campaign
