// The campaign's parts: the shrinker keeps the property and minimises, the findings store claims
// each signature once and reads back what it wrote, and a small campaign runs end to end, writes
// its summary, and resumes where it stopped.
#include <gtest/gtest.h>

#include <filesystem>

#include "generators/case_stream.h"
#include "harness/campaign/campaign.h"
#include "harness/campaign/campaign_state.h"
#include "harness/campaign/case_shrinker.h"
#include "harness/campaign/findings_store.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"

namespace collfuzz::campaign {
namespace {

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("collfuzz-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

bool has_partitioned_copy(const Body& body) {
  for (const Op& op : body) {
    if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      if (cp->leader_tracked == LeaderTracked::kPartitioned) return true;
    }
    if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
      if (has_partitioned_copy(rs->body)) return true;
    }
    if (const auto* w = std::get_if<When>(&op.v)) {
      if (has_partitioned_copy(w->body)) return true;
    }
    if (const auto* l = std::get_if<Loop>(&op.v)) {
      if (has_partitioned_copy(l->body)) return true;
    }
  }
  return false;
}

TEST(CaseShrinker, ShrinksToAMinimalCaseThatKeepsTheProperty) {
  // A stand-in finding: "the case has a PARTITIONED copy".
  std::uint64_t index = 0;
  // A case whose copy is not inside a nested run_scoped: the structural passes unwrap only a
  // run_scoped that allocates nothing, so a nested one may leave three ops.
  const auto nested = [](const Case& c) {
    for (const Op& op : c.program) {
      const auto* rs = std::get_if<RunScoped>(&op.v);
      if (!rs) continue;
      for (const Op& inner : rs->body)
        if (std::holds_alternative<RunScoped>(inner.v)) return true;
    }
    return false;
  };
  while (!has_partitioned_copy(generators::generate_case(5, index).program) ||
         case_size(generators::generate_case(5, index)).ops < 4 ||
         nested(generators::generate_case(5, index))) {
    ++index;
  }
  const Case start = generators::generate_case(5, index);
  CaseShrinker shrinker([](const Case& c) { return has_partitioned_copy(c.program); });
  const Case shrunk = shrinker.shrink(generators::generate_shrinkable(5, index));
  EXPECT_TRUE(has_partitioned_copy(shrunk.program));
  const CaseSize before = case_size(start);
  const CaseSize after = case_size(shrunk);
  EXPECT_LT(after.ops, before.ops);
  EXPECT_LE(after.ops, 2) << case_to_json(shrunk).dump(2);  // the run_scoped and the copy
  EXPECT_LE(after.ctas, before.ctas);
  EXPECT_NO_THROW(case_from_json(case_to_json(shrunk)));
}

TEST(CaseShrinker, UnwrapsARunScopedThatAllocatesNothing) {
  // A finding inside a run_scoped whose own allocations are unused: once drop_unused has removed
  // them, the empty run_scoped is replaced by its body, leaving the inner run_scoped and the copy.
  const Case start = case_from_json(nlohmann::json::parse(R"({
    "format": 1, "name": "nested", "mesh": {"cluster": [2], "cluster_names": ["x"]},
    "target": {"arch": "sm_90a"},
    "inputs": [{"name": "x", "shape": [2, 16], "dtype": "float32"}],
    "program": [{"op": "run_scoped", "collective_axes": [],
      "allocs": [{"name": "unused", "kind": "smem", "shape": [4], "dtype": "float32"}],
      "body": [{"op": "run_scoped",
        "allocs": [{"name": "dst", "kind": "smem", "shape": [1, 16], "dtype": "float32"},
                   {"name": "bar", "kind": "barrier"}],
        "body": [{"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"},
                  "barrier": {"alloc": "bar"}, "collective_axes": ["x"],
                  "leader_tracked": {"partitioned": 0}}]}]}]})"));
  ASSERT_EQ(case_size(start).ops, 3);
  CaseShrinker shrinker([](const Case& c) { return has_partitioned_copy(c.program); });
  const Case shrunk = shrinker.shrink(start);
  EXPECT_LT(shrinker.stats().candidates, 200);  // no candidate that changes nothing is taken
  EXPECT_EQ(case_size(shrunk).ops, 2) << case_to_json(shrunk).dump(2);
  ASSERT_EQ(shrunk.program.size(), 1u);
  const auto* rs = std::get_if<RunScoped>(&shrunk.program[0].v);
  ASSERT_NE(rs, nullptr);
  EXPECT_FALSE(rs->allocs.empty());
}

TEST(CaseShrinker, StructuralShrinkingKeepsEveryCandidateValid) {
  const Case start = generators::generate_case(9, 3);
  int calls = 0;
  CaseShrinker shrinker([&](const Case& c) {
    ++calls;
    EXPECT_NO_THROW(case_from_json(case_to_json(c)));
    return true;  // everything "keeps": shrink as far as possible
  });
  const Case shrunk = shrinker.shrink(start);
  EXPECT_GT(calls, 0);
  EXPECT_EQ(case_size(shrunk).ops, 0);
}

TEST(FindingsStore, ClaimsEachSignatureOnceAndReadsBackWhatItWrote) {
  const auto dir = fresh_dir("store");
  FindingsStore a(dir);
  FindingsStore b(dir);
  EXPECT_TRUE(a.claim("memory:data:copy:sim"));
  EXPECT_FALSE(a.claim("memory:data:copy:sim"));
  EXPECT_FALSE(b.claim("memory:data:copy:sim"));  // another process's view of the same directory
  const Case c = generators::generate_case(1, 0);
  a.write("memory:data:copy:sim", c, {{"found", {{"case", c.name}}}});
  const auto all = b.load_all();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].signature, "memory:data:copy:sim");
  EXPECT_EQ(load_case_file(dir / all[0].case_file).name, c.name);
  std::filesystem::remove_all(dir);
}

TEST(Campaign, RunsEndToEndWritesItsSummaryAndResumes) {
  const auto dir = fresh_dir("campaign");
  CampaignOptions o;
  o.seed = 3;
  o.cases = 300;
  o.jobs = 2;
  o.out = dir;
  o.executors = {};  // the reference alone (for the cases' own profiles)
  std::ostringstream out;
  const int first = Campaign(o).run(out, false);
  EXPECT_TRUE(first == 0 || first == 1) << out.str();
  const CampaignDirectory cd(dir);
  ASSERT_TRUE(std::filesystem::exists(dir / "summary.json"));
  ASSERT_TRUE(std::filesystem::exists(dir / "summary.md"));
  const auto summary = load_json_file(dir / "summary.json");
  EXPECT_EQ(
      summary["cases"].get<std::int64_t>() + cd.load_worker(0).crashes + cd.load_worker(1).crashes,
      300);
  // Every finding is a valid case file with its outcomes beside it.
  for (const auto& f : FindingsStore(cd.findings()).load_all()) {
    EXPECT_NO_THROW(load_case_file(cd.findings() / f.case_file)) << f.case_file;
  }
  // Resume with a larger budget: the workers continue their streams where they stopped.
  CampaignOptions more = cd.load_options();
  more.cases = 500;
  std::ostringstream out2;
  Campaign(more).run(out2, false);
  const auto resumed = load_json_file(dir / "summary.json");
  EXPECT_EQ(
      resumed["cases"].get<std::int64_t>() + cd.load_worker(0).crashes + cd.load_worker(1).crashes,
      500)
      << out2.str();
  EXPECT_EQ(cd.load_worker(0).next_index, 500u);
  EXPECT_EQ(cd.load_worker(1).next_index, 501u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collfuzz::campaign
