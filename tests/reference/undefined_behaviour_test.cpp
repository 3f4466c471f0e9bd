// The reference predicts undefined behaviour (harness/core/undefined_behaviour.def): which bits of
// a multicast mask are undefined, the table's ids, and the docs that embed the table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/no_complete_search.h"
#include "harness/core/outcome_json.h"
#include "harness/core/undefined_behaviour.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"

namespace collfuzz {
namespace {

Case corpus_case(const std::string& name) {
  return load_case_file(std::string(COLLFUZZ_SOURCE_DIR) + "/corpus/" + name + ".json");
}

TEST(UndefinedBehaviourPrediction, ARepeatedAxisInAClusterOfTwoMulticastsPastIt) {
  const Case c = corpus_case("run.multicast.outside_cluster__repeated_axis_cluster_of_2");
  const Outcome o = predict(c, Profile::kMosaic).outcome;
  ASSERT_EQ(o.kind, OutcomeKind::kUndefined) << to_string(o.kind);
  ASSERT_TRUE(o.undefined);
  EXPECT_EQ(o.undefined->code, UndefinedBehaviour::kMulticastOutsideCluster);
  EXPECT_EQ(o.undefined->op, "$.program[0].body[0]");
  EXPECT_EQ(o.undefined->cta, 0);
  EXPECT_NE(o.undefined->detail.find("CTA 2 of a cluster of 2"), std::string::npos)
      << o.undefined->detail;
}

TEST(UndefinedBehaviourPrediction, TheAxisNamedOnceIsDefined) {
  Case c = corpus_case("run.multicast.outside_cluster__repeated_axis_cluster_of_2");
  auto& copy = std::get<CopyGmemToSmem>(std::get<RunScoped>(c.program[0].v).body[0].v);
  copy.collective_axes->pop_back();
  EXPECT_EQ(predict(c, Profile::kMosaic).outcome.kind, OutcomeKind::kCompleted);
}

TEST(UndefinedBehaviourPrediction, ABitPastSixteenIsTruncatedNotUndefined) {
  // 16 CTAs: the repeated axis's bit for rank 16 does not survive trunci to i16 (defined), and
  // every other bit names a CTA of the cluster.
  const Case c = corpus_case("deadlock.multicast__repeated_axis_mask_spills");
  EXPECT_EQ(predict(c, Profile::kMosaic).outcome.kind, OutcomeKind::kDeadlock);
}

TEST(UndefinedBehaviourPrediction, ABitBelowSixteenPastTheClusterIsUndefined) {
  // The same program on an (4, 2) cluster: CTA (3, 0) (rank 6) multicasts to ranks 6, 7, 8.
  Case c = corpus_case("deadlock.multicast__repeated_axis_mask_spills");
  c.mesh.cluster = {4, 2};
  const Outcome o = predict(c, Profile::kMosaic).outcome;
  ASSERT_EQ(o.kind, OutcomeKind::kUndefined);
  EXPECT_EQ(o.undefined->code, UndefinedBehaviour::kMulticastOutsideCluster);
  EXPECT_EQ(o.undefined->cta, 6);
}

TEST(UndefinedBehaviourPrediction, AnMbarrierCountPastTheRangeIsUndefined) {
  Case c = corpus_case("run.multicast.outside_cluster__repeated_axis_cluster_of_2");
  auto& body = std::get<RunScoped>(c.program[0].v);
  auto& copy = std::get<CopyGmemToSmem>(body.body[0].v);
  copy.collective_axes.reset();
  for (auto& a : body.allocs) {
    if (a.kind == AllocKind::kBarrier) a.num_arrivals = 8192;  // 8192 * 128 = 2^20
  }
  const Outcome o = predict(c, Profile::kMosaic).outcome;
  ASSERT_EQ(o.kind, OutcomeKind::kUndefined) << to_string(o.kind);
  EXPECT_EQ(o.undefined->code, UndefinedBehaviour::kMbarrierInitCount);
  for (auto& a : body.allocs) {
    if (a.kind == AllocKind::kBarrier) a.num_arrivals = 8191;
  }
  EXPECT_NE(predict(c, Profile::kMosaic).outcome.kind, OutcomeKind::kUndefined);
}

TEST(UndefinedBehaviourPrediction, TheOutcomeJsonCarriesTheCode) {
  const Case c = corpus_case("run.multicast.outside_cluster__repeated_axis_cluster_of_2");
  const Outcome o = predict(c, Profile::kMosaic).outcome;
  const nlohmann::json j = outcome_to_json(o);
  EXPECT_EQ(j.at("kind"), "undefined");
  EXPECT_EQ(j.at("undefined").at("code"), "multicast_outside_cluster");
  const Outcome back = outcome_from_json(j, c, "$");
  ASSERT_TRUE(back.undefined);
  EXPECT_EQ(back.undefined->code, o.undefined->code);
  EXPECT_EQ(back.undefined->cta, o.undefined->cta);
  nlohmann::json bad = j;
  bad["undefined"]["code"] = "nonsense";
  try {
    outcome_from_json(bad, c, "$");
    ADD_FAILURE() << "an unknown code was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("$.undefined.code"), std::string::npos) << e.what();
  }
  bad.erase("undefined");
  EXPECT_THROW(outcome_from_json(bad, c, "$"), InputError);
}

// run.mbarrier.nocomplete_completes: warps_that_copy warps of a warp_map copy onto a
// Barrier(num_arrivals) (the corpus case with `when(warp < warps_that_copy)` around its copy).
Case warp_copies(std::int64_t warps_that_copy, std::int64_t num_arrivals,
                 std::optional<bool> predicate = std::nullopt, const char* jax = "0.11.2") {
  std::ifstream in(std::string(COLLFUZZ_SOURCE_DIR) +
                   "/corpus/run.mbarrier.nocomplete_completes__every_warp_one_arrival.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j.erase("expect");
  j["target"]["jax"] = jax;
  auto& scope = j["program"][0];
  scope["allocs"][1]["num_arrivals"] = num_arrivals;
  nlohmann::json copy = scope["body"][0]["body"][0];
  if (predicate) copy["predicate"] = *predicate;
  scope["body"][0]["body"] = nlohmann::json::array(
      {{{"op", "when"}, {"cond", {{"axis", "warp"}, {"lt", warps_that_copy}}}, {"body", {copy}}}});
  return case_from_json(j);
}

TEST(UndefinedBehaviourPrediction,
     WarpsNoCompleteArrivalsCompleteAPhaseIfMoreWarpsCopyThanItNeeds) {
  const Outcome o =
      predict(corpus_case("run.mbarrier.nocomplete_completes__every_warp_one_arrival"),
              Profile::kMosaic)
          .outcome;
  ASSERT_EQ(o.kind, OutcomeKind::kUndefined) << to_string(o.kind);
  EXPECT_EQ(o.undefined->code, UndefinedBehaviour::kMbarrierNoCompleteCompletes);
  EXPECT_EQ(o.undefined->op, "$.program[0].body[0].body[0]");
  EXPECT_EQ(o.undefined->cta, 0);
  // w warps' copies (96 no-complete hardware arrivals each, then 32) onto a phase of n x 128:
  // some order completes it with a no-complete arrival exactly when w > n (w <= 4).
  for (std::int64_t w = 1; w <= 4; ++w) {
    for (std::int64_t n = 1; n <= 4; ++n) {
      const Outcome p = predict(warp_copies(w, n), Profile::kMosaic).outcome;
      EXPECT_EQ(p.kind == OutcomeKind::kUndefined, w > n)
          << w << " warps, num_arrivals " << n << ": " << to_string(p.kind);
    }
  }
}

TEST(UndefinedBehaviourPrediction, A012PredicateThatIsFalseGatesTheWarpsArrivals) {
  // 0.11.2 arrives whatever the predicate; 0.12.0.1 guards the warp's arrivals with it.
  EXPECT_EQ(predict(warp_copies(4, 1, false), Profile::kMosaic).outcome.kind,
            OutcomeKind::kUndefined);
  EXPECT_NE(predict(warp_copies(4, 1, false, "0.12.0.1"), Profile::kMosaic).outcome.kind,
            OutcomeKind::kUndefined);
  EXPECT_EQ(predict(warp_copies(4, 1, true, "0.12.0.1"), Profile::kMosaic).outcome.kind,
            OutcomeKind::kUndefined);
}

TEST(UndefinedBehaviourPrediction, TheSearchOverWarpOrdersCountsEveryArrival) {
  const WarpArrival nc{96, true}, ex{32, false}, arrive{128, false};
  const auto undefined = [](const std::vector<std::vector<WarpArrival>>& warps,
                            std::int64_t pending) {
    return no_complete_completion(warps, pending).has_value();
  };
  // Two warps with one copy each on 256: at most 128 + 96 = 224 before a no-complete arrival.
  EXPECT_FALSE(undefined({{nc, ex}, {nc, ex}}, 256));
  // With two copies each: 128 (one warp's first copy) + 96 (its second's) + 96 >= 256.
  EXPECT_TRUE(undefined({{nc, ex, nc, ex}, {nc, ex, nc, ex}}, 256));
  // One warp alone: its own arrivals come in order, and the last one that lands is an expect_tx.
  EXPECT_FALSE(undefined({{nc, ex, nc, ex, nc, ex}}, 256));
  // A barrier_arrive by another warp first: 128 + 96 = 224 reaches a phase of 192, not of 256.
  EXPECT_TRUE(undefined({{arrive}, {nc, ex}}, 192));
  EXPECT_FALSE(undefined({{arrive}, {nc, ex}}, 256));
  // Exactly the pending count is a completion too.
  EXPECT_TRUE(undefined({{nc, ex}, {nc, ex}}, 192));
}

TEST(UndefinedBehaviourPrediction, ANoCompleteCompletionListsAMulticastAnotherWarpOrderMeetsFirst) {
  const Case c = corpus_case("run.mbarrier.nocomplete_completes__or_multicast_outside_cluster");
  const Outcome o = predict(c, Profile::kMosaic).outcome;
  ASSERT_EQ(o.kind, OutcomeKind::kUndefined) << to_string(o.kind);
  EXPECT_EQ(o.undefined->code, UndefinedBehaviour::kMbarrierNoCompleteCompletes);
  EXPECT_EQ(o.undefined->also,
            std::vector<UndefinedBehaviour>{UndefinedBehaviour::kMulticastOutsideCluster});
  // Through JSON and back.
  const nlohmann::json j = outcome_to_json(o);
  EXPECT_EQ(j.at("undefined").at("also"), nlohmann::json::array({"multicast_outside_cluster"}));
  EXPECT_EQ(outcome_from_json(j, c, "$").undefined->also, o.undefined->also);
  nlohmann::json bad = j;
  bad["undefined"]["also"] = nlohmann::json::array({"nonsense"});
  try {
    outcome_from_json(bad, c, "$");
    ADD_FAILURE() << "an unknown code in also was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("$.undefined.also[0]"), std::string::npos) << e.what();
  }
  // An executor that meets either agrees; a third code does not.
  Outcome run = o;
  run.executor = "jax-ir";
  run.undefined = UndefinedRecord{UndefinedBehaviour::kMulticastOutsideCluster, "", 0, "", {}};
  Verdict agree;
  ASSERT_TRUE(undefined_oracle(o, run, agree));
  EXPECT_TRUE(agree.mismatches.empty());
  EXPECT_EQ(agree.compared, 1);
  run.undefined->code = UndefinedBehaviour::kMbarrierInitCount;
  Verdict differ;
  undefined_oracle(o, run, differ);
  EXPECT_EQ(differ.mismatches.size(), 1u);
  // Without the multicast the warp_map has nothing else to meet: no `also`.
  Case plain = c;
  auto& copy = std::get<CopyGmemToSmem>(
      std::get<WarpMap>(std::get<RunScoped>(plain.program[0].v).body[0].v).body[0].v);
  copy.collective_axes->pop_back();
  const Outcome p = predict(plain, Profile::kMosaic).outcome;
  ASSERT_EQ(p.kind, OutcomeKind::kUndefined) << to_string(p.kind);
  EXPECT_TRUE(p.undefined->also.empty());
}

TEST(UndefinedBehaviourTable, IdsAndCodesAreUniqueAndRunStage) {
  std::set<std::string_view> seen;
  for (const auto& u : all_undefined_behaviours()) {
    EXPECT_TRUE(seen.insert(u.name).second) << u.name;
    EXPECT_TRUE(seen.insert(u.id).second) << u.id;
    EXPECT_TRUE(u.id.starts_with("run.")) << u.id;
    EXPECT_EQ(u.name.find('.'), std::string_view::npos) << u.name;
    EXPECT_GE(u.fix.size(), 10u) << u.id;
    EXPECT_EQ(parse_undefined_behaviour(u.name), u.code);
    EXPECT_EQ(parse_undefined_behaviour(u.id), u.code);
  }
}

TEST(UndefinedBehaviourTable, EveryCodeHasACorpusCaseThatPredictsIt) {
  std::set<UndefinedBehaviour> predicted;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(COLLFUZZ_SOURCE_DIR) + "/corpus")) {
    if (e.path().extension() != ".json") continue;
    const Case c = load_case_file(e.path());
    const Outcome o = predict(c, c.target.profile).outcome;
    if (o.kind == OutcomeKind::kUndefined) predicted.insert(o.undefined->code);
  }
  for (const auto& u : all_undefined_behaviours())
    EXPECT_TRUE(predicted.count(u.code)) << "no corpus case predicts " << u.id;
}

TEST(UndefinedBehaviourTable, DocsEmbedTheTable) {
  std::ifstream in(std::string(COLLFUZZ_SOURCE_DIR) + "/docs/rules.md");
  ASSERT_TRUE(in);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string doc = buf.str();
  const std::string open = "<!-- undefined:begin -->\n";
  const auto begin = doc.find(open);
  const auto end = doc.find("<!-- undefined:end -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(doc.substr(begin + open.size(), end - begin - open.size()),
            undefined_behaviours_markdown())
      << "regenerate the table: tools/update_rules_doc.py";
}

}  // namespace
}  // namespace collfuzz
