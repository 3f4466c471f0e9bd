// The case reader's and writer's shared pieces (case_json.h): the enum names of the format, axis
// names, shapes and dtypes. Internal to harness/core's case_json*.cpp and case_parser*.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "harness/core/case.h"

namespace collfuzz::case_json {

using nlohmann::json;

AxisName parse_axis_name(const json& j, const std::string& path);

AxisNames parse_axis_names(const json& j, const std::string& path);

json axis_name_to_json(const AxisName& a);

json axis_names_to_json(const AxisNames& names);

Shape parse_shape(const json& j, const std::string& path, std::size_t min_rank);

// Bytes of an array of `shape` and `dtype`, refusing anything over `max_bytes` before the
// product can overflow.
std::int64_t checked_bytes(const Shape& shape, DType dtype, std::int64_t max_bytes,
                           const std::string& path);

DType parse_dtype_field(const json& j, const std::string& path);

constexpr std::pair<std::string_view, Arch> kArchs[] = {
    {"sm_80", Arch::kSm80}, {"sm_90a", Arch::kSm90a}, {"sm_100a", Arch::kSm100a}};
constexpr std::pair<std::string_view, Semantics> kSemantics[] = {
    {"lane", Semantics::kLane}, {"warpgroup", Semantics::kWarpgroup}};
constexpr std::pair<std::string_view, Entry> kEntries[] = {{"kernel", Entry::kKernel},
                                                           {"pallas_call", Entry::kPallasCall}};
constexpr std::pair<std::string_view, Profile> kProfiles[] = {{"mosaic", Profile::kMosaic},
                                                              {"interpret", Profile::kInterpret}};
constexpr std::pair<std::string_view, FillPattern> kPatterns[] = {
    {"iota", FillPattern::kIota},         {"random", FillPattern::kRandom},
    {"constant", FillPattern::kConstant}, {"arange", FillPattern::kArange},
    {"values", FillPattern::kValues},     {"jax_random", FillPattern::kJaxRandom}};
constexpr std::pair<std::string_view, AllocKind> kAllocKinds[] = {
    {"smem", AllocKind::kSmem},
    {"barrier", AllocKind::kBarrier},
    {"cluster_barrier", AllocKind::kClusterBarrier},
    {"acc", AllocKind::kAcc},
    {"gmem", AllocKind::kGmem},
    {"semaphore", AllocKind::kSemaphore},
    {"tmem", AllocKind::kTmem}};
constexpr std::pair<std::string_view, SemaphoreKind> kSemaphoreKinds[] = {
    {"regular", SemaphoreKind::kRegular}, {"barrier", SemaphoreKind::kBarrier}};
constexpr std::pair<std::string_view, OobMode> kOobModes[] = {
    {"undefined", OobMode::kUndefined},
    {"promise_in_bounds", OobMode::kPromiseInBounds},
    {"zeros", OobMode::kZeros}};
constexpr std::pair<std::string_view, ReductionOp> kReductionOps[] = {
    {"add", ReductionOp::kAdd},   {"min", ReductionOp::kMin},   {"max", ReductionOp::kMax},
    {"inc", ReductionOp::kInc},   {"dec", ReductionOp::kDec},   {"and", ReductionOp::kAnd},
    {"or", ReductionOp::kOr},     {"xor", ReductionOp::kXor},   {"umin", ReductionOp::kUmin},
    {"umax", ReductionOp::kUmax}, {"smin", ReductionOp::kSmin}, {"smax", ReductionOp::kSmax}};
constexpr std::pair<std::string_view, CmpOp> kCmpOps[] = {{"eq", CmpOp::kEq}, {"ne", CmpOp::kNe},
                                                          {"lt", CmpOp::kLt}, {"le", CmpOp::kLe},
                                                          {"gt", CmpOp::kGt}, {"ge", CmpOp::kGe}};

template <typename Enum, std::size_t N>
const char* name_of(Enum v, const std::pair<std::string_view, Enum> (&options)[N]) {
  for (const auto& [name, value] : options) {
    if (value == v) return name.data();
  }
  return "?";
}

}  // namespace collfuzz::case_json
