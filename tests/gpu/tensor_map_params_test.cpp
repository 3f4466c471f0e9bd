// The arguments of cuTensorMapEncodeTiled as the CUDA executor computes them from a plan's
// tensor box: innermost-first dims, byte strides, packing of 4-bit elements, and the documented
// constraints (cuda.h) that Mosaic GPU's runtime checks before calling the driver.
#include "gpu/tensor_map_params.h"

#include <gtest/gtest.h>

namespace collfuzz::gpu {
namespace {

lowering::TensorBox box2d(std::int64_t rows, std::int64_t cols, std::int64_t box_rows,
                          std::int64_t box_cols) {
  lowering::TensorBox t;
  t.rank = 2;
  t.dims[0] = rows;
  t.dims[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  t.box[0] = box_rows;
  t.box[1] = box_cols;
  return t;
}

TEST(TensorMapParams, TwoDimsInnermostFirstWithByteStrides) {
  TensorMapParams p;
  ASSERT_FALSE(tensor_map_params(box2d(128, 64, 64, 64), DType::kFloat32, p));
  EXPECT_EQ(p.rank, 2u);
  EXPECT_EQ(p.data_type, static_cast<std::uint32_t>(TmaDataType::kFloat32));
  EXPECT_EQ(p.global_dim[0], 64u);
  EXPECT_EQ(p.global_dim[1], 128u);
  EXPECT_EQ(p.global_strides[0], 256u);
  EXPECT_EQ(p.box[0], 64u);
  EXPECT_EQ(p.box[1], 64u);
  EXPECT_EQ(p.element_strides[0], 1u);
  EXPECT_EQ(p.element_strides[1], 1u);
  EXPECT_EQ(p.global_address, 0u);
}

TEST(TensorMapParams, DataTypesFollowTheElementWidth) {
  TensorMapParams p;
  ASSERT_FALSE(tensor_map_params(box2d(8, 64, 8, 64), DType::kBFloat16, p));
  EXPECT_EQ(p.data_type, static_cast<std::uint32_t>(TmaDataType::kBFloat16));
  EXPECT_EQ(p.global_strides[0], 128u);
  ASSERT_FALSE(tensor_map_params(box2d(8, 64, 8, 64), DType::kFloat8E4M3FN, p));
  EXPECT_EQ(tma_element_bytes(static_cast<TmaDataType>(p.data_type)), 1);
  ASSERT_FALSE(tensor_map_params(box2d(8, 64, 8, 64), DType::kFloat64, p));
  EXPECT_EQ(tma_element_bytes(static_cast<TmaDataType>(p.data_type)), 8);
}

TEST(TensorMapParams, FourBitElementsArePackedIntoBytes) {
  TensorMapParams p;
  ASSERT_FALSE(tensor_map_params(box2d(4, 64, 4, 64), DType::kInt4, p));
  EXPECT_EQ(p.data_type, static_cast<std::uint32_t>(TmaDataType::kUInt8));
  EXPECT_EQ(p.global_dim[0], 32u);
  EXPECT_EQ(p.box[0], 32u);
  EXPECT_EQ(p.global_strides[0], 32u);
  std::int32_t c[kMaxTensorRank];
  lowering::TensorBox t = box2d(4, 64, 4, 32);
  t.coords[1] = 32;
  t.coords[0] = -1;
  ASSERT_FALSE(tensor_coords(t, DType::kUInt4, c));
  EXPECT_EQ(c[0], 16);
  EXPECT_EQ(c[1], -1);
  t.coords[1] = 3;
  EXPECT_TRUE(tensor_coords(t, DType::kUInt4, c).has_value());
}

// Mosaic GPU's runtime only asserts that sub-byte extents are whole bytes
// (mosaic_gpu_init_tma_desc): the executor names such a copy and does not run it (found by the
// emulated GPU check's campaign: int4[35] was refused with a message of the executor's own).
TEST(TensorMapParams, SubByteExtentsOfNoWholeByteAreNotTheExecutorsToDecide) {
  EXPECT_FALSE(packed_extents_unknown(box2d(4, 64, 4, 64), DType::kInt4));
  EXPECT_FALSE(packed_extents_unknown(box2d(4, 35, 4, 32), DType::kInt8));
  const auto extent = packed_extents_unknown(box2d(4, 35, 4, 32), DType::kInt4);
  ASSERT_TRUE(extent);
  EXPECT_NE(extent->find("contiguous extent (35 elements)"), std::string::npos) << *extent;
  EXPECT_NE(extent->find("mosaic_gpu_init_tma_desc"), std::string::npos) << *extent;
  const auto box = packed_extents_unknown(box2d(4, 64, 4, 33), DType::kUInt4);
  ASSERT_TRUE(box);
  EXPECT_NE(box->find("box along the contiguous dim (33 elements)"), std::string::npos) << *box;
}

TEST(TensorMapParams, CoordinatesAreInnermostFirstAndSigned32Bit) {
  lowering::TensorBox t;
  t.rank = 3;
  t.coords[0] = 7;
  t.coords[1] = -3;
  t.coords[2] = 40;
  std::int32_t c[kMaxTensorRank];
  ASSERT_FALSE(tensor_coords(t, DType::kFloat32, c));
  EXPECT_EQ(c[0], 40);
  EXPECT_EQ(c[1], -3);
  EXPECT_EQ(c[2], 7);
  EXPECT_EQ(c[3], 0);
  t.coords[0] = std::int64_t{1} << 33;
  EXPECT_TRUE(tensor_coords(t, DType::kFloat32, c).has_value());
}

TEST(TensorMapParams, RefusesWhatTheDriverDocumentsAsInvalid) {
  TensorMapParams p;
  lowering::TensorBox t = box2d(512, 64, 512, 64);
  auto why = tensor_map_params(t, DType::kFloat32, p);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("Window shape must be in [0, 256]"), std::string::npos);

  t = box2d(8, 64, 8, 2);  // 8 bytes along the contiguous dim
  why = tensor_map_params(t, DType::kFloat32, p);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("bytewidth divisible by 16"), std::string::npos);

  t = box2d(8, 6, 8, 4);  // a row stride of 24 bytes
  why = tensor_map_params(t, DType::kFloat32, p);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("Byte strides must be divisible by 16"), std::string::npos);

  t = box2d(8, 64, 8, 64);
  t.strides[1] = 2;
  why = tensor_map_params(t, DType::kFloat32, p);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("Minormost stride must be 1"), std::string::npos);

  t.rank = 0;
  EXPECT_TRUE(tensor_map_params(t, DType::kFloat32, p).has_value());
  t.rank = 6;
  EXPECT_TRUE(tensor_map_params(t, DType::kFloat32, p).has_value());
}

TEST(TensorMapParams, FiveDimsAndHugeExtents) {
  lowering::TensorBox t;
  t.rank = 5;
  std::int64_t stride = 1;
  for (int k = 4; k >= 0; --k) {
    t.dims[k] = k == 4 ? 16 : 2;
    t.strides[k] = stride;
    t.box[k] = k == 4 ? 16 : 1;
    stride *= t.dims[k];
  }
  TensorMapParams p;
  ASSERT_FALSE(tensor_map_params(t, DType::kFloat32, p));
  EXPECT_EQ(p.global_strides[0], 64u);
  EXPECT_EQ(p.global_strides[3], 512u);
  t.dims[0] = (std::int64_t{1} << 32) + 1;
  auto why = tensor_map_params(t, DType::kFloat32, p);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("less than 2**32"), std::string::npos);
}

}  // namespace
}  // namespace collfuzz::gpu
