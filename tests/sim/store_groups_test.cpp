// Store groups (docs/case-format.md, "Store groups"): commit_group=False, the case's `wait`,
// commit_smem_to_gmem_group and wait_smem_to_gmem(n, wait_read_only). The reference predicts which
// output elements a store in flight leaves defined (a write of its SMEM before a wait retires its
// read races with it; two stores of one thread in flight over the same elements are unordered),
// and the simulator, which completes each store as late as the hardware may, agrees.
#include <cstring>

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/lowering/lowering.h"
#include "oracles/reference/reference.h"
#include "tests/sim/sim_test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using simtest::predicted_and_simulated;
using simtest::y_at;

json store(bool wait = false, bool commit_group = true) {
  json s = json::parse(R"({"op": "copy_smem_to_gmem", "src": {"alloc": "buf"},
      "dst": {"output": "y", "index": [{"start": {"loop": "i", "mul": 16}, "size": 16}]}})");
  if (!wait) s["wait"] = false;
  if (!commit_group) s["commit_group"] = false;
  return s;
}
json wait_stores(std::int64_t n, bool read_only = false) {
  json w = {{"op", "wait_smem_to_gmem"}, {"n", n}};
  if (read_only) w["wait_read_only"] = true;
  return w;
}
json commit() { return {{"op", "commit_smem_to_gmem_group"}}; }

// One CTA, x f32[64, 32] (arange), y f32[64, 32]; a loop of 4 trips over one 16x32 buffer: trip i
// copies tile i in, waits for it, then runs `after_wait` (the store and its group ops); `tail`
// follows the loop.
// (std::vector, not json: a one-element braced json list is the element itself.)
json reuse_case(const std::vector<json>& after_wait, const std::vector<json>& tail = {},
                const char* profile = "mosaic") {
  json j = json::parse(R"({
    "format": 1, "name": "store_groups", "mesh": {},
    "target": {"arch": "sm_90a", "semantics": "lane"},
    "inputs": [{"name": "x", "shape": [64, 32], "dtype": "float32", "fill": {"pattern": "arange"}}],
    "outputs": [{"name": "y", "shape": [64, 32], "dtype": "float32"}],
    "program": [{"op": "run_scoped", "allocs": [
        {"name": "buf", "kind": "smem", "shape": [16, 32], "dtype": "float32"},
        {"name": "bar", "kind": "barrier"}],
      "body": [{"op": "loop", "trip_count": 4, "index": "i", "body": [
        {"op": "copy_gmem_to_smem",
         "src": {"input": "x", "index": [{"start": {"loop": "i", "mul": 16}, "size": 16}]},
         "dst": {"alloc": "buf"}, "barrier": {"alloc": "bar"}},
        {"op": "barrier_wait", "barrier": {"alloc": "bar"}}]}]}]
  })");
  j["target"]["profile"] = profile;
  json& body = j["program"][0]["body"][0]["body"];
  for (const json& op : after_wait) body.push_back(op);
  for (const json& op : tail) j["program"][0]["body"].push_back(op);
  return j;
}

// The element ranges of y the outcome compares.
std::vector<std::pair<std::int64_t, std::int64_t>> written(const Outcome& o) {
  return o.outputs.at(0).written;
}
using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;
constexpr std::int64_t kAll = 64 * 32;
constexpr std::int64_t kLastTile = 48 * 32;

Outcome run(const json& j) { return predicted_and_simulated(case_from_json(j)); }

TEST(StoreGroups, TheIdiomStoresEveryTile) {
  const Outcome o = run(reuse_case({store(true)}));
  EXPECT_EQ(written(o), (Ranges{{0, kAll}}));
  EXPECT_EQ(y_at(o, 0), 0.0f);
  EXPECT_EQ(y_at(o, kAll - 1), static_cast<float>(kAll - 1));
}

TEST(StoreGroups, AReadOnlyWaitBeforeTheNextCopyKeepsEveryTile) {
  const Outcome o = run(reuse_case({store(), wait_stores(0, true)}, {wait_stores(0)}));
  EXPECT_EQ(written(o), (Ranges{{0, kAll}}));
  EXPECT_EQ(y_at(o, 16 * 32), 512.0f);  // tile 1, not tile 2
}

TEST(StoreGroups, WithoutAWaitTheNextCopyRacesWithTheStoresRead) {
  const Outcome o = run(reuse_case({store()}));
  EXPECT_EQ(written(o), (Ranges{{kLastTile, kAll}}));  // only the last store meets no copy
}

TEST(StoreGroups, WaitOneLeavesTheLatestStoreReading) {
  // One buffer: wait(1) leaves store i in flight when trip i + 1 overwrites the buffer.
  const Outcome o = run(reuse_case({store(), wait_stores(1, true)}));
  EXPECT_EQ(written(o), (Ranges{{kLastTile, kAll}}));
}

TEST(StoreGroups, AnEmptyGroupCountsInTheWait) {
  // store; an empty commit; wait(1): the store's group is not among the most recent one.
  const Outcome o = run(reuse_case({store(), commit(), wait_stores(1, true)}));
  EXPECT_EQ(written(o), (Ranges{{0, kAll}}));
}

TEST(StoreGroups, AnUncommittedStoreIsInNoGroupAWaitRetires) {
  EXPECT_EQ(written(run(reuse_case({store(false, false), wait_stores(0)}))),
            (Ranges{{kLastTile, kAll}}));
  EXPECT_EQ(written(run(reuse_case({store(false, false), commit(), wait_stores(0, true)}))),
            (Ranges{{0, kAll}}));
  // The next store's own commit takes the uncommitted one into its group.
  json both = store(true);
  both["dst"]["index"][0]["start"]["mul"] = 16;
  EXPECT_EQ(written(run(reuse_case({store(false, false), both}))), (Ranges{{0, kAll}}));
}

TEST(StoreGroups, TwoStoresInFlightOverOneTileAreUnordered) {
  // Each trip stores its tile into y's tile 0: with a full wait in between they are ordered
  // (the last trip's wins); with only read-only waits the GMEM writes are in flight together.
  json to_tile0 = store();
  to_tile0["dst"]["index"][0] = {{"start", 0}, {"size", 16}};
  const Outcome ordered = run(reuse_case({to_tile0, wait_stores(0)}));
  EXPECT_EQ(written(ordered), (Ranges{{0, 16 * 32}}));
  EXPECT_EQ(y_at(ordered, 0), static_cast<float>(kLastTile));
  const Outcome racy = run(reuse_case({to_tile0, wait_stores(0, true)}));
  EXPECT_TRUE(written(racy).empty());
}

TEST(StoreGroups, AStoreInFlightCompletesWhenItsThreadHangs) {
  // Found by the main job's campaign: a store left in flight, then a wait that never completes.
  // The TMA still stores: the output is written (the simulator completed a store only at a wait
  // or at its thread's end).
  json j = reuse_case({store()});
  j["program"][0]["body"].push_back(json::parse(R"({"op": "run_scoped", "allocs": [
      {"name": "never", "kind": "barrier", "num_arrivals": 3}],
      "body": [{"op": "barrier_wait", "barrier": {"alloc": "never"}}]})"));
  const Outcome o = run(j);
  ASSERT_EQ(o.kind, OutcomeKind::kDeadlock);
  EXPECT_EQ(written(o), (Ranges{{kLastTile, kAll}}));
}

TEST(StoreGroups, InterpretModeStoresAtIssue) {
  // The interpret profile has no store in flight: every tile is compared.
  const Case c = case_from_json(reuse_case({store()}, {}, "interpret"));
  const Outcome o = predict(c, Profile::kInterpret).outcome;
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(written(o), (Ranges{{0, kAll}}));
}

TEST(StoreGroups, ExplainNamesTheRace) {
  const Prediction p = predict(case_from_json(reuse_case({store()})), Profile::kMosaic, true);
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes[0].find("the store at $.program[0].body[0].body[2]"), std::string::npos)
      << p.notes[0];
  EXPECT_NE(p.notes[0].find("the copy at $.program[0].body[0].body[0]"), std::string::npos)
      << p.notes[0];
}

TEST(StoreGroups, ANegativeWaitIsJaxsTraceError) {
  const Case c = case_from_json(reuse_case({store(), wait_stores(-1)}));
  for (const Profile profile : {Profile::kMosaic, Profile::kInterpret}) {
    const Outcome o = predict(c, profile).outcome;
    ASSERT_EQ(o.kind, OutcomeKind::kRejected);
    EXPECT_EQ(o.diagnostic->rule, "trace.wait_smem_to_gmem.n");
    EXPECT_EQ(o.diagnostic->message, "n must be a non-negative integer, got -1");
  }
  const lowering::LoweringResult lowered = lowering::lower_case(c);
  ASSERT_TRUE(lowered.diagnostic);
  EXPECT_EQ(lowered.diagnostic->message, "n must be a non-negative integer, got -1");
}

TEST(StoreGroups, TheParserKeepsTheOpsOutOfWarpMapsAndNamesBadFields) {
  json j = reuse_case({store(), wait_stores(0)});
  j["program"][0]["body"][0]["body"][3]["wait_read_only"] = 1;
  EXPECT_THROW(case_from_json(j), InputError);
  json k = reuse_case({json{{"op", "wait_smem_to_gmem"}}});
  try {
    case_from_json(k);
    ADD_FAILURE() << "a wait without n parsed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(".n"), std::string::npos) << e.what();
  }
}

TEST(StoreGroups, TheCaseFormatRoundTrips) {
  const Case c = case_from_json(
      reuse_case({store(false, false), commit(), wait_stores(2, true)}, {wait_stores(0)}));
  const json back = case_to_json(c);
  const json& body = back["program"][0]["body"][0]["body"];
  EXPECT_EQ(body[2]["wait"], false);
  EXPECT_EQ(body[2]["commit_group"], false);
  EXPECT_EQ(body[3], commit());
  EXPECT_EQ(body[4], wait_stores(2, true));
  EXPECT_FALSE(back["program"][0]["body"][1].contains("wait_read_only"));
}

}  // namespace
}  // namespace collfuzz
