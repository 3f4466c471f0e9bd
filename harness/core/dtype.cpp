#include "harness/core/dtype.h"

#include <array>

namespace collfuzz {

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& info : detail::kDTypes) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

std::span<const DTypeInfo> all_dtypes() { return detail::kDTypes; }

}  // namespace collfuzz
