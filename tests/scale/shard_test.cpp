#include "harness/campaign/shard.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "harness/core/errors.h"

namespace collfuzz::campaign {
namespace {

std::optional<Shard> from(const std::map<std::string, std::string>& env) {
  return shard_from_environment([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::string error_field(const std::map<std::string, std::string>& env) {
  try {
    from(env);
  } catch (const InputError& e) {
    return e.path();
  }
  return "";
}

TEST(Shard, ParsesTheFlag) {
  const Shard s = parse_shard("--shard", "2/5");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 5u);
  for (const char* bad : {"", "3", "4/4", "1/0", "-1/4", "a/4", "1/4x", "1/ 4", "1/2000000"}) {
    EXPECT_THROW(parse_shard("--shard", bad), InputError) << bad;
  }
}

TEST(Shard, ShardsPartitionTheStream) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t i = 0; i < 4; ++i) {
    const Shard s{i, 4, "test"};
    for (std::uint64_t local = 0; local < 25; ++local) {
      const std::uint64_t g = s.global(local);
      EXPECT_EQ(s.local(g), local);
      EXPECT_TRUE(seen.insert(g).second) << g;
    }
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(*seen.rbegin(), 99u);
}

TEST(Shard, ReadsEachEnginesVariables) {
  EXPECT_FALSE(from({}).has_value());
  auto s = from({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "8"}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 3u);
  EXPECT_EQ(s->count, 8u);
  s = from({{"SLURM_ARRAY_TASK_ID", "4"},
            {"SLURM_ARRAY_TASK_COUNT", "4"},
            {"SLURM_ARRAY_TASK_MIN", "1"}});  // --array=1-4
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 3u);
  s = from({{"JOB_COMPLETION_INDEX", "0"}, {"COLLFUZZ_SHARD_COUNT", "2"}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 0u);
  EXPECT_EQ(s->count, 2u);
  s = from({{"CI_NODE_INDEX", "1"}, {"CI_NODE_TOTAL", "3"}});  // GitLab: 1-based
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 0u);
  EXPECT_EQ(s->count, 3u);
  s = from({{"COLLFUZZ_SHARD", "1/2"}, {"CI_NODE_INDEX", "3"}, {"CI_NODE_TOTAL", "3"}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text(), "1/2");
}

TEST(Shard, BadEnvironmentNamesTheVariable) {
  EXPECT_EQ(error_field({{"COLLFUZZ_SHARD", "5/4"}}), "COLLFUZZ_SHARD");
  EXPECT_EQ(error_field({{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}),
            "SLURM_ARRAY_TASK_ID");
  EXPECT_EQ(error_field({{"SLURM_ARRAY_TASK_ID", "1"}}), "SLURM_ARRAY_TASK_COUNT");
  EXPECT_EQ(error_field({{"JOB_COMPLETION_INDEX", "1"}}), "COLLFUZZ_SHARD_COUNT");
  EXPECT_EQ(error_field({{"JOB_COMPLETION_INDEX", "4"}, {"COLLFUZZ_SHARD_COUNT", "4"}}),
            "JOB_COMPLETION_INDEX");
  EXPECT_EQ(error_field({{"CI_NODE_INDEX", "0"}, {"CI_NODE_TOTAL", "4"}}), "CI_NODE_INDEX");
  EXPECT_EQ(error_field({{"CI_NODE_INDEX", "2"}, {"CI_NODE_TOTAL", "-1"}}), "CI_NODE_TOTAL");
}

}  // namespace
}  // namespace collfuzz::campaign
