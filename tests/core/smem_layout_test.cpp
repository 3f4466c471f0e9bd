// The physical layout of transformed SMEM buffers (harness/core/smem_layout.h), against offsets
// computed by hand from Mosaic GPU's swizzle formula.
#include "harness/core/smem_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace collfuzz {
namespace {

Alloc f16_alloc(Shape shape, Shape tiling, std::int64_t swizzle) {
  Alloc a;
  a.name = "smem";
  a.shape = std::move(shape);
  a.dtype = DType::kFloat16;
  a.transforms.tiling = std::move(tiling);
  a.transforms.swizzle = swizzle;
  return a;
}

TEST(SmemLayout, WithoutTransformsTheLayoutIsRowMajor) {
  const SmemLayout l = smem_layout(f16_alloc({16, 64}, {}, 0));
  EXPECT_TRUE(l.identity());
  EXPECT_EQ(physical_offset(l, 65), 130);
}

TEST(SmemLayout, Swizzle128XorsTheChunkWithTheRowWithinEightRows) {
  // f16 (16, 64) tiled (8, 64), swizzle 128: element (1, 0) is byte 128 unswizzled, in row 1 of
  // its pattern: chunk 0 ^ 1 = chunk 1, byte 144. Element (1, 8) is chunk 1 ^ 1 = chunk 0: 128.
  const SmemLayout l = smem_layout(f16_alloc({16, 64}, {8, 64}, 128));
  EXPECT_EQ(physical_offset(l, 64), 144);
  EXPECT_EQ(physical_offset(l, 64 + 8), 128);
  EXPECT_EQ(physical_offset(l, 0), 0);
  // Row 9 (the second tile's row 1) is unswizzled byte 9 * 128 = 1152, pattern row 1.
  EXPECT_EQ(physical_offset(l, 9 * 64), 1152 + 16);
}

TEST(SmemLayout, TilingPutsATilesElementsTogether) {
  // f32 (16, 32) tiled (8, 16): element (0, 16) starts the second tile of row block 0.
  Alloc a = f16_alloc({16, 32}, {8, 16}, 0);
  a.dtype = DType::kFloat32;
  const SmemLayout l = smem_layout(a);
  EXPECT_EQ(physical_offset(l, 16), 8 * 16 * 4);
  EXPECT_EQ(physical_offset(l, 32), 16 * 4);  // (1, 0): row 1 of the first tile
}

TEST(SmemLayout, ThePhysicalImageIsAPermutationAndBack) {
  for (std::int64_t s : {32, 64, 128}) {
    const std::int64_t minor = s / 2;
    const Alloc a = f16_alloc({32, minor}, {8, minor}, s);
    const SmemLayout l = smem_layout(a);
    ASSERT_FALSE(l.identity());
    std::vector<std::uint8_t> bytes(32 * static_cast<std::size_t>(minor) * 2);
    std::iota(bytes.begin(), bytes.end(), std::uint8_t{0});
    const auto physical = to_physical(l, bytes);
    EXPECT_NE(physical, bytes);
    auto sorted = physical;
    auto expected = bytes;
    std::sort(sorted.begin(), sorted.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(sorted, expected);
    EXPECT_EQ(to_logical(l, physical), bytes);
  }
}

TEST(SmemLayout, TransformsJaxRefusesLayNothingOut) {
  EXPECT_TRUE(smem_layout(f16_alloc({12, 64}, {8, 64}, 0)).identity());  // 12 % 8
  EXPECT_EQ(smem_layout(f16_alloc({16, 32}, {8, 32}, 128)).swizzle, 0);  // 64 B minor dim
}

// physical_offsets (every element at once, by per-dim terms) is physical_offset of each element,
// over tiled and untiled ranks 1 to 4, every swizzle and element widths 1 to 8.
TEST(SmemLayout, AllOffsetsAtOnceAreEachElementsOffset) {
  const std::vector<std::pair<Shape, Shape>> shapes = {{{128}, {}},
                                                       {{16, 64}, {}},
                                                       {{16, 64}, {8, 64}},
                                                       {{3, 16, 64}, {8, 64}},
                                                       {{2, 3, 16, 32}, {8, 32}},
                                                       {{32, 16}, {16}},
                                                       {{24, 128}, {8, 128}},
                                                       {{2, 16, 64}, {8, 16}}};
  int checked = 0;
  for (const auto& [shape, tiling] : shapes) {
    for (const std::int64_t bytes : {1, 2, 4, 8}) {
      for (const std::int64_t swizzle : {0, 32, 64, 128}) {
        SmemLayout l;
        l.shape = shape;
        l.tiling = tiling;
        l.element_bytes = bytes;
        const std::int64_t minor = tiling.empty() ? shape.back() : tiling.back();
        l.swizzle = minor * bytes == swizzle ? swizzle : 0;
        std::vector<std::int64_t> all;
        physical_offsets(l, all);
        std::int64_t n = 1;
        for (std::int64_t d : shape) n *= d;
        ASSERT_EQ(static_cast<std::int64_t>(all.size()), n);
        for (std::int64_t e = 0; e < n; ++e)
          ASSERT_EQ(all[static_cast<std::size_t>(e)], physical_offset(l, e)) << e;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 8 * 4 * 4);
}

}  // namespace
}  // namespace collfuzz
