// The MLIR types the strided-count rule names (harness/core/memref_text.h), each as JAX 0.11.2 and
// 0.12.0.1 print it in "... must have a number of elements that is a multiple of 128" (probed by
// lowering `o[...] = ref[...]` for CUDA under Lane semantics).
#include <gtest/gtest.h>

#include "harness/core/memref_text.h"

namespace collfuzz {
namespace {

IndexEntry slice(std::int64_t start, std::int64_t size, bool dynamic = false) {
  IndexEntry e;
  e.kind = IndexEntry::Kind::kSlice;
  e.start = start;
  e.size = size;
  if (dynamic) e.dyn_start = DynStart{"c", 64, 0};
  return e;
}

IndexEntry at(std::int64_t i) {
  IndexEntry e;
  e.kind = IndexEntry::Kind::kAt;
  e.at = i;
  return e;
}

TEST(MemrefText, AsJaxPrintsIt) {
  EXPECT_EQ(memref_text(DType::kInt32, {64}, {}, false), "memref<64xi32>");
  EXPECT_EQ(memref_text(DType::kFloat32, {2, 3, 4}, {}, false), "memref<2x3x4xf32>");
  EXPECT_EQ(memref_text(DType::kUInt16, {64}, {}, false), "memref<64xi16>");
  EXPECT_EQ(memref_text(DType::kBFloat16, {64}, {}, false), "memref<64xbf16>");
  EXPECT_EQ(memref_text(DType::kInt32, {64}, {}, true),
            "memref<64xi32, #gpu.address_space<workgroup>>");
  // any index: a strided layout; a zero offset is left out, a static one printed
  EXPECT_EQ(memref_text(DType::kInt32, {128}, {slice(0, 64)}, false),
            "memref<64xi32, strided<[1]>>");
  EXPECT_EQ(memref_text(DType::kInt32, {64}, {slice(0, 64)}, false),
            "memref<64xi32, strided<[1]>>");
  EXPECT_EQ(memref_text(DType::kInt32, {128}, {slice(64, 64)}, false),
            "memref<64xi32, strided<[1], offset: 64>>");
  EXPECT_EQ(memref_text(DType::kInt32, {4, 48}, {slice(1, 2)}, false),
            "memref<2x48xi32, strided<[48, 1], offset: 48>>");
  // an integer index (static too) or a dynamic start: offset ?
  EXPECT_EQ(memref_text(DType::kInt32, {4, 48}, {at(2)}, false),
            "memref<48xi32, strided<[1], offset: ?>>");
  EXPECT_EQ(memref_text(DType::kInt32, {128}, {slice(0, 64, true)}, false),
            "memref<64xi32, strided<[1], offset: ?>>");
  EXPECT_EQ(memref_text(DType::kInt32, {2, 64}, smem_index_entries({1}, false), true),
            "memref<64xi32, strided<[1], offset: ?>, #gpu.address_space<workgroup>>");
  EXPECT_EQ(memref_text(DType::kInt32, {2, 64}, smem_index_entries({0}, true), true),
            "memref<64xi32, strided<[1], offset: ?>, #gpu.address_space<workgroup>>");
}

}  // namespace
}  // namespace collfuzz
