// The worker's protocol lines: the hello, single and batch requests, cases that do not parse,
// bad requests, and an unavailable worker that still answers every request.
#include "gpu/worker_protocol.h"

#include <gtest/gtest.h>

#include "gpu/framed_outcome.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "tests/gpu/gpu_test_util.h"

namespace collfuzz::gpu {
namespace {

using nlohmann::json;

RunCases echo(int& calls, std::size_t& last_batch) {
  return [&calls, &last_batch](const std::vector<Case>& cases) {
    ++calls;
    last_batch = cases.size();
    std::vector<Outcome> out;
    for (const Case& c : cases) {
      Outcome o;
      o.kind = OutcomeKind::kCompleted;
      o.executor = "cuda";
      o.info["name"] = c.name;
      out.push_back(o);
    }
    return out;
  };
}

std::string case_text(const std::string& name) {
  return case_to_json(gputest::multicast_case(2, 64, 64, R"("x")", name)).dump();
}

TEST(WorkerProtocol, HelloSaysBatchAndInfo) {
  WorkerHello hello;
  hello.info["device"] = "NVIDIA H200";
  const json h = json::parse(hello_line(hello));
  EXPECT_EQ(h["hello"], "collfuzz-executor/1");
  EXPECT_EQ(h["name"], "cuda");
  EXPECT_EQ(h["profile"], "mosaic");
  EXPECT_TRUE(h["batch"].get<bool>());
  EXPECT_EQ(h["info"]["device"], "NVIDIA H200");
  EXPECT_FALSE(h.contains("unavailable"));
  hello.unavailable = "no CUDA device";
  EXPECT_EQ(json::parse(hello_line(hello))["unavailable"], "no CUDA device");
}

TEST(WorkerProtocol, ABatchRequestRunsOnceAndAnswersInOrder) {
  int calls = 0;
  std::size_t last = 0;
  const std::string line = R"({"id": 7, "cases": [)" + case_text("a") + "," + case_text("b") + "]}";
  const json r = json::parse(handle_request(line, WorkerHello{}, echo(calls, last)).line);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(last, 2u);
  EXPECT_EQ(r["id"], 7);
  ASSERT_EQ(r["outcomes"].size(), 2u);
  EXPECT_EQ(r["outcomes"][0]["info"]["name"], "a");
  EXPECT_EQ(r["outcomes"][1]["info"]["name"], "b");
  EXPECT_TRUE(r["outcomes"][1]["info"].contains("elapsed_ms"));
}

TEST(WorkerProtocol, ASingleRequestIsTheBaseProtocol) {
  int calls = 0;
  std::size_t last = 0;
  const json r = json::parse(handle_request(R"({"id": 3, "case": )" + case_text("one") + "}",
                                            WorkerHello{}, echo(calls, last))
                                 .line);
  EXPECT_EQ(r["id"], 3);
  EXPECT_EQ(r["outcome"]["kind"], "completed");
  EXPECT_FALSE(r.contains("outcomes"));
}

TEST(WorkerProtocol, ACaseThatDoesNotParseIsACrashOfItsOwn) {
  int calls = 0;
  std::size_t last = 0;
  const std::string line = R"({"id": 1, "cases": [{"format": 1}, )" + case_text("ok") + "]}";
  const json r = json::parse(handle_request(line, WorkerHello{}, echo(calls, last)).line);
  ASSERT_EQ(r["outcomes"].size(), 2u);
  EXPECT_EQ(r["outcomes"][0]["kind"], "crash");
  EXPECT_NE(r["outcomes"][0]["reason"].get<std::string>().find("bad case"), std::string::npos);
  EXPECT_EQ(r["outcomes"][1]["kind"], "completed");
  EXPECT_EQ(last, 1u);
}

TEST(WorkerProtocol, BadRequestsAndBlankLines) {
  int calls = 0;
  std::size_t last = 0;
  const RunCases run = echo(calls, last);
  EXPECT_EQ(handle_request("   ", WorkerHello{}, run).line, "");
  json r = json::parse(handle_request("not json", WorkerHello{}, run).line);
  EXPECT_TRUE(r["id"].is_null());
  EXPECT_EQ(r["outcome"]["kind"], "crash");
  r = json::parse(handle_request(R"({"id": 4})", WorkerHello{}, run).line);
  EXPECT_EQ(r["id"], 4);
  EXPECT_EQ(r["outcome"]["kind"], "crash");
  r = json::parse(handle_request(R"({"id": "x", "case": {}})", WorkerHello{}, run).line);
  EXPECT_EQ(r["outcome"]["kind"], "crash");
  EXPECT_EQ(calls, 0);
}

TEST(WorkerProtocol, AnUnavailableWorkerAnswersUnavailable) {
  int calls = 0;
  std::size_t last = 0;
  WorkerHello hello;
  hello.unavailable = "no CUDA device (cudaErrorNoDevice)";
  const json r = json::parse(
      handle_request(R"({"id": 9, "cases": [)" + case_text("a") + "]}", hello, echo(calls, last))
          .line);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(r["outcomes"][0]["kind"], "unavailable");
  EXPECT_EQ(r["outcomes"][0]["reason"], "no CUDA device (cudaErrorNoDevice)");
}

TEST(WorkerProtocol, AnExceptionInTheRunIsACrashForEachCase) {
  const RunCases run = [](const std::vector<Case>&) -> std::vector<Outcome> {
    throw std::runtime_error("boom");
  };
  const json r = json::parse(
      handle_request(R"({"id": 2, "cases": [)" + case_text("a") + "," + case_text("b") + "]}",
                     WorkerHello{}, run)
          .line);
  EXPECT_EQ(r["outcomes"][0]["kind"], "crash");
  EXPECT_NE(r["outcomes"][1]["reason"].get<std::string>().find("boom"), std::string::npos);
}

TEST(WorkerProtocol, BinaryFramingCarriesTheBytesAfterTheLine) {
  const Case c = gputest::multicast_case(2, 8, 64, R"("x")", "framed");
  Outcome o = gputest::run_emulated({c}).front();
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << o.reason;
  o.ctas[1].buffers[0].undefined = true;
  const RunCases run = [&o](const std::vector<Case>&) { return std::vector<Outcome>{o}; };
  const WorkerResponse r =
      handle_request(R"({"id": 5, "binary": true, "cases": [)" + case_to_json(c).dump() + "]}",
                     WorkerHello{}, run);
  const json line = json::parse(r.line);
  EXPECT_EQ(line["binary_bytes"].get<std::size_t>(), r.blob.size());
  EXPECT_EQ(r.blob.size(), 8u * 64 * 4);  // the undefined buffer's bytes stay home
  EXPECT_EQ(r.line.find("\"hex\""), std::string::npos);
  const Outcome back = outcome_from_framed_json(line["outcomes"][0], c, r.blob, "t");
  ASSERT_EQ(back.ctas.size(), 2u);
  EXPECT_EQ(back.ctas[0].buffers[0].bytes, o.ctas[0].buffers[0].bytes);
  EXPECT_TRUE(back.ctas[0].buffers[0].observed);
  EXPECT_TRUE(back.ctas[1].buffers[0].undefined);
  EXPECT_EQ(back.ctas[0].waits.size(), 1u);
  EXPECT_THROW(outcome_from_framed_json(line["outcomes"][0], c, r.blob.substr(1), "t"), InputError);
}

TEST(WorkerProtocol, FramedOutputsKeepTheirWrittenRanges) {
  const Case c = gputest::parse_case(R"({"format": 1, "name": "out", "mesh": {},
      "target": {"arch": "sm_90a", "semantics": "lane"},
      "inputs": [{"name": "x", "shape": [8, 64], "dtype": "float32"}],
      "outputs": [{"name": "y", "shape": [2, 8, 64], "dtype": "float32"}],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "dst", "kind": "smem", "shape": [8, 64], "dtype": "float32"},
          {"name": "bar", "kind": "barrier"}],
        "body": [
          {"op": "copy_gmem_to_smem", "src": {"input": "x"}, "dst": {"alloc": "dst"},
           "barrier": {"alloc": "bar"}},
          {"op": "barrier_wait", "barrier": {"alloc": "bar"}},
          {"op": "copy_smem_to_gmem", "src": {"alloc": "dst"}, "dst": {"output": "y", "index": [1]}}]}]})");
  Outcome o = gputest::run_emulated({c}).front();
  ASSERT_EQ(o.kind, OutcomeKind::kCompleted) << o.reason;
  ASSERT_EQ(o.outputs.size(), 1u);
  ASSERT_EQ(o.outputs[0].written.size(), 1u);
  EXPECT_EQ(o.outputs[0].written[0], (std::pair<std::int64_t, std::int64_t>{512, 1024}));
  const Outcome copy = o;
  std::string blob;
  const json j = outcome_to_framed_json(std::move(o), blob);
  const Outcome back = outcome_from_framed_json(j, c, blob, "t");
  ASSERT_EQ(back.outputs.size(), 1u);
  EXPECT_EQ(back.outputs[0].bytes, copy.outputs[0].bytes);
  EXPECT_EQ(back.outputs[0].written, copy.outputs[0].written);
  EXPECT_EQ(back.ctas[0].buffers[0].bytes, copy.ctas[0].buffers[0].bytes);
}

}  // namespace
}  // namespace collfuzz::gpu
