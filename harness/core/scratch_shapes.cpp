#include "harness/core/scratch_shapes.h"

#include <string>

#include "harness/core/errors.h"
#include "harness/core/json_reader.h"

namespace collfuzz {

using nlohmann::json;

bool has_scratch_shapes(const json& j) { return j.is_object() && j.contains("scratch_shapes"); }

json without_scratch_shapes(const json& j) {
  const json& scratch = j.at("scratch_shapes");
  if (!scratch.is_array())
    throw InputError("$.scratch_shapes", std::string("expected an array of allocations, got ") +
                                             jr::type_name(scratch));
  json scope{{"op", "run_scoped"}};
  // plgpu.kernel: collective over the thread axis when the mesh has one; pallas_call: none.
  const json* target = jr::member(j, "target");
  const bool pallas_call = target && target->is_object() && target->contains("entry") &&
                           (*target)["entry"] == "pallas_call";
  const json* mesh = jr::member(j, "mesh");
  if (!pallas_call && mesh && mesh->is_object() && mesh->contains("thread_name") &&
      (*mesh)["thread_name"].is_string())
    scope["collective_axes"] = json::array({(*mesh)["thread_name"]});
  scope["allocs"] = scratch;
  const json* program = jr::member(j, "program");
  scope["body"] = program ? *program : json::array();
  json out = j;
  out.erase("scratch_shapes");
  out["program"] = json::array({scope});
  return out;
}

std::string scratch_shapes_source_path(const std::string& path) {
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"$.program[0].allocs", "$.scratch_shapes"},
        {"$.program[0].body", "$.program"}}) {
    if (path.compare(0, from.size(), from) == 0) return to + path.substr(from.size());
  }
  return path;
}

AxisNames scratch_shapes_axes(const Case& c) {
  if (c.target.entry == Entry::kPallasCall || !c.mesh.thread_name) return {};
  return {AxisName::plain(*c.mesh.thread_name)};
}

const RunScoped* written_as_scratch_shapes(const Case& c) {
  if (c.program.size() != 1) return nullptr;
  const auto* rs = std::get_if<RunScoped>(&c.program.front().v);
  if (!rs || !rs->scratch_shapes || rs->collective_axes != scratch_shapes_axes(c)) return nullptr;
  return rs;
}

}  // namespace collfuzz
