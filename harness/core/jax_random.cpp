#include "harness/core/jax_random.h"

#include <bit>

#include "harness/core/element_value.h"

namespace collfuzz {

namespace {

constexpr std::array<std::array<int, 4>, 2> kRotations = {{{13, 15, 26, 6}, {17, 29, 16, 24}}};

void mix(std::array<std::uint32_t, 2>& x, int rotation) {
  x[0] += x[1];
  x[1] = std::rotl(x[1], rotation);
  x[1] ^= x[0];
}

}  // namespace

std::array<std::uint32_t, 2> threefry2x32(ThreefryKey key, std::uint32_t x0, std::uint32_t x1) {
  const std::array<std::uint32_t, 3> ks = {key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDAu};
  std::array<std::uint32_t, 2> x = {x0 + ks[0], x1 + ks[1]};
  // Five groups of four rounds, each followed by a key injection (JAX's unrolled lowering).
  for (std::uint32_t group = 0; group < 5; ++group) {
    for (const int r : kRotations[group % 2]) mix(x, r);
    x[0] += ks[(group + 1) % 3];
    x[1] += ks[(group + 2) % 3] + group + 1;
  }
  return x;
}

ThreefryKey jax_random_key(std::uint64_t seed,
                           const std::vector<std::pair<std::uint32_t, std::uint32_t>>& split) {
  ThreefryKey key = {static_cast<std::uint32_t>(seed >> 32),
                     static_cast<std::uint32_t>(seed & 0xFFFFFFFFu)};
  for (const auto& [n, i] : split) {
    (void)n;  // the partitionable split's key i does not depend on how many keys were split
    key = threefry2x32(key, 0, i);
  }
  return key;
}

std::string jax_random_python(const ArraySpec& a) {
  std::string key = "jax.random.key(" + std::to_string(a.fill.seed) + ")";
  for (const auto& [n, i] : a.fill.split) {
    key = "jax.random.split(" + key + ", " + std::to_string(n) + ")[" + std::to_string(i) + "]";
  }
  std::string shape = "(";
  for (std::size_t d = 0; d < a.shape.size(); ++d) {
    shape += (d ? ", " : "") + std::to_string(a.shape[d]);
  }
  shape += a.shape.size() == 1 ? ",)" : ")";
  const char* fn = dtype_info(a.dtype).is_float ? "uniform" : "bits";
  return std::string("jax.random.") + fn + "(" + key + ", " + shape + ", jnp." +
         std::string(dtype_name(a.dtype)) + ")";
}

bool jax_random_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
      return true;
    default:
      return false;
  }
}

std::uint64_t jax_random_element_bits(ThreefryKey key, DType dtype, std::uint64_t i) {
  const auto block = threefry2x32(key, static_cast<std::uint32_t>(i >> 32),
                                  static_cast<std::uint32_t>(i & 0xFFFFFFFFu));
  const std::uint32_t bits = block[0] ^ block[1];
  switch (dtype) {
    case DType::kUInt32:
      return bits;
    case DType::kUInt16:
      return bits & 0xFFFFu;
    case DType::kUInt8:
      return bits & 0xFFu;
    // uniform: the draw's top mantissa bits under the exponent of 1.0, minus 1.0 (exact); times
    // (maxval - minval) = 1 plus minval = 0, both exact. bfloat16 draws 8 bits (its 7-bit
    // mantissa is under 8), float16 16 and float32 32.
    case DType::kFloat32:
      return std::bit_cast<std::uint32_t>(std::bit_cast<float>((bits >> 9) | 0x3F800000u) - 1.0f);
    case DType::kFloat16:
      return exact_float_bits(dtype, static_cast<double>((bits & 0xFFFFu) >> 6) / 1024.0)
          .value_or(0);
    case DType::kBFloat16:
      return exact_float_bits(dtype, static_cast<double>((bits & 0xFFu) >> 1) / 128.0).value_or(0);
    default:
      return 0;
  }
}

}  // namespace collfuzz
