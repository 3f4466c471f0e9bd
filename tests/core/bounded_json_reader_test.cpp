// The bounded JSON reader: every limit holds while reading, and every refusal is an InputError
// naming the source and the JSON path.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <unistd.h>

#include "harness/core/bounded_json_reader.h"
#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/json_reader.h"

namespace collfuzz {
namespace {

using nlohmann::json;

// The InputError of parsing `text`, as "path: message", or "" if it parses.
std::string error_of(const std::string& text, const JsonLimits& limits = {}) {
  try {
    parse_json_bounded(text, "in.json", limits);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string path_of(const std::string& text, const JsonLimits& limits = {}) {
  try {
    parse_json_bounded(text, "in.json", limits);
  } catch (const InputError& e) {
    return e.path();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(BoundedJsonReader, ReadsWhatNlohmannReads) {
  const std::string text =
      R"({"a": [1, -2, 3.5, "s", true, false, null, {"b": {}}, []], "c": "\u00e9\n",)"
      R"( "d": 18446744073709551615})";
  EXPECT_EQ(parse_json_bounded(text, "t"), json::parse(text));
  EXPECT_EQ(parse_json_bounded("  7 ", "t"), json(7));
  EXPECT_TRUE(parse_json_bounded("0", "t").is_number_unsigned());
}

TEST(BoundedJsonReader, DuplicateKeysAreRefusedByNameAndPath) {
  const std::string e = error_of(R"({"a": [{"x": 1}, {"b": 1, "b": 2}]})");
  EXPECT_TRUE(contains(e, "in.json:$.a[1].b: duplicate key \"b\"")) << e;
  EXPECT_EQ(path_of(R"({"format": 1, "format": 1})"), "in.json:$.format");
  // The same key in sibling objects is fine.
  EXPECT_EQ(error_of(R"([{"b": 1}, {"b": 2}])"), "");
}

TEST(BoundedJsonReader, NumbersBeyondADoubleAreBadInputWithAPath) {
  EXPECT_EQ(path_of(R"({"mesh": {"grid": [1, 1e400]}})"), "in.json:$.mesh.grid[1]");
  EXPECT_TRUE(contains(error_of("[1e400]"), "out of range")) << error_of("[1e400]");
  EXPECT_EQ(path_of("[-1e400]"), "in.json:$[0]");
  const std::string digits(100000, '7');
  const std::string e = error_of(R"({"format": )" + digits + "}");
  EXPECT_TRUE(contains(e, "in.json:$.format: the number 7777")) << e.substr(0, 300);
  EXPECT_LT(e.size(), 400u);  // the number is not echoed whole
}

TEST(BoundedJsonReader, IntegersBeyond64BitsAreOutOfRangeForTheFieldReaders) {
  const json j =
      parse_json_bounded(R"({"n": 18446744073709551616, "m": -9223372036854775809})", "t");
  try {
    jr::integer(j["n"], "$.n", 1, 10);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "$.n: value 1.8446744073709552e+19 is out of range [1, 10]"))
        << e.what();
  }
  EXPECT_THROW(jr::integer(j["m"], "$.m", -10, 10), InputError);
  EXPECT_THROW(jr::unsigned_integer(j["n"], "$.n"), InputError);
}

TEST(BoundedJsonReader, LowerBoundsHoldForIntegersReadFromText) {
  // nlohmann reads 0 from text as an unsigned integer: the reader's range check once tested only
  // the upper bound for those (a 0 dimension then reached the simulator).
  const json j = parse_json_bounded(R"({"zero": 0, "minus": -1, "big": 9223372036854775808})", "t");
  ASSERT_TRUE(j["zero"].is_number_unsigned());
  EXPECT_THROW(jr::integer(j["zero"], "$.zero", 1, 64), InputError);
  EXPECT_THROW(jr::integer(j["minus"], "$.minus", 0, 64), InputError);
  EXPECT_THROW(jr::integer(j["big"], "$.big", 0, std::numeric_limits<std::int64_t>::max()),
               InputError);
  EXPECT_EQ(jr::integer(j["zero"], "$.zero", 0, 0), 0);
}

TEST(BoundedJsonReader, DepthIsBounded) {
  JsonLimits limits;
  limits.max_depth = 4;
  EXPECT_EQ(error_of("[[[[1]]]]", limits), "");
  EXPECT_EQ(path_of("[[[[[1]]]]]", limits), "in.json:$[0][0][0][0]");
  // The default limit, against a hostile depth that nlohmann alone would build.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(contains(error_of(deep), "nested more than 64 levels")) << error_of(deep);
}

// The case format's own nesting limits (ops 16 deep, conditions 8 deep) fit the reader's depth.
TEST(BoundedJsonReader, TheDeepestLegalCaseFitsTheDepthLimit) {
  json cond = {{"axis", "x"}, {"eq", 0}};
  for (int d = 0; d < 8; ++d) cond = {{"all", json::array({cond})}};
  json body = json::array({{{"op", "when"}, {"cond", cond}, {"body", json::array()}}});
  for (int d = 0; d < 15; ++d) {
    body = json::array({{{"op", "when"}, {"cond", true}, {"body", body}}});
  }
  json c = {{"format", 1},
            {"name", "deep"},
            {"mesh", {{"cluster", {2}}, {"cluster_names", {"x"}}}},
            {"target", {{"arch", "sm_90a"}}},
            {"program", body}};
  EXPECT_NO_THROW(case_from_json(parse_json_bounded(c.dump(), "deep.json")));
  // One level more is refused by the case parser's limit, not by the reader's.
  c["program"] = json::array({{{"op", "when"}, {"cond", true}, {"body", body}}});
  try {
    case_from_json(parse_json_bounded(c.dump(), "deep.json"));
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "ops are nested more than 16 deep")) << e.what();
  }
}

TEST(BoundedJsonReader, ElementCountIsBounded) {
  JsonLimits limits;
  limits.max_elements = 5;
  EXPECT_EQ(error_of(R"({"a": [1, 2, 3]})", limits), "");  // 5 values
  EXPECT_EQ(path_of(R"({"a": [1, 2, 3, 4]})", limits), "in.json:$.a[3]");
  // The default limit: 2 million empty arrays (4 MB of text) stop at a million.
  std::string many = "[";
  for (int i = 0; i < 2'000'000; ++i) many += i ? ",[]" : "[]";
  many += "]";
  EXPECT_TRUE(contains(error_of(many), "more than 1000000 JSON values")) << error_of(many);
}

TEST(BoundedJsonReader, StringsAndKeysAreBounded) {
  JsonLimits limits;
  limits.max_string_bytes = 8;
  EXPECT_EQ(error_of(R"(["12345678"])", limits), "");
  EXPECT_EQ(path_of(R"({"s": ["x", "123456789"]})", limits), "in.json:$.s[1]");
  EXPECT_TRUE(contains(error_of(R"({"123456789": 1})", limits), "a key of 9 bytes"));
  // A number or a run of whitespace is bounded as a token too, before the lexer buffers it.
  EXPECT_TRUE(contains(error_of("[" + std::string(100, '1') + "]", limits), "longer than"));
  EXPECT_TRUE(contains(error_of("[1," + std::string(100, ' ') + "2]", limits), "longer than"));
}

TEST(BoundedJsonReader, SizeIsBoundedEvenWhenThePrefixIsComplete) {
  JsonLimits limits;
  limits.max_bytes = 16;
  EXPECT_EQ(error_of(R"({"a": [1, 2, 3]})", limits), "");  // 16 bytes
  EXPECT_TRUE(contains(error_of(R"({"a": [1, 2, 3]} )", limits), "larger than the limit of 16"));
  EXPECT_TRUE(contains(error_of("{}" + std::string(100, ' '), limits), "larger than"));
}

TEST(BoundedJsonReader, MalformedAndEmptyInputNamesTheSource) {
  EXPECT_TRUE(contains(error_of(""), "in.json: empty input")) << error_of("");
  EXPECT_TRUE(contains(error_of("{\"a\": [1, }"), "in.json:$.a[1]: malformed JSON"))
      << error_of("{\"a\": [1, }");
  EXPECT_TRUE(contains(error_of("{} {}"), "malformed JSON"));
  EXPECT_TRUE(contains(error_of("[\"\xff\"]"), "malformed JSON"));  // not UTF-8
}

class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("collfuzz-bjr-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

TEST(BoundedJsonReader, FilesAreStreamedAndNamed) {
  TempDir dir;
  const auto ok = dir.path() / "ok.json";
  std::ofstream(ok) << R"({"a": [1, 2]})";
  EXPECT_EQ(load_json_file(ok), json::parse(R"({"a": [1, 2]})"));
  const auto dup = dir.path() / "dup.json";
  std::ofstream(dup) << R"({"a": 1, "a": 2})";
  try {
    load_json_file(dup);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.path(), dup.string() + ":$.a");
  }
  EXPECT_THROW(load_json_file(dir.path() / "missing.json"), InputError);
  EXPECT_THROW(load_json_file(dir.path()), InputError);
  JsonLimits limits;
  limits.max_bytes = 8;
  EXPECT_THROW(load_json_file(ok, limits), InputError);
}

TEST(BoundedJsonReader, AStreamIsBoundedWhileReading) {
  // A stream (standard input, a pipe) has no size to check first: the count stops it.
  TempDir dir;
  const auto file = dir.path() / "spaces.json";
  std::ofstream(file) << "{}" << std::string(2 << 20, ' ');
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(file.c_str(), "rb"),
                                                           &std::fclose);
  ASSERT_TRUE(in);
  JsonLimits limits;
  limits.max_bytes = 1 << 20;
  try {
    parse_json_stream(in.get(), "<stdin>", limits);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "<stdin>: the input is larger than the limit of 1048576"))
        << e.what();
  }
}

}  // namespace
}  // namespace collfuzz
