// The known JAX bugs list (ci/known-jax-bugs.json, known_jax_bugs.h): the shipped list loads and
// matches the messages the documented bugs raise, only on the executors they are listed for;
// a malformed list is refused naming its field.
#include "harness/runner/known_jax_bugs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/core/errors.h"
#include "harness/runner/baseline_lookup.h"

namespace collfuzz {
namespace {

KnownJaxBugs shipped() {
  const BaselineLocation at = find_ci_file("known-jax-bugs.json", "", "--known-bugs");
  EXPECT_FALSE(at.path.empty()) << "ci/known-jax-bugs.json not found";
  return KnownJaxBugs::load(at.path);
}

TEST(KnownJaxBugs, TheShippedListMatchesTheDocumentedBugs) {
  const KnownJaxBugs bugs = shipped();
  // The details as the diagnostic oracle writes them (corpus-jax-probes/jax-bugs/README.md).
  const KnownJaxBug* b =
      bugs.match("jax-lower",
                 "expected rejected (RuntimeError at lowering: ...); got RuntimeError at lowering: "
                 "std::bad_cast");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->id, "cluster_collective_mask_bad_cast");
  EXPECT_EQ(b->corpus_case, "corpus-jax-probes/jax-bugs/cluster64_cluster_barrier_bad_cast.json");
  b = bugs.match("jax-ir",
                 "got VerificationError at verify: Pallas encountered an internal verification "
                 "error. Please file a bug at https://github.com/jax-ml/jax/issues/new/choose. "
                 "Error details: expected byte size to be either 4, 8 or 16.");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->id, "sm80_cp_async_transfer_size");
  EXPECT_EQ(b->jax, (std::vector<std::string>{"0.11.2", "0.12.0.1"}));
  // The cluster-launch-control bug, as jax-lower reports it (its script,
  // corpus-jax-probes/jax-bugs/clc_uint32_result_verification_error.py, shows the message).
  b = bugs.match("jax-lower",
                 "got VerificationError at verify: Pallas encountered an internal verification "
                 "error. Please file a bug at https://github.com/jax-ml/jax/issues/new/choose. "
                 "Error details: 'mosaic_gpu.try_cluster_cancel' op operand #0 must be 1D memref "
                 "of 8-bit signless integer values, but got 'memref<4xi32, "
                 "#gpu.address_space<workgroup>>'");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->id, "clc_uint32_result_verification_error");
  EXPECT_EQ(bugs.match("jax-interpret",
                       "'mosaic_gpu.try_cluster_cancel' op operand #0 must be 1D "
                       "memref of 8-bit"),
            nullptr);
}

TEST(KnownJaxBugs, OnlyOnTheListedExecutorsAndMessages) {
  const KnownJaxBugs bugs = shipped();
  EXPECT_EQ(bugs.match("jax-interpret", "got RuntimeError: std::bad_cast"), nullptr);
  EXPECT_EQ(bugs.match("sim", "got RuntimeError: std::bad_cast"), nullptr);
  EXPECT_EQ(bugs.match("jax-lower", "expected message \"a\"; got \"b\""), nullptr);
}

TEST(KnownJaxBugs, TheReasonNamesIdReleasesCaseAndLink) {
  const KnownJaxBugs bugs = shipped();
  const KnownJaxBug* b = bugs.match("jax-lower", "std::bad_cast");
  ASSERT_NE(b, nullptr);
  const std::string r = b->reason();
  EXPECT_EQ(r.rfind("known JAX bug cluster_collective_mask_bad_cast (JAX 0.11.2, 0.12.0.1): ", 0),
            0U)
      << r;
  EXPECT_NE(r.find("corpus-jax-probes/jax-bugs/README.md"), std::string::npos) << r;
}

std::string refusal(const std::string& text) {
  char path[] = "/tmp/collfuzz-known-bugs-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << text;
  std::string what;
  try {
    KnownJaxBugs::load(path);
  } catch (const InputError& e) {
    what = e.what();
  }
  std::filesystem::remove(path);
  return what;
}

TEST(KnownJaxBugs, AMalformedListIsRefusedNamingTheField) {
  const std::string entry =
      R"("id": "a", "summary": "s", "executors": ["jax-lower"], "jax": ["0.11.2"], "case": "c", "link": "l")";
  EXPECT_NE(refusal(R"({"format": 1, "bugs": [{)" + entry + R"(, "pattern": "("}]})")
                .find("bugs[0].pattern"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"format": 1, "bugs": [{)" + entry + R"(, "pattern": ""}]})")
                .find("bugs[0].pattern"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"format": 1, "bugs": [{)" + entry + R"(, "pattern": "x"}, {)" + entry +
                    R"(, "pattern": "y"}]})")
                .find("bugs[1].id"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"format": 1, "bugs": [{"id": "a"}]})").find("bugs[0]"), std::string::npos);
  EXPECT_NE(refusal(R"({"format": 2, "bugs": []})").find("format"), std::string::npos);
}

}  // namespace
}  // namespace collfuzz
