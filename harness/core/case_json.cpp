// The case format's entry points (case_json.h): reading a case (case_parser.h), renumbering its
// op paths, loading a case file, and the names of the format's enums.

#include "harness/core/case_json.h"

#include "harness/core/case_json_fields.h"
#include "harness/core/case_parser.h"
#include "harness/core/errors.h"
#include "harness/core/json_reader.h"
#include "harness/core/scratch_shapes.h"

namespace collfuzz {

using nlohmann::json;
using namespace case_json;

namespace {

void renumber(Body& body, const std::string& path) {
  for (std::size_t i = 0; i < body.size(); ++i) {
    Op& op = body[i];
    op.path = jr::index_path(path, i);
    if (Body* b = nested_body(op)) renumber(*b, op.path + ".body");
  }
}

}  // namespace

Case case_from_json(const json& j) {
  if (!has_scratch_shapes(j)) return CaseParser().parse(j);
  try {  // scratch_shapes: a run_scoped around the program (scratch_shapes.h)
    Case c = CaseParser().parse(without_scratch_shapes(j));
    std::get<RunScoped>(c.program.front().v).scratch_shapes = true;
    return c;
  } catch (const InputError& e) {
    const std::string message = std::string(e.what()).substr(e.path().size() + 2);
    throw InputError(scratch_shapes_source_path(e.path()), message);
  }
}

void renumber_paths(Case& c) { renumber(c.program, "$.program"); }

Case load_case_file(const std::filesystem::path& file, json* expect) {
  const json j = load_json_file(file);
  try {
    Case c = case_from_json(j);
    if (expect) *expect = j.is_object() && j.contains("expect") ? j["expect"] : json();
    return c;
  } catch (const InputError& e) {
    throw InputError(file.string() + ":" + e.path(),
                     std::string(e.what()).substr(e.path().size() + 2));
  }
}

// ---------------------------------------------------------------------------------------------

const char* to_string(Arch a) { return name_of(a, kArchs); }
const char* to_string(Semantics s) { return name_of(s, kSemantics); }
const char* to_string(Entry e) { return name_of(e, kEntries); }
const char* to_string(Profile p) { return name_of(p, kProfiles); }
const char* to_string(AllocKind k) { return name_of(k, kAllocKinds); }
const char* to_string(OobMode m) { return name_of(m, kOobModes); }
const char* to_string(ReductionOp op) { return name_of(op, kReductionOps); }
const char* to_string(FillPattern p) { return name_of(p, kPatterns); }
const char* to_string(CmpOp op) { return name_of(op, kCmpOps); }

const Body* nested_body(const Op& op) {
  if (const auto* rs = std::get_if<RunScoped>(&op.v)) return &rs->body;
  if (const auto* w = std::get_if<When>(&op.v)) return &w->body;
  if (const auto* l = std::get_if<Loop>(&op.v)) return &l->body;
  if (const auto* wm = std::get_if<WarpMap>(&op.v)) return &wm->body;
  return nullptr;
}

Body* nested_body(Op& op) { return const_cast<Body*>(nested_body(std::as_const(op))); }

int arch_major(Arch a) {
  switch (a) {
    case Arch::kSm80:
      return 8;
    case Arch::kSm90a:
      return 9;
    case Arch::kSm100a:
      return 10;
  }
  return 0;
}

std::int64_t element_count(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

}  // namespace collfuzz
