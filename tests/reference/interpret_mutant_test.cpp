// The planted bugs of the reference's interpret profile (harness/core/mutants.h): each, selected
// at run time in the mutant build, changes the reference's interpret-mode prediction of a
// hand-written corpus case whose stored outcome (the one JAX interpret mode gives) the faithful
// reference matches. A campaign finds them only through jax-interpret (docs/bug-finding.md); this
// shows that the seam reaches the reference and that each bug is observable.
#include <gtest/gtest.h>

#include "harness/core/case_json.h"
#include "harness/core/mutants.h"
#include "harness/core/outcome_json.h"
#include "harness/core/stored_expectation.h"
#include "oracles/oracles.h"
#include "oracles/reference/reference.h"

namespace collfuzz {
namespace {

struct PlantedInterpret {
  Mutant mutant;
  const char* corpus_case;  // under corpus/
  const char* signature;    // one mismatch the mutant's prediction has against the stored outcome
};

const PlantedInterpret kPlantedInterpret[] = {
    {Mutant::kInterpretScopedCheckOrder, "interpret.scoped.cluster_axes__cluster_only_R4.json",
     "diagnostic:rule:interpret.scoped.thread_axis_required:jax-interpret"},
    {Mutant::kInterpretPredicateAccepted, "interpret.copy.predicate__unindexed_barrier.json",
     "diagnostic:rejected_not_accepted:interpret.copy.predicate:jax-interpret"},
    {Mutant::kInterpretAxesThreadFirst, "interpret.scoped.axis_not_found__unknown_axis_R7.json",
     "diagnostic:message:interpret.scoped.axis_not_found:jax-interpret"},
    {Mutant::kInterpretDeallocPendingOffByOne,
     "run.barrier.dealloc_pending__one_of_two_arrivals.json",
     "diagnostic:rejected_not_accepted:run.barrier.dealloc_pending:jax-interpret"},
    {Mutant::kInterpretOobFillNotZero, "interpret.mode.oob_partial_zero_fill.json",
     "memory:data:copy:jax-interpret"},
};

// The oracles' signatures for the stored interpret outcome (as jax-interpret's) against the
// reference's prediction with `m` selected.
std::vector<std::string> signatures(const std::string& file, Mutant m) {
  nlohmann::json expect;
  const Case c = load_case_file(std::string(COLLFUZZ_SOURCE_DIR) + "/corpus/" + file, &expect);
  const nlohmann::json* stored =
      stored_expectation_for(expect, Profile::kInterpret, c.target.profile);
  EXPECT_NE(stored, nullptr) << file;
  if (!stored) return {};
  Outcome actual = outcome_from_json(*stored, c, "expect");
  actual.executor = "jax-interpret";
  actual.profile = Profile::kInterpret;
  set_active_mutant(m);
  const Outcome predicted = predict(c, Profile::kInterpret).outcome;
  set_active_mutant(Mutant::kNone);
  std::vector<std::string> out;
  for (const Mismatch& mm : compare(c, predicted, actual).mismatches) out.push_back(mm.signature);
  return out;
}

class PlantedInterpretBug : public ::testing::TestWithParam<PlantedInterpret> {};

TEST_P(PlantedInterpretBug, ChangesTheInterpretPrediction) {
  const PlantedInterpret& p = GetParam();
  EXPECT_TRUE(signatures(p.corpus_case, Mutant::kNone).empty())
      << "the faithful reference must match the corpus case's stored interpret outcome";
  const std::vector<std::string> found = signatures(p.corpus_case, p.mutant);
  EXPECT_NE(std::find(found.begin(), found.end(), p.signature), found.end())
      << mutant_name(p.mutant) << " not seen as " << p.signature << "; got "
      << ::testing::PrintToString(found);
}

INSTANTIATE_TEST_SUITE_P(Mutants, PlantedInterpretBug, ::testing::ValuesIn(kPlantedInterpret),
                         [](const ::testing::TestParamInfo<PlantedInterpret>& i) {
                           return std::string(mutant_name(i.param.mutant));
                         });

TEST(InterpretMutants, EveryInterpretMutantHasAPlantedBugTest) {
  for (int m = static_cast<int>(kFirstInterpretMutant); m < static_cast<int>(Mutant::kCount); ++m) {
    const auto mutant = static_cast<Mutant>(m);
    const bool covered = std::any_of(std::begin(kPlantedInterpret), std::end(kPlantedInterpret),
                                     [&](const PlantedInterpret& p) { return p.mutant == mutant; });
    EXPECT_TRUE(covered) << mutant_name(mutant);
    EXPECT_EQ(parse_mutant(mutant_name(mutant)), mutant);
  }
}

// The interpret mutants live in the reference only: the compiler profile's prediction of a
// corpus case is the same with each of them selected.
TEST(InterpretMutants, LeaveTheCompilerProfileAlone) {
  for (const PlantedInterpret& p : kPlantedInterpret) {
    nlohmann::json expect;
    const Case c =
        load_case_file(std::string(COLLFUZZ_SOURCE_DIR) + "/corpus/" + p.corpus_case, &expect);
    const Outcome faithful = predict(c, Profile::kMosaic).outcome;
    set_active_mutant(p.mutant);
    const Outcome mutated = predict(c, Profile::kMosaic).outcome;
    set_active_mutant(Mutant::kNone);
    EXPECT_TRUE(compare(c, faithful, mutated).mismatches.empty()) << mutant_name(p.mutant);
  }
}

}  // namespace
}  // namespace collfuzz
