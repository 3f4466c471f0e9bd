// The worker's protocol lines: the hello, single and batch requests, cases that do not parse,
// bad requests, and an unavailable worker that still answers every request.
#include "gpu/worker_protocol.h"

#include <gtest/gtest.h>

#include "harness/core/case_json.h"
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
  const json r = json::parse(handle_request(line, WorkerHello{}, echo(calls, last)));
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
                                            WorkerHello{}, echo(calls, last)));
  EXPECT_EQ(r["id"], 3);
  EXPECT_EQ(r["outcome"]["kind"], "completed");
  EXPECT_FALSE(r.contains("outcomes"));
}

TEST(WorkerProtocol, ACaseThatDoesNotParseIsACrashOfItsOwn) {
  int calls = 0;
  std::size_t last = 0;
  const std::string line = R"({"id": 1, "cases": [{"format": 1}, )" + case_text("ok") + "]}";
  const json r = json::parse(handle_request(line, WorkerHello{}, echo(calls, last)));
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
  EXPECT_EQ(handle_request("   ", WorkerHello{}, run), "");
  json r = json::parse(handle_request("not json", WorkerHello{}, run));
  EXPECT_TRUE(r["id"].is_null());
  EXPECT_EQ(r["outcome"]["kind"], "crash");
  r = json::parse(handle_request(R"({"id": 4})", WorkerHello{}, run));
  EXPECT_EQ(r["id"], 4);
  EXPECT_EQ(r["outcome"]["kind"], "crash");
  r = json::parse(handle_request(R"({"id": "x", "case": {}})", WorkerHello{}, run));
  EXPECT_EQ(r["outcome"]["kind"], "crash");
  EXPECT_EQ(calls, 0);
}

TEST(WorkerProtocol, AnUnavailableWorkerAnswersUnavailable) {
  int calls = 0;
  std::size_t last = 0;
  WorkerHello hello;
  hello.unavailable = "no CUDA device (cudaErrorNoDevice)";
  const json r = json::parse(
      handle_request(R"({"id": 9, "cases": [)" + case_text("a") + "]}", hello, echo(calls, last)));
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
                     WorkerHello{}, run));
  EXPECT_EQ(r["outcomes"][0]["kind"], "crash");
  EXPECT_NE(r["outcomes"][1]["reason"].get<std::string>().find("boom"), std::string::npos);
}

}  // namespace
}  // namespace collfuzz::gpu
