// JAX's random numbers, bit for bit: the `jax_random` fill (docs/case-format.md "Fills") holds
// what `jax.random.uniform(key, shape, dtype)` or `jax.random.bits(key, shape, dtype)` returns,
// for a key `jax.random.key(seed)` split as the fill says. Both modelled JAX releases use the
// threefry2x32 PRNG with `jax_threefry_partitionable` on (its default since JAX 0.5): the key is
// [seed >> 32, seed & 0xFFFFFFFF]; split(key, n)[i] is threefry2x32(key, (0, i)); element j of a
// draw is hi ^ lo of threefry2x32(key, (j >> 32, j & 0xFFFFFFFF)), j row-major
// (jax/_src/random/threefry2x32.py, jax/_src/random/core.py `_uniform`).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/dtype.h"

namespace collfuzz {

using ThreefryKey = std::array<std::uint32_t, 2>;

// The Threefry-2x32 block function (20 rounds) of the counter pair (x0, x1) under `key`.
std::array<std::uint32_t, 2> threefry2x32(ThreefryKey key, std::uint32_t x0, std::uint32_t x1);

// jax.random.key(seed), then split(key, n)[i] for each (n, i) in order.
ThreefryKey jax_random_key(std::uint64_t seed,
                           const std::vector<std::pair<std::uint32_t, std::uint32_t>>& split);

// Element `i` (row-major) of `jax.random.uniform(key, shape, dtype)` (float32, float16,
// bfloat16: the dtype's bit pattern) or of `jax.random.bits(key, shape, dtype)` (uint8, uint16,
// uint32). Other dtypes: 0 (the case reader refuses them).
std::uint64_t jax_random_element_bits(ThreefryKey key, DType dtype, std::uint64_t i);

// The dtypes a `jax_random` fill holds (those above).
bool jax_random_dtype(DType dtype);

// The Python call that draws a `jax_random` input, as `collfuzz repro` writes it:
// "jax.random.uniform(jax.random.split(jax.random.key(0), 2)[0], (128, 128), jnp.float32)".
std::string jax_random_python(const ArraySpec& a);

}  // namespace collfuzz
