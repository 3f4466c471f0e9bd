// The reference on copy_smem_to_gmem's options. reduction_op: which output elements it predicts
// defined (a reduction needs a defined old value: the same thread's earlier store), the two rules
// (the compiler's dtype check in each lowering semantics, interpret mode's refusal when a thread
// reaches the store), and the rule check explain shows. predicate: the compiler stores where it
// holds; interpret mode refuses it first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "tests/reference/reference_test_util.h"

namespace collfuzz::testing {
namespace {

json store(const char* out, const char* op = nullptr) {
  json s = {{"op", "copy_smem_to_gmem"}, {"src", {{"alloc", "dst"}}}, {"dst", {{"output", out}}}};
  if (op) s["reduction_op"] = op;
  return s;
}

// x f32[128] (iota 1..128) into dst, waited for, then `stores`; one output y f32[128].
json reduction_case(const std::vector<json>& stores, json mesh = json::object(),
                    std::string profile = "mosaic", std::string dtype = "float32",
                    std::string semantics = "lane") {
  json body = {copy(), wait()};
  for (const json& s : stores) body.push_back(s);
  json j = make_case(mesh, {smem("dst", {128}, dtype), barrier("bar")}, body, {128}, dtype,
                     "sm_90a", semantics, profile);
  j["outputs"] = json::array({{{"name", "y"}, {"shape", {128}}, {"dtype", dtype}}});
  return j;
}

std::int64_t written_elements(const Outcome& o, const std::string& name) {
  for (const auto& out : o.outputs) {
    if (out.name != name) continue;
    std::int64_t n = 0;
    for (const auto& [b, e] : out.written) n += e - b;
    return n;
  }
  return -1;
}

float element(const Outcome& o, std::int64_t i) {
  float v = 0;
  std::memcpy(&v, o.outputs.at(0).bytes.data() + i * 4, 4);
  return v;
}

TEST(StoreReduction, AStoreThenAnAddDoublesTheTile) {
  const Outcome o = outcome_of(reduction_case({store("y"), store("y", "add")}));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(written_elements(o, "y"), 128);
  EXPECT_EQ(element(o, 0), 2.0f);
  EXPECT_EQ(element(o, 127), 256.0f);
}

TEST(StoreReduction, AReductionIntoAnUnwrittenOutputIsUndefined) {
  // Outputs start undefined: op(undefined, x) is not compared.
  const Outcome o = outcome_of(reduction_case({store("y", "add")}));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(written_elements(o, "y"), 0);
}

TEST(StoreReduction, TwoCtasReducingOneTileAreNotCompared) {
  // Each CTA stores, then adds: the other CTA's store may land between, so no value is certain.
  const Outcome o = outcome_of(reduction_case({store("y"), store("y", "add")},
                                              {{"cluster", {2}}, {"cluster_names", {"x"}}}));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(written_elements(o, "y"), 0);
}

TEST(StoreReduction, TheDtypeRuleFiresAtLowerOrDialect) {
  expect_rejected(reduction_case({store("y", "max")}), "launch_context.tma.reduction_op",
                  "Reduction op max not supported by the TMA implementation for element type f32");
  const Outcome wg = outcome_of(
      reduction_case({store("y", "xor")}, json::object(), "mosaic", "float16", "warpgroup"));
  ASSERT_EQ(wg.kind, OutcomeKind::kRejected);
  EXPECT_EQ(wg.diagnostic->stage, "dialect");
  EXPECT_EQ(wg.diagnostic->message,
            "Reduction op xor not supported by the TMA implementation for element type f16");
  // uint32 is the signless i32: inc is allowed.
  EXPECT_TRUE(outcome_of(reduction_case({store("y"), store("y", "inc")}, json::object(), "mosaic",
                                        "uint32"))
                  .accepted());
}

TEST(StoreReduction, InterpretModeRefusesWhenTheThreadGetsThere) {
  const Outcome o =
      outcome_of(reduction_case({store("y"), store("y", "add")}, json::object(), "interpret"),
                 Profile::kInterpret);
  ASSERT_EQ(o.kind, OutcomeKind::kRejected);
  EXPECT_EQ(o.diagnostic->stage, "run");
  EXPECT_EQ(o.diagnostic->exception, "NotImplementedError");
  EXPECT_EQ(o.diagnostic->message, "reduction_op not supported");
  EXPECT_EQ(o.diagnostic->op, "$.program[0].body[3]");  // the reducing store, not the plain one
}

TEST(StoreReduction, ExplainShowsTheRuleChecked) {
  const Prediction p =
      predict(case_from_json(reduction_case({store("y"), store("y", "add")})), Profile::kMosaic,
              /*explain=*/true);
  const bool checked = std::any_of(p.steps.begin(), p.steps.end(), [](const ref::ExplainStep& s) {
    return rule(s.rule).name == "launch_context.tma.reduction_op" && !s.fired &&
           s.where == "$.program[0].body[3]";
  });
  EXPECT_TRUE(checked);
}

json predicated(json s, json cond) {
  s["predicate"] = std::move(cond);
  return s;
}

TEST(StorePredicate, AFalsePredicateStoresNothing) {
  const json cluster = {{"cluster", {2}}, {"cluster_names", {"x"}}};
  // Both CTAs store the same tile; only CTA 0's predicate holds, so no race and y == x.
  const Outcome o =
      outcome_of(reduction_case({predicated(store("y"), {{"axis", "x"}, {"eq", 0}})}, cluster));
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted);
  EXPECT_EQ(written_elements(o, "y"), 128);
  EXPECT_EQ(element(o, 5), 6.0f);
  const Outcome none =
      outcome_of(reduction_case({predicated(store("y"), {{"axis", "x"}, {"eq", 7}})}, cluster));
  EXPECT_EQ(written_elements(none, "y"), 0);
}

TEST(StorePredicate, InterpretModeRefusesItBeforeTheReduction) {
  const Outcome o =
      outcome_of(reduction_case({predicated(store("y", "add"), {{"axis", "x"}, {"eq", 0}})},
                                {{"cluster", {2}}, {"cluster_names", {"x"}}}, "interpret"),
                 Profile::kInterpret);
  ASSERT_EQ(o.kind, OutcomeKind::kRejected);
  EXPECT_EQ(o.diagnostic->rule, "interpret.store.predicate");
  EXPECT_EQ(o.diagnostic->message, "predicate not supported");
  EXPECT_EQ(o.diagnostic->stage, "run");
}

}  // namespace
}  // namespace collfuzz::testing
