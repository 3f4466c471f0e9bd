// The allocator a build links is the one its processes run on: CMake found mimalloc, so malloc
// must be mimalloc's (a build that links it without its malloc override, or drops it as an unneeded
// library, would silently run a campaign ~40% slower); otherwise the system's.
#include "harness/core/allocator.h"

#include <gtest/gtest.h>

#include <string>

namespace collfuzz {
namespace {

TEST(Allocator, TheProcessRunsOnTheAllocatorTheBuildLinked) {
  const std::string expected = COLLFUZZ_EXPECTED_ALLOCATOR;
  if (expected == "mimalloc") {
    EXPECT_TRUE(mimalloc_in_use());
    EXPECT_EQ(allocator_name().rfind("mimalloc 2.", 0), 0u) << allocator_name();
  } else {
    EXPECT_FALSE(mimalloc_in_use());
    EXPECT_EQ(allocator_name(), "system malloc");
  }
}

}  // namespace
}  // namespace collfuzz
