// A copy's destination shape chosen without knowing its element type or collective size, resolved
// when the case is built: dims near 1, 2, 3, 16, 127, 128, 256 and 257, mostly aligned so that the
// copy is valid (a minor dim of whole 16-byte granules, a leading dim that the collective size
// divides), occasionally not. Drawing multipliers instead of dims keeps a shrunk dim aligned.
#pragma once

#include <array>
#include <cstdint>

#include "harness/core/case.h"

namespace collfuzz::generators {

struct DimChoice {
  enum class Kind : std::uint8_t {
    kAligned,    // value * unit (the 16-byte granule for the minor dim, the split for the leading)
    kNearLimit,  // value itself (1, 2, 3, 16, 127, 128, 256, 257)
  };
  Kind kind = Kind::kAligned;
  std::int64_t value = 1;
};

struct ShapeChoice {
  std::size_t rank = 1;                   // 1 to 6
  DimChoice lead;                         // rank >= 2
  std::array<std::int64_t, 4> middles{};  // the dims between the leading and the minor one
  DimChoice minor;
};

// Elements per 16 bytes of `dtype` (the granule of a TMA copy's minor dim).
std::int64_t granule(DType dtype);

// The shape for `dtype`, where `split` is the collective size the chunk split divides; dims are
// halved (largest first) until the buffer is at most `max_bytes`.
Shape resolve_shape(const ShapeChoice& choice, DType dtype, std::int64_t split,
                    std::int64_t max_bytes);

}  // namespace collfuzz::generators
