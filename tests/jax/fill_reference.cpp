// Regenerates tests/jax/fill_reference.txt from the C++ fills (harness/core/fill.cpp):
//   g++ -std=c++20 -I. tests/jax/fill_reference.cpp harness/core/fill.cpp harness/core/dtype.cpp \
//       harness/core/element_value.cpp harness/core/jax_random.cpp -o /tmp/fill_reference && \
//       /tmp/fill_reference
// (then prepend the header line). The arange and values lines end with the array's spec as JSON.
// tests/jax/test_adapter.py checks the Python fills against it.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>
#include "harness/core/element_value.h"
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
  // arange over most of each dtype's fill range, and explicit values from spread bit patterns
  for (auto n : names) {
    ArraySpec r;
    r.name = "x";
    r.shape = {2, 4};
    r.dtype = *parse_dtype(n);
    const auto [lo, hi] = fill_value_range(r.dtype);
    r.fill.pattern = FillPattern::kArange;
    r.fill.start = hi - 1;
    r.fill.step = -((hi - lo - 2) / 7);
    std::printf("%s arange ", n);
    for (auto c : fill_bytes(r)) std::printf("%02x", c);
    std::printf(
        " {\"shape\":[2,4],\"fill\":{\"pattern\":\"arange\",\"start\":%lld,\"step\":%lld}}\n",
        static_cast<long long>(r.fill.start), static_cast<long long>(r.fill.step));
    const DTypeInfo& info = dtype_info(r.dtype);
    const int bits = info.bits;
    std::vector<std::uint64_t> v;
    std::string text;
    for (std::uint64_t k = 0; v.size() < 37; ++k) {
      std::uint64_t x = splitmix64(k);
      if (bits < 64) x &= (1ull << bits) - 1;
      char buf[64];
      if (info.is_float) {
        const double d = float_element_value(r.dtype, x);
        if (!std::isfinite(d)) continue;
        std::snprintf(buf, sizeof buf, "%.17g", d);
      } else if (info.is_signed) {
        const int shift = 64 - bits;
        std::snprintf(buf, sizeof buf, "%lld",
                      static_cast<long long>(static_cast<std::int64_t>(x << shift) >> shift));
      } else {
        std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(x));
      }
      text += (text.empty() ? "" : ",") + std::string(buf);
      v.push_back(x);
    }
    r.shape = {37};
    r.fill.pattern = FillPattern::kValues;
    r.fill.values = std::make_shared<const std::vector<std::uint64_t>>(v);
    std::printf("%s values ", n);
    for (auto c : fill_bytes(r)) std::printf("%02x", c);
    std::printf(" {\"shape\":[37],\"fill\":{\"pattern\":\"values\",\"values\":[%s]}}\n",
                text.c_str());
  }
  // jax_random: jax.random.uniform / jax.random.bits of a split key (tests/jax/test_jax_random.py
  // holds the same specs against JAX itself)
  struct R {
    const char* dtype;
    std::uint64_t seed;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> split;
    const char* split_json;
    const char* distribution;
  };
  const R randoms[] = {{"float32", 0, {{2, 0}}, "[[2,0]]", "uniform"},
                       {"float16", 0, {{2, 1}}, "[[2,1]]", "uniform"},
                       {"bfloat16", 42, {{3, 2}, {2, 1}}, "[[3,2],[2,1]]", "uniform"},
                       {"uint32", 7, {}, "[]", "bits"},
                       {"uint16", 7, {{4, 3}}, "[[4,3]]", "bits"},
                       {"uint8", 1234, {}, "[]", "bits"}};
  for (const R& rr : randoms) {
    ArraySpec r;
    r.name = "x";
    r.shape = {37};
    r.dtype = *parse_dtype(rr.dtype);
    r.fill.pattern = FillPattern::kJaxRandom;
    r.fill.seed = rr.seed;
    r.fill.split = rr.split;
    std::printf("%s jax_random ", rr.dtype);
    for (auto c : fill_bytes(r)) std::printf("%02x", c);
    std::printf(
        " {\"shape\":[37],\"fill\":{\"pattern\":\"jax_random\",\"distribution\":\"%s\","
        "\"seed\":%llu,\"split\":%s}}\n",
        rr.distribution, static_cast<unsigned long long>(rr.seed), rr.split_json);
  }
}
