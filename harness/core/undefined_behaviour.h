// Undefined behaviour a run can meet (undefined_behaviour.def): a code that the reference's
// prediction and every executor's outcome carry (Outcome::undefined, kind "undefined"), so that the
// oracles compare codes, never reason strings.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace collfuzz {

enum class UndefinedBehaviour : std::uint8_t {
#define COLLFUZZ_UNDEFINED(Enum, ...) Enum,
#include "harness/core/undefined_behaviour.def"
#undef COLLFUZZ_UNDEFINED
};

struct UndefinedBehaviourInfo {
  UndefinedBehaviour code;
  std::string_view name;     // stable code, e.g. "multicast_outside_cluster"
  std::string_view id;       // the reference's rule-like id, e.g. "run.multicast.outside_cluster"
  std::string_view source;   // the PTX ISA section and the JAX code behind it
  std::string_view summary;  // what happens
  std::string_view fix;      // how to fix the kernel
};

std::span<const UndefinedBehaviourInfo> all_undefined_behaviours();
const UndefinedBehaviourInfo& undefined_behaviour_info(UndefinedBehaviour code);
const char* to_string(UndefinedBehaviour code);
// By code or by id; nullopt when neither names one.
std::optional<UndefinedBehaviour> parse_undefined_behaviour(std::string_view s);

// The undefined behaviour a run meets first (an outcome of kind "undefined"): its code, and where
// it happens when the executor knows (the op's JSON path, the CTA rank that issues it).
struct UndefinedRecord {
  UndefinedBehaviour code = UndefinedBehaviour::kMulticastOutsideCluster;
  std::string op;
  std::optional<std::int64_t> cta;
  std::string detail;  // human-readable; never compared
  // Other undefined behaviour that a run of another interleaving meets first (a prediction's
  // only: the warps of a warp_map run in any order, docs/outcome-format.md); an executor that
  // reports one of these agrees.
  std::vector<UndefinedBehaviour> also;
};

// {"code": ..., "op": ..., "cta": ..., "detail": ...} (docs/outcome-format.md); the parser throws
// InputError naming the field at `path`.
nlohmann::json undefined_record_to_json(const UndefinedRecord& u);
UndefinedRecord undefined_record_from_json(const nlohmann::json& j, const std::string& path);

// The table as Markdown (docs/rules.md embeds it; a test keeps the two in step).
std::string undefined_behaviours_markdown();

}  // namespace collfuzz
