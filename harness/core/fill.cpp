#include "harness/core/fill.h"

#include "harness/core/jax_random.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <tuple>

namespace collfuzz {

namespace {

// A small integer `v` represented exactly in `dtype`, as its bit pattern. Floats hold integers
// of magnitude < 8 for float8 (exact in both formats) and < 2048 for the others.
std::uint64_t encode_small_int(DType dtype, std::int64_t v) {
  const DTypeInfo& info = dtype_info(dtype);
  const std::uint64_t mask = info.bits == 64 ? ~0ull : ((1ull << info.bits) - 1);
  if (!info.is_float) return static_cast<std::uint64_t>(v) & mask;
  const float f = static_cast<float>(v);
  switch (dtype) {
    case DType::kFloat32:
      return std::bit_cast<std::uint32_t>(f);
    case DType::kFloat64:
      return std::bit_cast<std::uint64_t>(static_cast<double>(v));
    case DType::kBFloat16:
      return std::bit_cast<std::uint32_t>(f) >> 16;  // exact for |v| < 256; callers bound v
    case DType::kFloat16: {
      if (v == 0) return 0;
      const std::uint64_t sign = v < 0 ? 0x8000 : 0;
      std::uint64_t m = static_cast<std::uint64_t>(v < 0 ? -v : v);
      int e = 63 - std::countl_zero(m);  // m = 1.f * 2^e
      const std::uint64_t frac = (m << (10 - e)) & 0x3FF;
      return sign | (static_cast<std::uint64_t>(e + 15) << 10) | frac;
    }
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2: {
      if (v == 0) return 0;
      const bool e4 = dtype == DType::kFloat8E4M3FN;
      const int mant_bits = e4 ? 3 : 2;
      const int bias = e4 ? 7 : 15;
      const std::uint64_t sign = v < 0 ? 0x80 : 0;
      std::uint64_t m = static_cast<std::uint64_t>(v < 0 ? -v : v);
      int e = 63 - std::countl_zero(m);
      const std::uint64_t frac = (m << (mant_bits - e)) & ((1u << mant_bits) - 1);
      return sign | (static_cast<std::uint64_t>(e + bias) << mant_bits) | frac;
    }
    default:
      return 0;
  }
}

}  // namespace

// The range of small integers each dtype holds exactly (and that survives any executor's
// conversions): [lo, hi].
std::pair<std::int64_t, std::int64_t> fill_value_range(DType dtype) {
  switch (dtype) {
    case DType::kInt4:
      return {-8, 7};
    case DType::kUInt4:
      return {0, 15};
    case DType::kInt8:
      return {-128, 127};
    case DType::kUInt8:
      return {0, 255};
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2:
      return {-7, 7};
    case DType::kBFloat16:
      return {-255, 255};
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return {-2047, 2047};
    case DType::kInt16:
      return {-32768, 32767};
    case DType::kUInt16:
      return {0, 65535};
    default:
      return {-(std::int64_t{1} << 30), (std::int64_t{1} << 30) - 1};
  }
}

bool operator==(const Fill& a, const Fill& b) {
  if (a.pattern != b.pattern || a.seed != b.seed || a.value != b.value || a.start != b.start ||
      a.step != b.step || a.split != b.split)
    return false;
  if (a.values == b.values) return true;
  if (!a.values || !b.values) return false;
  return *a.values == *b.values;
}

namespace {

// The fill of one array with its constants worked out once.
struct Filler {
  explicit Filler(const ArraySpec& a) : a_(a) {
    std::tie(lo_, hi_) = fill_value_range(a.dtype);
    span_ = hi_ - lo_ + 1;
    const int width = dtype_bits(a.dtype);
    mask_ = width == 64 ? ~0ull : ((1ull << width) - 1);
    if (a.fill.pattern == FillPattern::kJaxRandom) key_ = jax_random_key(a.fill.seed, a.fill.split);
  }
  // Element i's value as a small integer.
  std::int64_t value(std::int64_t i) const {
    std::int64_t v = 0;
    switch (a_.fill.pattern) {
      case FillPattern::kIota:
        // 1, 2, 3, ... wrapping inside the range; 0 is skipped so that a zero-fill is visible.
        v = lo_ + ((i + 1 - lo_) % span_ + span_) % span_;
        if (v == 0) v = (hi_ > 0) ? 1 : -1;
        break;
      case FillPattern::kRandom:
        v = lo_ +
            static_cast<std::int64_t>(
                splitmix64(a_.fill.seed ^ (static_cast<std::uint64_t>(i) * 0xD1B54A32D192ED03ull)) %
                static_cast<std::uint64_t>(span_));
        break;
      case FillPattern::kConstant:
        v = a_.fill.value < lo_ ? lo_ : (a_.fill.value > hi_ ? hi_ : a_.fill.value);
        break;
      case FillPattern::kArange:  // the case reader keeps every element inside [lo, hi]
        v = a_.fill.start + i * a_.fill.step;
        break;
      case FillPattern::kValues:  // bits() reads the stored bit patterns
      case FillPattern::kJaxRandom:
        break;
    }
    return v;
  }
  std::uint64_t bits(std::int64_t i) const {
    if (a_.fill.pattern == FillPattern::kValues) {
      const auto& v = a_.fill.values;  // the case reader checks there is one per element
      return v && i < static_cast<std::int64_t>(v->size())
                 ? (*v)[static_cast<std::size_t>(i)] & mask_
                 : 0;
    }
    if (a_.fill.pattern == FillPattern::kJaxRandom) {
      return jax_random_element_bits(key_, a_.dtype, static_cast<std::uint64_t>(i));
    }
    return encode_small_int(a_.dtype, value(i));
  }

  // Calls put(i, bits) for every element in order; iota is computed incrementally.
  template <typename Put>
  void each(std::int64_t n, Put&& put) const {
    if (a_.fill.pattern != FillPattern::kIota) {
      for (std::int64_t i = 0; i < n; ++i) put(i, bits(i));
      return;
    }
    std::int64_t raw =
        n > 0 ? lo_ + ((1 - lo_) % span_ + span_) % span_ : 0;  // before the 0 -> 1 rule
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t v = raw == 0 ? (hi_ > 0 ? 1 : -1) : raw;
      put(i, encode_small_int(a_.dtype, v));
      if (++raw > hi_) raw = lo_;
    }
  }

 private:
  const ArraySpec& a_;
  std::int64_t lo_ = 0;
  std::int64_t hi_ = 0;
  std::int64_t span_ = 1;
  std::uint64_t mask_ = ~0ull;
  ThreefryKey key_ = {0, 0};
};

}  // namespace

std::uint64_t fill_element_bits(const ArraySpec& a, std::int64_t i) { return Filler(a).bits(i); }

std::int64_t packed_bytes(std::int64_t elements, DType dtype) {
  return (elements * dtype_bits(dtype) + 7) / 8;
}

std::uint64_t load_element(const std::vector<std::uint8_t>& buf, DType dtype, std::int64_t i) {
  const int bits = dtype_bits(dtype);
  if (bits == 4) {
    const std::uint8_t b = buf[static_cast<std::size_t>(i / 2)];
    return (i % 2) ? (b >> 4) : (b & 0xF);
  }
  const int bytes = bits / 8;
  std::uint64_t v = 0;
  std::memcpy(&v, buf.data() + i * bytes, static_cast<std::size_t>(bytes));  // little-endian host
  return v;
}

void store_element(std::vector<std::uint8_t>& buf, DType dtype, std::int64_t i,
                   std::uint64_t bits) {
  const int width = dtype_bits(dtype);
  if (width == 4) {
    std::uint8_t& b = buf[static_cast<std::size_t>(i / 2)];
    b = (i % 2) ? static_cast<std::uint8_t>((b & 0x0F) | ((bits & 0xF) << 4))
                : static_cast<std::uint8_t>((b & 0xF0) | (bits & 0xF));
    return;
  }
  std::memcpy(buf.data() + i * (width / 8), &bits, static_cast<std::size_t>(width / 8));
}

namespace {

constexpr std::size_t kNumDTypes = static_cast<std::size_t>(DType::kFloat64) + 1;

// The iota fill depends only on the element index and the dtype, and repeats every `span`
// elements: the bytes of one period per byte-addressable dtype whose period is at most 64 Ki
// elements, worked out once (thread-safe static initialisation) and tiled by fill_bytes.
const std::vector<std::uint8_t>& iota_period(DType dtype) {
  static const std::array<std::vector<std::uint8_t>, kNumDTypes> periods = [] {
    std::array<std::vector<std::uint8_t>, kNumDTypes> out;
    for (std::size_t d = 0; d < kNumDTypes; ++d) {
      ArraySpec a;
      a.dtype = static_cast<DType>(d);
      a.fill.pattern = FillPattern::kIota;
      const auto [lo, hi] = fill_value_range(a.dtype);
      const std::int64_t span = hi - lo + 1;
      const int bits = dtype_bits(a.dtype);
      if (bits < 8 || span > 65536) continue;
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(span * bits / 8));
      const Filler f(a);
      f.each(span, [&](std::int64_t i, std::uint64_t b) {
        std::memcpy(bytes.data() + i * (bits / 8), &b, static_cast<std::size_t>(bits / 8));
      });
      out[d] = std::move(bytes);
    }
    return out;
  }();
  return periods[static_cast<std::size_t>(dtype)];
}

}  // namespace

std::vector<std::uint8_t> fill_bytes(const ArraySpec& a) {
  const std::int64_t n = element_count(a.shape);
  std::vector<std::uint8_t> out(static_cast<std::size_t>(packed_bytes(n, a.dtype)), 0);
  if (a.fill.pattern == FillPattern::kIota) {
    const std::vector<std::uint8_t>& period = iota_period(a.dtype);
    if (!period.empty()) {
      for (std::size_t at = 0; at < out.size(); at += period.size()) {
        std::memcpy(out.data() + at, period.data(), std::min(period.size(), out.size() - at));
      }
      return out;
    }
  }
  const Filler f(a);
  std::uint8_t* p = out.data();
  switch (dtype_bits(a.dtype)) {
    case 4:
      f.each(n, [&](std::int64_t i, std::uint64_t b) { store_element(out, a.dtype, i, b); });
      break;
    case 8:
      f.each(n, [&](std::int64_t i, std::uint64_t b) { p[i] = static_cast<std::uint8_t>(b); });
      break;
    case 16:
      f.each(n, [&](std::int64_t i, std::uint64_t b) {
        const auto v = static_cast<std::uint16_t>(b);
        std::memcpy(p + 2 * i, &v, 2);
      });
      break;
    case 32:
      f.each(n, [&](std::int64_t i, std::uint64_t b) {
        const auto v = static_cast<std::uint32_t>(b);
        std::memcpy(p + 4 * i, &v, 4);
      });
      break;
    default:
      f.each(n, [&](std::int64_t i, std::uint64_t b) { std::memcpy(p + 8 * i, &b, 8); });
  }
  return out;
}

std::shared_ptr<const std::vector<std::uint8_t>> shared_fill_bytes(const ArraySpec& a) {
  constexpr std::int64_t kMaxBytes = std::int64_t{4} << 20;
  constexpr std::size_t kKept = 8;
  struct Kept {
    DType dtype;
    Fill fill;
    Shape shape;
    std::shared_ptr<const std::vector<std::uint8_t>> bytes;
  };
  thread_local std::array<Kept, kKept> kept{};
  thread_local std::size_t next = 0;
  for (const Kept& k : kept) {
    // (a kept `values` fill holds its values alive: equal pointers are equal contents)
    if (k.bytes && k.dtype == a.dtype && k.fill == a.fill && k.shape == a.shape) return k.bytes;
  }
  auto bytes = std::make_shared<const std::vector<std::uint8_t>>(fill_bytes(a));
  if (static_cast<std::int64_t>(bytes->size()) <= kMaxBytes) {
    kept[next] = Kept{a.dtype, a.fill, a.shape, bytes};
    next = (next + 1) % kKept;
  }
  return bytes;
}

}  // namespace collfuzz
