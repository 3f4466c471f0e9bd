// pl.pallas_call's dead-code elimination of the traced kernel (harness/core/pallas_call_dce.h): a
// run_scoped whose body only reads inputs and writes its own allocations goes; a write outside
// it, a store to an output or a barrier op keeps it whole; pl.when bodies are pruned in turn;
// plgpu.kernel keeps everything.
#include <gtest/gtest.h>

#include "harness/core/pallas_call_dce.h"
#include "tests/core/test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;

const json kCopy = {{"op", "copy_gmem_to_smem"},
                    {"src", {{"input", "x"}}},
                    {"dst", {{"alloc", "dst"}}},
                    {"barrier", {{"alloc", "bar"}}}};

// A pallas_call of one run_scoped (dst, bar) holding `body`.
json pallas_call(const json& body) {
  json j = testing::minimal_case_json();
  j["target"]["entry"] = "pallas_call";
  j["mesh"] = json::object();
  j["program"][0]["body"] = body;
  return j;
}

TEST(PallasCallDce, AScopeThatOnlyWritesItsOwnSmemIsDropped) {
  const Case c = case_from_json(pallas_call(json::array({kCopy})));
  const auto kept = pallas_call_dce(c);
  ASSERT_TRUE(kept);
  EXPECT_TRUE(kept->program.empty());
  // plgpu.kernel keeps it.
  json k = pallas_call(json::array({kCopy}));
  k["target"]["entry"] = "kernel";
  EXPECT_FALSE(pallas_call_dce(case_from_json(k)));
}

TEST(PallasCallDce, ABarrierOpOrAWriteOutsideKeepsTheScopeWhole) {
  const json wait = {{"op", "barrier_wait"}, {"barrier", {{"alloc", "bar"}}}};
  const Case waits = case_from_json(pallas_call(json::array({kCopy, wait})));
  EXPECT_FALSE(pallas_call_dce(waits));  // kept whole: nothing removed
  const Case commits = case_from_json(pallas_call(json::array({kCopy, {{"op", "commit_smem"}}})));
  EXPECT_FALSE(pallas_call_dce(commits));
  // An inner scope writing the outer one's SMEM: effectful inside, discharged by the outer one.
  const json inner = {{"op", "run_scoped"}, {"allocs", json::array()}, {"body", {kCopy}}};
  const Case nested = case_from_json(pallas_call(json::array({inner})));
  const auto nested_kept = pallas_call_dce(nested);
  ASSERT_TRUE(nested_kept);
  EXPECT_TRUE(nested_kept->program.empty());
}

TEST(PallasCallDce, AStaticallyFalseWhenIsNoEquationAndStaysAsWritten) {
  // pl.when(False) never traces its body: nothing to eliminate, the op stays (nothing runs it).
  json j = pallas_call(json::array({kCopy}));
  const json scope = j["program"][0];
  j["program"] = json::array({{{"op", "when"}, {"cond", false}, {"body", {scope}}}});
  const Case c = case_from_json(j);
  EXPECT_FALSE(pallas_call_dce(c));
  // pl.when(True) is the body inline: its effect-free scope goes, and the when with it.
  j["program"][0]["cond"] = true;
  const auto inlined = pallas_call_dce(case_from_json(j));
  ASSERT_TRUE(inlined);
  EXPECT_TRUE(inlined->program.empty());
}

TEST(PallasCallDce, AWhenBodyIsPrunedAndNamedWhileTheRestStays) {
  // A pl.when around an effect-free scope loses the scope (and, empty, itself); the scope that
  // waits on its barrier beside it stays whole. Only the removed ops are listed.
  const json wait = {{"op", "barrier_wait"}, {"barrier", {{"alloc", "bar"}}}};
  json j = pallas_call(json::array({kCopy, wait}));
  json idle = j["program"][0];
  idle["body"] = json::array({kCopy});
  for (json& a : idle["allocs"]) a["name"] = a["name"].get<std::string>() + "2";
  idle["body"][0]["dst"]["alloc"] = "dst2";
  idle["body"][0]["barrier"]["alloc"] = "bar2";
  j["program"] = json::array({{{"op", "when"}, {"cond", true}, {"body", {idle}}}, j["program"][0]});
  std::vector<std::string> removed;
  const auto kept = pallas_call_dce(case_from_json(j), &removed);
  ASSERT_TRUE(kept);
  ASSERT_EQ(kept->program.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<RunScoped>(kept->program[0].v));
  EXPECT_EQ(removed, (std::vector<std::string>{"$.program[0].body[0]", "$.program[0]"}));
  // Nothing to remove: no case comes back, and nothing is listed.
  removed.clear();
  j["program"] = json::array({j["program"][1]});
  EXPECT_FALSE(pallas_call_dce(case_from_json(j), &removed));
  EXPECT_TRUE(removed.empty());
}

// _mpmd_map_abstract_eval drops the kernel-local gpu_core.MemoryEffect of a warp_map's barrier
// arrivals: a scope whose warp_map only arrives goes whole; a warp_map whose copy writes SMEM
// outside it keeps it; a warp_map at the body's level is kept (_mpmd_map_dce_rule).
TEST(PallasCallDce, AWarpMapsArrivalsDoNotKeepItsScope) {
  const json arrive = {{"op", "barrier_arrive"}, {"barrier", {{"alloc", "bar"}}}};
  const json only_arrives = {{"op", "warp_map"}, {"axis", "warp"}, {"body", {arrive}}};
  const auto dropped = pallas_call_dce(case_from_json(pallas_call(json::array({only_arrives}))));
  ASSERT_TRUE(dropped);
  EXPECT_TRUE(dropped->program.empty());
  // A copy into the scope's own SMEM: discharged by the scope, dropped with it.
  const json copies = {{"op", "warp_map"}, {"axis", "warp"}, {"body", {kCopy, arrive}}};
  const auto also_dropped = pallas_call_dce(case_from_json(pallas_call(json::array({copies}))));
  ASSERT_TRUE(also_dropped);
  EXPECT_TRUE(also_dropped->program.empty());
  // The same warp_map inside an inner scope that allocates nothing: the copy writes the outer
  // scope's SMEM from inside the warp_map, an effect of the inner scope, which the outer one
  // discharges; the outer scope's own barrier_wait keeps it whole.
  const json wait = {{"op", "barrier_wait"}, {"barrier", {{"alloc", "bar"}}}};
  EXPECT_FALSE(pallas_call_dce(case_from_json(pallas_call(json::array({only_arrives, wait})))));
  // At the kernel's level (no scope around it) the warp_map stays.
  json top = pallas_call(json::array({only_arrives}));
  top["program"] = json::array({{{"op", "run_scoped"},
                                 {"allocs", top["program"][0]["allocs"]},
                                 {"body", json::array({only_arrives, wait})}}});
  EXPECT_FALSE(pallas_call_dce(case_from_json(top)));
}

}  // namespace
}  // namespace collfuzz
