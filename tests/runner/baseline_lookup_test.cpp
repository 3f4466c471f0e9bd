// The known-divergence baseline is found from any working directory (baseline_lookup.h): the
// flag, COLLFUZZ_ROOT, next to the binary, the working directory, the source tree, in that order;
// none found is said, with every place looked in.
#include "harness/runner/baseline_lookup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace collfuzz {
namespace {

namespace fs = std::filesystem;

class BaselineLookup : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/collfuzz-baseline-lookup-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    old_cwd_ = fs::current_path();
    fs::create_directories(root_ / "cwd");
    fs::current_path(root_ / "cwd");
    if (const char* r = std::getenv("COLLFUZZ_ROOT")) saved_root_ = r;
    unsetenv("COLLFUZZ_ROOT");
  }
  void TearDown() override {
    fs::current_path(old_cwd_);
    fs::remove_all(root_);
    if (saved_root_) setenv("COLLFUZZ_ROOT", saved_root_->c_str(), 1);
  }
  fs::path file(const fs::path& dir) {
    fs::create_directories(dir);
    std::ofstream(dir / "known-divergences.json") << "{}";
    return (dir / "known-divergences.json").lexically_normal();
  }
  std::string exe() const {
    fs::create_directories(root_ / "src" / "build" / "release");
    return (root_ / "src" / "build" / "release" / "collfuzz").string();
  }
  std::string nowhere() const { return (root_ / "no-source").string(); }

  fs::path root_;
  fs::path old_cwd_;
  std::optional<std::string> saved_root_;
};

TEST_F(BaselineLookup, TheFlagWinsAsGiven) {
  file(root_ / "src" / "ci");
  const auto at = find_known_divergences("mine.json", exe(), nowhere());
  EXPECT_EQ(at.path, "mine.json");
  EXPECT_EQ(at.from, "--baseline");
}

TEST_F(BaselineLookup, NextToABuildFolderInsideTheSourceTree) {
  const auto want = file(root_ / "src" / "ci");
  const auto at = find_known_divergences("", exe(), nowhere());
  EXPECT_EQ(at.path, want.string());
  EXPECT_EQ(at.from, "next to the binary");
}

TEST_F(BaselineLookup, CollfuzzRootBeforeTheBinary) {
  file(root_ / "src" / "ci");
  const auto want = file(root_ / "other" / "ci");
  setenv("COLLFUZZ_ROOT", (root_ / "other").c_str(), 1);
  const auto at = find_known_divergences("", exe(), nowhere());
  EXPECT_EQ(at.path, want.string());
  EXPECT_EQ(at.from, "COLLFUZZ_ROOT");
}

TEST_F(BaselineLookup, TheWorkingDirectoryThenTheSourceTree) {
  file(root_ / "cwd" / "ci");
  auto at = find_known_divergences("", exe(), nowhere());
  EXPECT_EQ(at.path, "ci/known-divergences.json");
  EXPECT_EQ(at.from, "the working directory");
  fs::remove_all(root_ / "cwd" / "ci");
  const auto want = file(root_ / "tree" / "ci");
  at = find_known_divergences("", exe(), (root_ / "tree").string());
  EXPECT_EQ(at.path, want.string());
  EXPECT_EQ(at.from, "the source tree collfuzz was built from");
}

TEST_F(BaselineLookup, NoneFoundIsSaidWithEveryPlaceLooked) {
  const auto at = find_known_divergences("", exe(), nowhere());
  EXPECT_TRUE(at.path.empty());
  EXPECT_EQ(at.looked.size(), 5U);  // 3 next to the binary, the working directory, the tree
  const std::string line = baseline_location_line(at);
  EXPECT_EQ(line.rfind("warning: no known-divergence baseline found", 0), 0U) << line;
  EXPECT_NE(line.find((root_ / "no-source" / "ci" / "known-divergences.json").string()),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("--baseline FILE"), std::string::npos) << line;
}

TEST_F(BaselineLookup, TheFoundLineNamesPathAndPlace) {
  BaselineLocation at{"/x/ci/known-divergences.json", "COLLFUZZ_ROOT", {}};
  EXPECT_EQ(baseline_location_line(at),
            "baseline: /x/ci/known-divergences.json (from COLLFUZZ_ROOT)");
}

}  // namespace
}  // namespace collfuzz
