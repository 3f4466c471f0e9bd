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
  EXPECT_TRUE(pallas_call_drops_ops(c));
  EXPECT_TRUE(pallas_call_dce(c).program.empty());
  // plgpu.kernel keeps it.
  json k = pallas_call(json::array({kCopy}));
  k["target"]["entry"] = "kernel";
  EXPECT_FALSE(pallas_call_drops_ops(case_from_json(k)));
}

TEST(PallasCallDce, ABarrierOpOrAWriteOutsideKeepsTheScopeWhole) {
  const json wait = {{"op", "barrier_wait"}, {"barrier", {{"alloc", "bar"}}}};
  const Case waits = case_from_json(pallas_call(json::array({kCopy, wait})));
  EXPECT_FALSE(pallas_call_drops_ops(waits));
  EXPECT_EQ(std::get<RunScoped>(pallas_call_dce(waits).program[0].v).body.size(), 2u);
  const Case commits = case_from_json(pallas_call(json::array({kCopy, {{"op", "commit_smem"}}})));
  EXPECT_FALSE(pallas_call_drops_ops(commits));
  // An inner scope writing the outer one's SMEM: effectful inside, discharged by the outer one.
  const json inner = {{"op", "run_scoped"}, {"allocs", json::array()}, {"body", {kCopy}}};
  const Case nested = case_from_json(pallas_call(json::array({inner})));
  EXPECT_TRUE(pallas_call_dce(nested).program.empty());
}

TEST(PallasCallDce, AStaticallyFalseWhenIsNoEquationAndStaysAsWritten) {
  // pl.when(False) never traces its body: nothing to eliminate, the op stays (nothing runs it).
  json j = pallas_call(json::array({kCopy}));
  const json scope = j["program"][0];
  j["program"] = json::array({{{"op", "when"}, {"cond", false}, {"body", {scope}}}});
  const Case c = case_from_json(j);
  EXPECT_FALSE(pallas_call_drops_ops(c));
  ASSERT_EQ(pallas_call_dce(c).program.size(), 1u);
  // pl.when(True) is the body inline: its effect-free scope goes, and the when with it.
  j["program"][0]["cond"] = true;
  EXPECT_TRUE(pallas_call_dce(case_from_json(j)).program.empty());
}

}  // namespace
}  // namespace collfuzz
