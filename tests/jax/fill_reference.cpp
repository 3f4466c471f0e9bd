// Regenerates tests/jax/fill_reference.txt from the C++ fills (harness/core/fill.cpp):
//   g++ -std=c++20 -I. tests/jax/fill_reference.cpp harness/core/fill.cpp harness/core/dtype.cpp \
//       -o /tmp/fill_reference && /tmp/fill_reference
// (then prepend the header line). tests/jax/test_adapter.py checks the Python fills against it.
#include <cstdio>
#include <cstring>
#include "harness/core/fill.h"
namespace collfuzz {
std::int64_t element_count(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}
}  // namespace collfuzz
using namespace collfuzz;
int main() {
  const char* names[] = {"int4",     "uint4",   "int8",    "uint8",  "int16",         "uint16",
                         "int32",    "uint32",  "int64",   "uint64", "float8_e4m3fn", "float8_e5m2",
                         "bfloat16", "float16", "float32", "float64"};
  struct F {
    FillPattern p;
    std::uint64_t seed;
    std::int64_t value;
    const char* tag;
  };
  F fills[] = {{FillPattern::kIota, 0, 0, "iota"},
               {FillPattern::kRandom, 0, 0, "random0"},
               {FillPattern::kRandom, 12345, 0, "random12345"},
               {FillPattern::kRandom, 0xFFFFFFFFFFFFFFFFull, 0, "randommax"},
               {FillPattern::kConstant, 0, -3, "const-3"},
               {FillPattern::kConstant, 0, 100000, "const100000"},
               {FillPattern::kConstant, 0, -100000, "const-100000"}};
  for (auto n : names)
    for (auto& f : fills) {
      ArraySpec a;
      a.name = "x";
      a.shape = {37};
      a.dtype = *parse_dtype(n);
      a.fill.pattern = f.p;
      a.fill.seed = f.seed;
      a.fill.value = f.value;
      auto b = fill_bytes(a);
      std::printf("%s %s ", n, f.tag);
      for (auto c : b) std::printf("%02x", c);
      std::printf("\n");
    }
  // a long iota to cover wrapping
  ArraySpec a;
  a.name = "x";
  a.shape = {600};
  a.dtype = DType::kInt8;
  auto b = fill_bytes(a);
  std::printf("int8 iota600 ");
  for (auto c : b) std::printf("%02x", c);
  std::printf("\n");
  a.dtype = DType::kUInt4;
  b = fill_bytes(a);
  std::printf("uint4 iota600 ");
  for (auto c : b) std::printf("%02x", c);
  std::printf("\n");
  a.dtype = DType::kFloat8E5M2;
  b = fill_bytes(a);
  std::printf("float8_e5m2 iota600 ");
  for (auto c : b) std::printf("%02x", c);
  std::printf("\n");
}
