#include "generators/shape_choice.h"

#include <algorithm>

namespace collfuzz::generators {

std::int64_t granule(DType dtype) { return 128 / dtype_bits(dtype); }

Shape resolve_shape(const ShapeChoice& choice, DType dtype, std::int64_t split,
                    std::int64_t max_bytes) {
  const auto dim = [](const DimChoice& d, std::int64_t unit) {
    return d.kind == DimChoice::Kind::kAligned ? d.value * unit : d.value;
  };
  const std::size_t rank = std::clamp<std::size_t>(choice.rank, 1, 6);
  Shape s;
  if (rank >= 2) s.push_back(dim(choice.lead, split));
  for (std::size_t i = 0; i + 2 < rank; ++i)
    s.push_back(std::max<std::int64_t>(1, choice.middles[i]));
  // Rank 1: the only dim is both the one the split divides and the minor one.
  s.push_back(dim(choice.minor, granule(dtype) * (rank == 1 ? split : 1)));
  const auto bytes = [&] {
    std::int64_t n = dtype_bits(dtype);
    for (auto d : s) n *= d;
    return n / 8;
  };
  while (bytes() > max_bytes) {
    auto it = std::max_element(s.begin(), s.end());
    *it = std::max<std::int64_t>(1, *it / 2);
  }
  return s;
}

}  // namespace collfuzz::generators
