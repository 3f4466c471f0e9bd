#include "harness/core/ndarray.h"

namespace collfuzz {

RankStrides row_major_rank_strides(const Shape& shape) {
  RankStrides s{};
  std::int64_t acc = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    s.at(i) = acc;
    acc *= shape[i];
  }
  return s;
}

std::vector<std::int64_t> row_major_strides(const Shape& shape) {
  const RankStrides s = row_major_rank_strides(shape);
  return {s.begin(), s.begin() + static_cast<std::ptrdiff_t>(shape.size())};
}

void for_each_coord(const Shape& shape,
                    const std::function<void(const std::vector<std::int64_t>&)>& f) {
  for (auto d : shape) {
    if (d <= 0) return;
  }
  std::vector<std::int64_t> c(shape.size(), 0);
  while (true) {
    f(c);
    std::size_t i = shape.size();
    while (i > 0) {
      --i;
      if (++c[i] < shape[i]) break;
      c[i] = 0;
      if (i == 0) return;
    }
    if (shape.empty()) return;
  }
}

ResolvedSlice resolve_slice(const Shape& array_shape, const std::vector<IndexEntry>& index,
                            const std::function<std::int64_t(const std::string&)>& axis_index,
                            std::int64_t loop_iteration) {
  ResolvedSlice r;
  for (std::size_t i = 0; i < array_shape.size(); ++i) {
    if (i >= index.size()) {
      r.start.push_back(0);
      r.size.push_back(array_shape[i]);
      r.shape.push_back(array_shape[i]);
      continue;
    }
    const IndexEntry& e = index[i];
    const std::int64_t start = index_start(e, axis_index, loop_iteration);
    if (e.kind == IndexEntry::Kind::kAt) {
      r.start.push_back(start);
      r.size.push_back(0);
      continue;
    }
    r.start.push_back(start);
    r.size.push_back(e.size);
    r.shape.push_back(e.size);
  }
  return r;
}

}  // namespace collfuzz
