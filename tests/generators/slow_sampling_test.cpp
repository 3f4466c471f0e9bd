// Slow executors' sampling: every worker feeds a sampled executor its share of cases, whatever
// --jobs is, and the campaign's case check uses that rule.
#include <gtest/gtest.h>

#include <memory>

#include "generators/case_stream.h"
#include "harness/campaign/case_check.h"
#include "harness/campaign/slow_sampling.h"

namespace collfuzz::campaign {
namespace {

TEST(SlowSampling, EveryWorkerGetsItsShareForEveryJobsCount) {
  for (const std::int64_t every : {2, 4, 200, 2000}) {
    for (const std::uint64_t jobs : {1u, 2u, 3u, 4u, 8u}) {
      for (const char* name : {"jax-interpret", "cuda"}) {
        const std::uint64_t salt = sampling_salt(name);
        // 2,500 expected per worker: binomial, sd 50; the bound is 5 sd.
        const std::uint64_t per_worker = 2500 * static_cast<std::uint64_t>(every);
        const double expected = static_cast<double>(per_worker) / static_cast<double>(every);
        for (std::uint64_t w = 0; w < jobs; ++w) {
          std::uint64_t hits = 0;
          for (std::uint64_t k = 0; k < per_worker; ++k)
            hits += sampled_case(w + k * jobs, salt, every);
          EXPECT_NEAR(static_cast<double>(hits), expected, 0.10 * expected)
              << name << " every " << every << " jobs " << jobs << " worker " << w;
        }
      }
    }
  }
}

TEST(SlowSampling, ExecutorsGetDifferentCasesAndEveryOneWhenNotSampled) {
  const auto a = sampling_salt("jax-interpret");
  const auto b = sampling_salt("jax-lower");
  int both = 0;
  int either = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const bool x = sampled_case(i, a, 10);
    const bool y = sampled_case(i, b, 10);
    both += x && y;
    either += x || y;
    EXPECT_TRUE(sampled_case(i, a, 1));
  }
  EXPECT_LT(both, either / 5);  // about 1 in 19 if independent
}

// Counts the cases it is given.
class CountingExecutor : public Executor {
 public:
  explicit CountingExecutor(int* runs) : runs_(runs) {}
  std::string name() const override { return "counting"; }
  Profile profile() const override { return Profile::kMosaic; }
  std::int64_t sample_every() const override { return 4; }
  Outcome run(const Case&) override {
    ++*runs_;
    return unavailable("counting", Profile::kMosaic, "a test executor");
  }

 private:
  int* runs_;
};

TEST(SlowSampling, CaseCheckFeedsASampledExecutorFromEveryWorker) {
  // With --jobs 2 and one case in 4, index % 4 gave worker 0 every sampled case, worker 1 none.
  for (std::uint64_t worker = 0; worker < 2; ++worker) {
    int runs = 0;
    std::vector<std::unique_ptr<Executor>> ex;
    ex.push_back(std::make_unique<CountingExecutor>(&runs));
    CaseCheck check(std::move(ex), DiagnosticLevel::kRule);
    for (std::uint64_t k = 0; k < 400; ++k) {
      const std::uint64_t index = worker + 2 * k;
      check.mismatches(generators::generate_case(1, index), nullptr, index);
    }
    EXPECT_GE(runs, 70) << "worker " << worker;
    EXPECT_LE(runs, 130) << "worker " << worker;
  }
}

}  // namespace
}  // namespace collfuzz::campaign
