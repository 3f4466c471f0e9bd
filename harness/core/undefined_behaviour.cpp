#include "harness/core/undefined_behaviour.h"

#include <array>

#include "harness/core/errors.h"
#include "harness/core/json_reader.h"

namespace collfuzz {
namespace {

constexpr std::array kTable = {
#define COLLFUZZ_UNDEFINED(Enum, name, id, source, summary, fix) \
  UndefinedBehaviourInfo{UndefinedBehaviour::Enum, name, id, source, summary, fix},
#include "harness/core/undefined_behaviour.def"
#undef COLLFUZZ_UNDEFINED
};

}  // namespace

std::span<const UndefinedBehaviourInfo> all_undefined_behaviours() { return kTable; }

const UndefinedBehaviourInfo& undefined_behaviour_info(UndefinedBehaviour code) {
  return kTable[static_cast<std::size_t>(code)];
}

const char* to_string(UndefinedBehaviour code) {
  return undefined_behaviour_info(code).name.data();
}

std::optional<UndefinedBehaviour> parse_undefined_behaviour(std::string_view s) {
  for (const auto& u : kTable) {
    if (u.name == s || u.id == s) return u.code;
  }
  return std::nullopt;
}

nlohmann::json undefined_record_to_json(const UndefinedRecord& u) {
  nlohmann::json j{{"code", to_string(u.code)}};
  if (!u.op.empty()) j["op"] = u.op;
  if (u.cta) j["cta"] = *u.cta;
  if (!u.detail.empty()) j["detail"] = u.detail;
  if (!u.also.empty()) {
    nlohmann::json also = nlohmann::json::array();
    for (const UndefinedBehaviour c : u.also) also.push_back(to_string(c));
    j["also"] = std::move(also);
  }
  return j;
}

UndefinedRecord undefined_record_from_json(const nlohmann::json& j, const std::string& path) {
  jr::object(j, path, {"code", "op", "cta", "detail", "also"});
  UndefinedRecord u;
  const auto code_at = [](const nlohmann::json& v, const std::string& p) {
    const std::string& code = jr::string(v, p, 128);
    const auto parsed = parse_undefined_behaviour(code);
    if (!parsed) {
      std::string known;
      for (const auto& info : kTable) known += (known.empty() ? "" : ", ") + std::string(info.name);
      throw InputError(p,
                       "unknown undefined-behaviour code \"" + code + "\" (known: " + known + ")");
    }
    return *parsed;
  };
  u.code = code_at(jr::required(j, path, "code"), path + ".code");
  if (const auto* also = jr::member(j, "also")) {
    jr::array(*also, path + ".also", kTable.size());
    for (std::size_t k = 0; k < also->size(); ++k)
      u.also.push_back(code_at((*also)[k], path + ".also[" + std::to_string(k) + "]"));
  }
  if (const auto* op = jr::member(j, "op")) u.op = jr::string(*op, path + ".op", 512);
  if (const auto* cta = jr::member(j, "cta")) u.cta = jr::integer(*cta, path + ".cta", 0, 63);
  if (const auto* d = jr::member(j, "detail")) u.detail = jr::string(*d, path + ".detail", 4096);
  return u;
}

std::string undefined_behaviours_markdown() {
  std::string out = "| id | code | what | source | fix |\n|---|---|---|---|---|\n";
  for (const auto& u : kTable) {
    out += "| `" + std::string(u.id) + "` | `" + std::string(u.name) + "` | " +
           std::string(u.summary) + " | " + std::string(u.source) + " | " + std::string(u.fix) +
           " |\n";
  }
  return out;
}

}  // namespace collfuzz
