#include "generators/axis_choice.h"

namespace collfuzz::generators {
namespace {

AxisNames all_cluster(const AxisEnvironment& env) {
  AxisNames out;
  for (const auto& a : env.cluster()) out.push_back(a.name);
  return out;
}

AxisName grid_or_unknown(const AxisEnvironment& env) {
  return env.grid().empty() ? AxisName::plain(kUnknownAxis) : env.grid().front().name;
}

AxisName thread_or_default(const AxisEnvironment& env) {
  return AxisName::plain(env.thread_name().value_or("wg"));
}

}  // namespace

std::optional<AxisNames> resolve_copy_axes(CopyAxes choice, std::uint32_t pick,
                                           const AxisEnvironment& env) {
  const AxisNames all = all_cluster(env);
  if (all.empty()) {
    // No cluster axis to choose from: the choices that need one fall back to an unknown name.
    switch (choice) {
      case CopyAxes::kAbsent:
        return std::nullopt;
      case CopyAxes::kEmpty:
        return AxisNames{};
      case CopyAxes::kThread:
        return AxisNames{thread_or_default(env)};
      case CopyAxes::kGrid:
      case CopyAxes::kWithGrid:
        return AxisNames{grid_or_unknown(env)};
      default:
        return AxisNames{AxisName::plain(kUnknownAxis)};
    }
  }
  const AxisName& one = all[pick % all.size()];
  switch (choice) {
    case CopyAxes::kAbsent:
      return std::nullopt;
    case CopyAxes::kEmpty:
      return AxisNames{};
    case CopyAxes::kOne:
      return AxisNames{one};
    case CopyAxes::kAll:
      return all;
    case CopyAxes::kSubset: {
      AxisNames out;
      for (std::size_t i = 0; i < all.size(); ++i) {
        if (pick & (1u << i)) out.push_back(all[i]);
      }
      if (out.empty()) out.push_back(one);
      return out;
    }
    case CopyAxes::kReversed:
      return AxisNames(all.rbegin(), all.rend());
    case CopyAxes::kDuplicate:
      return AxisNames{one, one};
    case CopyAxes::kWithGrid:
      return AxisNames{one, grid_or_unknown(env)};
    case CopyAxes::kComposite:
      if (all.size() >= 2 && !all[0].is_tuple && !all[1].is_tuple) {
        return AxisNames{AxisName::tuple({all[0].as_plain(), all[1].as_plain()})};
      }
      return AxisNames{AxisName::tuple({all[0].parts.front(), "q"})};
    case CopyAxes::kThread:
      return AxisNames{thread_or_default(env)};
    case CopyAxes::kGrid:
      return AxisNames{grid_or_unknown(env)};
    case CopyAxes::kUnknown:
      return AxisNames{AxisName::plain(kUnknownAxis)};
  }
  return std::nullopt;
}

std::optional<AxisNames> resolve_leader_axes(LeaderAxes choice, std::uint32_t pick,
                                             const AxisEnvironment& env) {
  const AxisNames all = all_cluster(env);
  switch (choice) {
    case LeaderAxes::kSizeTwo:
      for (const auto& a : env.cluster()) {
        if (a.size == 2) return AxisNames{a.name};
      }
      return all.empty() ? AxisNames{AxisName::plain(kUnknownAxis)} : AxisNames{all.front()};
    case LeaderAxes::kOne:
      return all.empty() ? AxisNames{AxisName::plain(kUnknownAxis)}
                         : AxisNames{all[pick % all.size()]};
    case LeaderAxes::kAll:
      return all;
    case LeaderAxes::kAbsent:
      return std::nullopt;
    case LeaderAxes::kEmpty:
      return AxisNames{};
    case LeaderAxes::kUnknown:
      return AxisNames{AxisName::plain(kUnknownAxis)};
    case LeaderAxes::kGrid:
      return AxisNames{grid_or_unknown(env)};
    case LeaderAxes::kThread:
      return AxisNames{thread_or_default(env)};
  }
  return std::nullopt;
}

}  // namespace collfuzz::generators
