// The case parser's contract: strict, with the JSON path of the first problem, and sizes checked
// before anything is allocated.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/core/bounded_json_reader.h"
#include "harness/core/errors.h"
#include "tests/core/test_util.h"

namespace collfuzz {
namespace {

using nlohmann::json;
using testing::minimal_case_json;

// The InputError's path for a case built from `j`, or "" if it parses.
std::string error_path(const json& j) {
  try {
    case_from_json(j);
  } catch (const InputError& e) {
    return e.path();
  }
  return "";
}

std::string error_message(const json& j) {
  try {
    case_from_json(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CaseParser, MinimalCaseParses) {
  const Case c = testing::parse(minimal_case_json());
  EXPECT_EQ(c.name, "t");
  ASSERT_EQ(c.program.size(), 1u);
  const auto& rs = std::get<RunScoped>(c.program[0].v);
  EXPECT_EQ(rs.allocs.size(), 2u);
  EXPECT_EQ(rs.body[0].path, "$.program[0].body[0]");
  EXPECT_EQ(c.target.semantics, Semantics::kLane);
  EXPECT_EQ(c.target.profile, Profile::kMosaic);  // the default
}

TEST(CaseParser, RoundTripsThroughJson) {
  json j = minimal_case_json();
  j["program"][0]["body"][0]["collective_axes"] = {"x"};
  j["program"][0]["body"][0]["leader_tracked"] = {{"partitioned", 1}};
  j["program"][0]["body"][0]["predicate"] = {{"axis", "x"}, {"eq", 0}};
  const Case a = testing::parse(j);
  const Case b = testing::parse(case_to_json(a));
  EXPECT_EQ(case_to_json(a), case_to_json(b));
  const auto& cp = std::get<CopyGmemToSmem>(std::get<RunScoped>(b.program[0].v).body[0].v);
  EXPECT_EQ(cp.leader_tracked, LeaderTracked::kPartitioned);
  EXPECT_EQ(cp.partition_axis, 1);
  ASSERT_TRUE(cp.predicate.has_value());
  EXPECT_EQ(cp.predicate->axis, "x");
}

TEST(CaseParser, MalformedJsonNamesTheFile) {
  const auto dir = std::filesystem::temp_directory_path() / "collfuzz_parser_test";
  std::filesystem::create_directories(dir);
  const auto file = dir / "broken.json";
  { std::ofstream(file) << "{\"format\": 1, \"name\": "; }
  try {
    load_case_file(file);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
    EXPECT_NE(e.path().find("broken.json"), std::string::npos);
  }
}

TEST(CaseParser, MissingFieldsAreNamed) {
  json j = minimal_case_json();
  j.erase("mesh");
  EXPECT_EQ(error_path(j), "$.mesh");
  j = minimal_case_json();
  j["target"].erase("arch");
  EXPECT_EQ(error_path(j), "$.target.arch");
  j = minimal_case_json();
  j["program"][0]["body"][0].erase("dst");
  EXPECT_EQ(error_path(j), "$.program[0].body[0].dst");
}

TEST(CaseParser, UnknownFieldsAreRejected) {
  json j = minimal_case_json();
  j["program"][0]["body"][0]["colective_axes"] = {"x"};
  EXPECT_EQ(error_path(j), "$.program[0].body[0].colective_axes");
  j = minimal_case_json();
  j["mesh"]["clusters"] = {2};
  EXPECT_EQ(error_path(j), "$.mesh.clusters");
}

TEST(CaseParser, WrongTypesAreRejected) {
  json j = minimal_case_json();
  j["mesh"]["cluster"] = {"2"};
  EXPECT_EQ(error_path(j), "$.mesh.cluster[0]");
  j = minimal_case_json();
  j["inputs"][0]["shape"] = {128.5, 64};
  EXPECT_EQ(error_path(j), "$.inputs[0].shape[0]");
  j = minimal_case_json();
  j["program"][0]["allocs"][1]["num_arrivals"] = true;
  EXPECT_EQ(error_path(j), "$.program[0].allocs[1].num_arrivals");
}

TEST(CaseParser, NegativeZeroAndHugeDimsAreRejected) {
  for (const auto& bad : {json(-1), json(0), json(std::int64_t{1} << 40)}) {
    json j = minimal_case_json();
    j["inputs"][0]["shape"][1] = bad;
    EXPECT_EQ(error_path(j), "$.inputs[0].shape[1]") << bad;
  }
  json j = minimal_case_json();
  j["inputs"][0]["shape"] = json::array();
  EXPECT_EQ(error_path(j), "$.inputs[0].shape");
}

// The fields that need at least 1, each given 0 in a case file's text: nlohmann reads a 0 from text
// as an unsigned integer (json(0) in memory is signed), which the range check once let through.
TEST(CaseParser, ZerosReadFromTextAreRefusedWhereAFieldNeedsOne) {
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"/format", "$.format"},
      {"/mesh/cluster/0", "$.mesh.cluster[0]"},
      {"/inputs/0/shape/1", "$.inputs[0].shape[1]"},
      {"/program/0/allocs/0/shape/0", "$.program[0].allocs[0].shape[0]"},
      {"/program/0/allocs/1/num_barriers", "$.program[0].allocs[1].num_barriers"},
  };
  for (const auto& [pointer, path] : fields) {
    json j = minimal_case_json();
    j[json::json_pointer(pointer)] = "ZERO";
    std::string text = j.dump();
    text.replace(text.find("\"ZERO\""), 6, "0");
    EXPECT_EQ(error_path(parse_json_bounded(text, "")), path) << pointer;
  }
  json j = minimal_case_json();
  j["mesh"] = parse_json_bounded(R"({"grid": [0]})", "");
  EXPECT_EQ(error_path(j), "$.mesh.grid[0]");
  j["mesh"] = parse_json_bounded(R"({"num_threads": 0, "thread_name": "t"})", "");
  EXPECT_EQ(error_path(j), "$.mesh.num_threads");
}

TEST(CaseParser, OverflowingProductsAreRefusedBeforeAllocation) {
  json j = minimal_case_json();
  // Each dim is legal; the product overflows 64 bits.
  j["inputs"][0]["shape"] = {2147483647, 2147483647, 2147483647};
  EXPECT_EQ(error_path(j), "$.inputs[0].shape");
  EXPECT_NE(error_message(j).find("limit"), std::string::npos);
  j = minimal_case_json();
  j["program"][0]["allocs"][0]["shape"] = {65536, 65536};
  EXPECT_EQ(error_path(j), "$.program[0].allocs[0].shape");
  j = minimal_case_json();
  j["mesh"]["cluster"] = {8, 8, 2};
  j["mesh"]["cluster_names"] = {"a", "b", "c"};
  EXPECT_EQ(error_path(j), "$.mesh.cluster");
  // Grid dims within range whose product would overflow the reference's launch arithmetic.
  j = minimal_case_json();
  j["mesh"]["grid"] = {2147483647, 2147483647, 2147483647, 2147483647, 1, 1};
  EXPECT_EQ(error_path(j), "$.mesh.grid");
  j["mesh"]["grid"] = {65535, 65535, 256};  // 2^40 - 2^25 + 256 blocks: allowed
  EXPECT_EQ(error_path(j), "");
}

TEST(CaseParser, UnknownNamesAreRejected) {
  json j = minimal_case_json();
  j["program"][0]["body"][0]["src"]["input"] = "y";
  EXPECT_EQ(error_path(j), "$.program[0].body[0].src.input");
  j = minimal_case_json();
  j["program"][0]["body"][1]["barrier"]["alloc"] = "nope";
  EXPECT_EQ(error_path(j), "$.program[0].body[1].barrier.alloc");
  j = minimal_case_json();
  j["program"][0]["body"][0]["oob_mode"] = "sometimes";
  EXPECT_EQ(error_path(j), "$.program[0].body[0].oob_mode");
  j = minimal_case_json();
  j["inputs"][0]["dtype"] = "float128";
  EXPECT_EQ(error_path(j), "$.inputs[0].dtype");
  j = minimal_case_json();
  j["program"][0]["body"][0]["op"] = "copy";
  EXPECT_EQ(error_path(j), "$.program[0].body[0].op");
}

TEST(CaseParser, AxisNamesMustBeIdentifiers) {
  json j = minimal_case_json();
  j["program"][0]["body"][0]["collective_axes"] = {"x", "not a name"};
  EXPECT_EQ(error_path(j), "$.program[0].body[0].collective_axes[1]");
  // Unknown axis *names* in collective_axes are legal input: they exercise JAX's checks.
  j = minimal_case_json();
  j["program"][0]["body"][0]["collective_axes"] = {"x", "unknown_axis"};
  EXPECT_EQ(error_path(j), "");
}

TEST(CaseParser, ConditionsUseClusterOrThreadAxes) {
  json j = minimal_case_json();
  j["program"][0]["body"][1] = {
      {"op", "when"}, {"cond", {{"axis", "q"}, {"eq", 0}}}, {"body", json::array()}};
  EXPECT_EQ(error_path(j), "$.program[0].body[1].cond.axis");
  j["program"][0]["body"][1]["cond"] = {{"axis", "x"}, {"eq", 0}, {"ne", 1}};
  EXPECT_EQ(error_path(j), "$.program[0].body[1].cond");
}

TEST(CaseParser, AllocationsAreScoped) {
  json j = minimal_case_json();
  j["program"].push_back({{"op", "barrier_wait"}, {"barrier", {{"alloc", "bar"}}}});
  EXPECT_EQ(error_path(j), "$.program[1].barrier.alloc");
  j = minimal_case_json();
  j["program"][0]["allocs"][1]["name"] = "dst";
  EXPECT_EQ(error_path(j), "$.program[0].allocs[1].name");
}

TEST(CaseParser, StaticSlicesStayInBounds) {
  json j = minimal_case_json();
  j["program"][0]["body"][0]["src"]["index"] = {{{"start", 100}, {"size", 64}}};
  EXPECT_EQ(error_path(j), "$.program[0].body[0].src.index[0]");
  j["program"][0]["body"][0]["src"]["index"] = {
      {{"start", {{"axis", "x"}, {"mul", 100}}}, {"size", 64}}};
  EXPECT_EQ(error_path(j), "");
}

TEST(CaseParser, DeepNestingIsBounded) {
  json j = minimal_case_json();
  json body = json::array();
  for (int i = 0; i < 40; ++i)
    body = json::array({{{"op", "when"}, {"cond", true}, {"body", body}}});
  j["program"] = body;
  EXPECT_NE(error_path(j), "");
}

}  // namespace
}  // namespace collfuzz
