// The reference predicts undefined behaviour (harness/core/undefined_behaviour.def): which bits of
// a multicast mask are undefined, the table's ids, and the docs that embed the table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/outcome_json.h"
#include "harness/core/undefined_behaviour.h"
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
