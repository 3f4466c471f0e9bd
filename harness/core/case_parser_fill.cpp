// The case reader: an input's fill (docs/case-format.md "Fills"). The recipe fills (iota, random,
// constant, arange) are small integers inside the dtype's fill range; an explicit `values` fill
// holds one JSON number per element, each exactly a value of the dtype, stored as its bit pattern.

#include <limits>

#include "harness/core/case_json_fields.h"
#include "harness/core/case_parser.h"
#include "harness/core/element_value.h"
#include "harness/core/errors.h"
#include "harness/core/fill.h"
#include "harness/core/jax_random.h"
#include "harness/core/json_reader.h"
#include "harness/core/limits.h"

namespace collfuzz::case_json {
namespace {

constexpr std::int64_t kInt32Min = -(std::int64_t{1} << 31);
constexpr std::int64_t kInt32Max = (std::int64_t{1} << 31) - 1;

std::string range_text(std::int64_t lo, std::int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

}  // namespace

// The bit pattern of one element of a `values` fill.
std::uint64_t value_bits(const json& v, const std::string& path, DType dtype) {
  const DTypeInfo& info = dtype_info(dtype);
  const std::uint64_t mask = info.bits == 64 ? ~0ull : ((1ull << info.bits) - 1);
  if (info.is_float) {
    if (!v.is_number()) {
      throw InputError(path, std::string("expected a number, got ") + jr::type_name(v));
    }
    double d = 0;
    bool exact = true;
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      d = static_cast<double>(u);
      exact = d < 0x1p64 && static_cast<std::uint64_t>(d) == u;
    } else if (v.is_number_integer()) {
      const auto s = v.get<std::int64_t>();
      d = static_cast<double>(s);
      exact = d < 0x1p63 && static_cast<std::int64_t>(d) == s;
    } else {
      d = v.get<double>();
    }
    const auto bits = exact ? exact_float_bits(dtype, d) : std::nullopt;
    if (!bits) {
      throw InputError(path, "value " + v.dump() + " is not exactly a finite value of " +
                                 std::string(info.name));
    }
    return *bits;
  }
  if (dtype == DType::kUInt64) return jr::unsigned_integer(v, path);
  std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  std::int64_t hi = std::numeric_limits<std::int64_t>::max();
  if (info.bits < 64) {
    lo = info.is_signed ? -(std::int64_t{1} << (info.bits - 1)) : 0;
    hi = info.is_signed ? (std::int64_t{1} << (info.bits - 1)) - 1
                        : (std::int64_t{1} << info.bits) - 1;
  }
  return static_cast<std::uint64_t>(jr::integer(v, path, lo, hi)) & mask;
}

namespace {

constexpr std::int64_t kMaxSplitKeys = std::int64_t{1} << 24;
constexpr std::size_t kMaxSplits = 16;

}  // namespace

// A `jax_random` fill: jax.random.uniform (float32, float16, bfloat16) or jax.random.bits
// (uint8, uint16, uint32) of jax.random.key(seed) split as listed.
void CaseParser::parse_jax_random(const json& j, const std::string& path, const ArraySpec& a,
                                  const json* distribution, const json* split, Fill& fill) {
  const std::string dt(dtype_name(a.dtype));
  if (!jax_random_dtype(a.dtype)) {
    throw InputError(path + ".pattern",
                     "a jax_random fill holds jax.random.uniform's float32, float16 or bfloat16, "
                     "or jax.random.bits' uint8, uint16 or uint32; this input is " +
                         dt);
  }
  if (!distribution) throw InputError(path + ".distribution", "missing required field");
  const std::string want = dtype_info(a.dtype).is_float ? "uniform" : "bits";
  const std::string got = jr::string(*distribution, path + ".distribution", 16);
  if (got != "uniform" && got != "bits") {
    throw InputError(path + ".distribution",
                     "unknown distribution \"" + got + "\" (expected \"uniform\" or \"bits\")");
  }
  if (got != want) {
    throw InputError(path + ".distribution", "jax.random." + got + " does not draw " + dt +
                                                 " (an input of " + dt + " is \"" + want + "\")");
  }
  if (const json* s = jr::member(j, "seed")) {
    fill.seed = static_cast<std::uint64_t>(jr::integer(*s, path + ".seed", 0, kInt32Max));
  }
  if (!split) return;
  const std::string sp = path + ".split";
  jr::array(*split, sp, kMaxSplits);
  for (std::size_t k = 0; k < split->size(); ++k) {
    const std::string ep = jr::index_path(sp, k);
    const json& e = (*split)[k];
    jr::array(e, ep, 2);
    if (e.size() != 2) throw InputError(ep, "expected [n, i]: key i of split(key, n)");
    const std::int64_t n = jr::integer(e[0], jr::index_path(ep, 0), 1, kMaxSplitKeys);
    const std::int64_t i = jr::integer(e[1], jr::index_path(ep, 1), 0, n - 1);
    fill.split.emplace_back(static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(i));
  }
}

Fill CaseParser::parse_fill(const json& j, const std::string& path, const ArraySpec& a) {
  jr::object(j, path,
             {"pattern", "seed", "value", "start", "step", "values", "distribution", "split"});
  Fill fill;
  fill.pattern = jr::choice(jr::required(j, path, "pattern"), path + ".pattern", kPatterns);
  const auto only_with = [&](std::string_view key, FillPattern p) {
    const json* m = jr::member(j, key);
    if (m && fill.pattern != p) {
      throw InputError(jr::key_path(path, key), std::string("only a fill of pattern \"") +
                                                    to_string(p) + "\" has this field");
    }
    return m;
  };
  if (const json* s = jr::member(j, "seed")) fill.seed = jr::unsigned_integer(*s, path + ".seed");
  if (const json* v = jr::member(j, "value"))
    fill.value = jr::integer(*v, path + ".value", kInt32Min, kInt32Max);
  const std::int64_t n = element_count(a.shape);
  const json* start = only_with("start", FillPattern::kArange);
  const json* step = only_with("step", FillPattern::kArange);
  const json* values = only_with("values", FillPattern::kValues);
  const json* distribution = only_with("distribution", FillPattern::kJaxRandom);
  const json* split = only_with("split", FillPattern::kJaxRandom);
  if (fill.pattern == FillPattern::kJaxRandom)
    parse_jax_random(j, path, a, distribution, split, fill);
  if (fill.pattern == FillPattern::kArange) {
    if (start) fill.start = jr::integer(*start, path + ".start", kInt32Min, kInt32Max);
    if (step) fill.step = jr::integer(*step, path + ".step", kInt32Min, kInt32Max);
    const auto [lo, hi] = fill_value_range(a.dtype);
    const std::string dt(dtype_name(a.dtype));
    if (fill.start < lo || fill.start > hi) {
      throw InputError(path + ".start", "start " + std::to_string(fill.start) + " is outside " +
                                            range_text(lo, hi) + ", the range a fill holds in " +
                                            dt + " exactly");
    }
    const std::int64_t last = fill.start + fill.step * (n - 1);  // |step * n| < 2^31 * 2^28
    if (last < lo || last > hi) {
      throw InputError(path + ".step",
                       "the last element (" + std::to_string(n - 1) + ") is " +
                           std::to_string(fill.start) + " + " + std::to_string(n - 1) + " * " +
                           std::to_string(fill.step) + " = " + std::to_string(last) + ", outside " +
                           range_text(lo, hi) + ", the range a fill holds in " + dt +
                           " exactly (an explicit \"values\" fill holds "
                           "any value of the dtype)");
    }
  }
  if (fill.pattern == FillPattern::kValues) {
    if (!values) throw InputError(path + ".values", "missing required field");
    const std::string vp = path + ".values";
    jr::array(*values, vp, static_cast<std::size_t>(limits::kMaxFillValues));
    if (static_cast<std::int64_t>(values->size()) != n) {
      throw InputError(vp, "holds " + std::to_string(values->size()) + " values for an array of " +
                               std::to_string(n) + " elements (one value per element, row-major)");
    }
    auto bits = std::make_shared<std::vector<std::uint64_t>>();
    bits->reserve(values->size());
    for (std::size_t i = 0; i < values->size(); ++i) {
      bits->push_back(value_bits((*values)[i], jr::index_path(vp, i), a.dtype));
    }
    fill.values = std::move(bits);
  }
  return fill;
}

}  // namespace collfuzz::case_json
