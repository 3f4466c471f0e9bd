// Outcomes round-trip through JSON; hand-written regions resolve against the case's inputs.
#include <gtest/gtest.h>

#include "harness/core/errors.h"
#include "harness/core/fill.h"
#include "harness/core/outcome_json.h"
#include "tests/core/test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;

TEST(OutcomeJson, RegionsResolveToInputSlices) {
  const Case c = testing::parse(testing::minimal_case_json());
  const json expect = json::parse(R"({"kind": "completed", "ctas": [{"rank": 0, "buffers": [
      {"alloc": "dst", "regions": [{"at": [0, 0], "from": {"input": "x", "index": [{"start": 64, "size": 64}]}}]}]}]})");
  const Outcome o = outcome_from_json(expect, c, "$");
  ASSERT_EQ(o.ctas.size(), 1u);
  const auto& bytes = o.ctas[0].buffers[0].bytes;
  ASSERT_EQ(bytes.size(), 128u * 64u * 4u);
  // Element (0, 0) holds x[64, 0] = iota value 64*64 + 1; rows 64.. keep the sentinel.
  EXPECT_EQ(load_element(bytes, DType::kFloat32, 0), fill_element_bits(c.inputs[0], 64 * 64));
  EXPECT_EQ(bytes[64 * 64 * 4], kSmemSentinel);
}

TEST(OutcomeJson, RoundTrip) {
  const Case c = testing::parse(testing::minimal_case_json());
  Outcome o;
  o.kind = OutcomeKind::kRejected;
  o.diagnostic = Diagnostic{"lower", "ValueError", "msg", "copy.dtype_mismatch", "$.program[0]"};
  const Outcome back = outcome_from_json(outcome_to_json(o), c, "$");
  EXPECT_EQ(back.kind, OutcomeKind::kRejected);
  EXPECT_EQ(back.diagnostic->rule, "copy.dtype_mismatch");
  EXPECT_EQ(back.diagnostic->op, "$.program[0]");
}

TEST(OutcomeJson, TracebackRoundTripsAndIsBounded) {
  const Case c = testing::parse(testing::minimal_case_json());
  Outcome o;
  o.kind = OutcomeKind::kCrash;
  o.reason = "adapter error";
  o.traceback = "  File \"x.py\", line 1, in f\nValueError: boom\n";
  EXPECT_EQ(outcome_from_json(outcome_to_json(o), c, "$").traceback, o.traceback);
  EXPECT_FALSE(outcome_to_json(Outcome{}).contains("traceback"));  // optional: absent when empty
  json big = outcome_to_json(o);
  big["traceback"] = std::string(kMaxTracebackBytes + 1, 'x');
  EXPECT_THROW(outcome_from_json(big, c, "$"), InputError);
  big["traceback"] = 7;
  EXPECT_THROW(outcome_from_json(big, c, "$"), InputError);
}

TEST(OutcomeJson, BadDigestIsReported) {
  const Case c = testing::parse(testing::minimal_case_json());
  const json expect = json::parse(R"({"kind": "completed", "ctas": [{"rank": 0, "buffers": [
      {"alloc": "dst", "regions": [], "digest": "fnv1a64:0000000000000000"}]}]})");
  EXPECT_THROW(outcome_from_json(expect, c, "$"), InputError);
}

}  // namespace
}  // namespace collfuzz
