// The summary's health check of the rules sent to each real executor (docs/fuzzing.md, "Health
// checks"): of the rules its profile can fire, those it received a case for, read from the
// executors' tallies (the record timeline.jsonl's per_executor is written from).
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/campaign/campaign_summary.h"
#include "oracles/reference/rules.h"

namespace collfuzz::campaign {
namespace {

ProgressSnapshot::ExecutorProgress tally(const std::string& name,
                                         const std::vector<RuleId>& rules) {
  ProgressSnapshot::ExecutorProgress e;
  e.name = name;
  e.compared = 500;
  for (const RuleId r : rules) {
    const auto bit = static_cast<std::size_t>(r);
    (bit < 64 ? e.rules_lo : e.rules_hi) |= std::uint64_t{1} << (bit % 64);
  }
  e.rules_hit = rules.size();
  return e;
}

bool has(const nlohmann::json& list, const std::string& s) {
  return std::find(list.begin(), list.end(), nlohmann::json(s)) != list.end();
}

std::size_t rules_of(Profile p) {
  std::size_t n = 0;
  for (const Rule& r : all_rules()) {
    const bool fires = p == Profile::kMosaic ? r.profiles != RuleProfiles::kInterpretOnly
                                             : r.profiles != RuleProfiles::kMosaicOnly;
    n += fires && rule_holds(r, kDefaultJaxVersion) ? 1 : 0;
  }
  return n;
}

TEST(HealthRules, NamesTheRulesARealExecutorNeverReceived) {
  CampaignOptions o;
  o.executors = {"sim", "jax-interpret", "jax-lower"};
  CampaignTotals t;
  t.slow_profiles = {{"jax-interpret", Profile::kInterpret}, {"jax-lower", Profile::kMosaic}};
  t.executor_tallies = {
      tally("sim", {RuleId::kEstimateGmem}),
      tally("jax-interpret", {RuleId::kInterpRegsMixed, RuleId::kMeshClusterRank}),
      tally("jax-lower", {RuleId::kEstimateGmem})};
  const nlohmann::json s = summary_json(o, t, {});
  const auto& sent = s["health"]["rules_sent"];
  ASSERT_FALSE(sent.contains("sim")) << "sim is not a real executor";
  const auto& ji = sent["jax-interpret"];
  EXPECT_EQ(ji["profile"], "interpret");
  EXPECT_EQ(ji["rules_received"], 2);
  EXPECT_EQ(ji["rules_can_fire"], rules_of(Profile::kInterpret));
  EXPECT_FALSE(has(ji["never_received"], "interpret.scoped.regs_mixed"));
  EXPECT_FALSE(has(ji["never_received"], "mesh.cluster.rank"));
  EXPECT_TRUE(has(ji["never_received"], "interpret.scoped.cluster_axes"));
  EXPECT_FALSE(has(ji["never_received"], "estimate.gmem.unsupported"))
      << "a compiler-only rule is not one the interpret profile can fire";
  // 0.12.0.1's row is not a rule of a 0.11.2 campaign.
  EXPECT_FALSE(has(ji["never_received"], "run.barrier.realloc_unobserved"));
  EXPECT_TRUE(has(ji["never_received"], "run.barrier.dealloc_unobserved"));
  const auto& jl = sent["jax-lower"];
  EXPECT_EQ(jl["profile"], "mosaic");
  EXPECT_EQ(jl["rules_received"], 1);
  EXPECT_TRUE(has(jl["never_received"], "mesh.cluster.rank"));
  EXPECT_FALSE(has(jl["never_received"], "interpret.scoped.regs_mixed"));
  int warned = 0;
  for (const auto& w : s["health"]["warnings"]) {
    const std::string text = w.get<std::string>();
    warned += text.rfind("jax-interpret never received a case for", 0) == 0 ||
              text.rfind("jax-lower never received a case for", 0) == 0;
  }
  EXPECT_EQ(warned, 2);
  const std::string md = summary_markdown(s);
  EXPECT_NE(md.find("| jax-interpret | interpret | 500 | 2 of "), std::string::npos) << md;
  EXPECT_NE(md.find("`interpret.scoped.cluster_axes`"), std::string::npos);
}

TEST(HealthRules, RulesOfStagesTheExecutorDoesNotRunAreOutOfReach) {
  CampaignOptions o;
  o.executors = {"jax-lower"};
  CampaignTotals t;
  t.slow_profiles = {{"jax-lower", Profile::kMosaic}};
  t.unobserved_stages = {{"jax-lower", {"compile", "launch", "run"}}};
  t.executor_tallies = {tally("jax-lower", {RuleId::kEstimateGmem})};
  const nlohmann::json s = summary_json(o, t, {});
  const auto& jl = s["health"]["rules_sent"]["jax-lower"];
  EXPECT_EQ(jl["rules_can_fire"], rules_of(Profile::kMosaic));
  EXPECT_TRUE(has(jl["out_of_reach"], "compile.wgmma.arch"));
  EXPECT_TRUE(has(jl["out_of_reach"], "launch.cluster_size"));
  EXPECT_FALSE(has(jl["never_received"], "compile.wgmma.arch"))
      << "a rule out of reach is not one the executor missed";
  EXPECT_TRUE(has(jl["never_received"], "mesh.cluster.rank"));
  EXPECT_FALSE(has(jl["out_of_reach"], "estimate.gmem.unsupported"));
  const auto in_reach = jl["rules_in_reach"].get<std::int64_t>();
  EXPECT_EQ(in_reach + static_cast<std::int64_t>(jl["out_of_reach"].size()),
            jl["rules_can_fire"].get<std::int64_t>());
  EXPECT_DOUBLE_EQ(jl["share"].get<double>(), 1.0 / static_cast<double>(in_reach));
  EXPECT_DOUBLE_EQ(jl["share_of_profile"].get<double>(), 1.0 / jl["rules_can_fire"].get<double>());
  const std::string md = summary_markdown(s);
  EXPECT_NE(md.find("| jax-lower | mosaic | 500 | 1 of " + std::to_string(in_reach) + " | "),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("`compile.wgmma.arch`"), std::string::npos);
}

TEST(HealthRules, NoWarningWhenEveryRuleReachedIt) {
  CampaignOptions o;
  o.executors = {"jax-interpret"};
  CampaignTotals t;
  t.slow_profiles = {{"jax-interpret", Profile::kInterpret}};
  std::vector<RuleId> every;
  for (const Rule& r : all_rules()) every.push_back(r.id);
  t.executor_tallies = {tally("jax-interpret", every)};
  const nlohmann::json s = summary_json(o, t, {});
  EXPECT_EQ(s["health"]["rules_sent"]["jax-interpret"]["share"], 1.0);
  EXPECT_TRUE(s["health"]["rules_sent"]["jax-interpret"]["never_received"].empty());
  for (const auto& w : s["health"]["warnings"])
    EXPECT_EQ(w.get<std::string>().find("never received"), std::string::npos) << w;
}

TEST(HealthRules, AnExecutorWithNoTallyReceivedNothing) {
  CampaignOptions o;
  o.executors = {"jax-interpret"};
  CampaignTotals t;
  t.slow_profiles = {{"jax-interpret", Profile::kInterpret}};  // no tally: it compared nothing
  const nlohmann::json s = summary_json(o, t, {});
  const auto& ji = s["health"]["rules_sent"]["jax-interpret"];
  EXPECT_EQ(ji["profile"], "interpret");
  EXPECT_EQ(ji["rules_received"], 0);
  EXPECT_EQ(ji["share"], 0.0);
}

}  // namespace
}  // namespace collfuzz::campaign
