// The case reader: vector values and vector stores (docs/case-format.md, "vector_store").

#include <algorithm>

#include <nlohmann/json.hpp>

#include "harness/core/case_json_fields.h"
#include "harness/core/case_parser.h"
#include "harness/core/errors.h"
#include "harness/core/json_reader.h"
#include "harness/core/limits.h"
#include "harness/core/pyrepr.h"
#include "harness/core/vector_layout.h"
#include "harness/core/vector_ops.h"

namespace collfuzz::case_json {

namespace {

// The dtypes a vector store holds: JAX's strided vector layout takes 8-, 16- and 32-bit elements
// (WGStridedFragLayout), and 64-bit dtypes need jax_enable_x64.
bool vector_dtype(DType d) {
  switch (d) {
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
      return true;
    default:
      return false;
  }
}

// A shift's amount: any value of the dtype (a load, an iota, a computed value: element-wise), or
// a constant below the width. A computed amount at or past the width is XLA's rule on the CPU and
// poison on the hardware (vector_binary: unspecified, not compared); a constant one would make
// every element so, and is refused.
void check_shift_amount(const VectorValue& amount, const std::string& at, DType dtype) {
  const int bits = dtype_bits(dtype);
  if (amount.kind != VectorKind::kConst) return;
  if (!(amount.number >= 0 && amount.number < bits)) {
    throw InputError(at + ".const", "a shift by " +
                                        std::to_string(static_cast<std::int64_t>(amount.number)) +
                                        " on " + std::string(dtype_name(dtype)) +
                                        ": a constant amount is 0 to " + std::to_string(bits - 1) +
                                        " (at or past the width LLVM's shift is poison while "
                                        "XLA's shifts every bit out: not expressible)");
  }
}

// {"iota": {"dimension": d, "vec_size": v}}: plgpu.layout_cast(lax.broadcasted_iota(dtype, shape,
// d), plgpu.Layout.WG_STRIDED(shape, vec_size=v)). Lane's iota lowers only with a layout cast right
// after it, so the case language writes one, strided (the layout a load of the dtype has, unless
// `vec_size` says otherwise). `vec_size`: a power of two up to 64 // bits (what one register vector
// of the strided layout holds); default the strided layout's for the dtype and count (1 where the
// count is no multiple of 128: JAX then raises, rule lower.vector.iota_layout).
//
// {"iota": {"dimension": d, "layout_cast": false}}: lax.broadcasted_iota(dtype, shape, d) as it
// is, with no cast (Lane's lowering refuses it; Warpgroup's layout inference lays it out).
void parse_iota(const json& arg, const std::string& at, const Shape& shape, DType dtype,
                VectorValue& v) {
  jr::object(arg, at, {"dimension", "vec_size", "layout_cast"});
  const std::string dim_at = at + ".dimension";
  v.iota_dimension = jr::integer(jr::required(arg, at, "dimension"), dim_at, -1024, 1024);
  if (v.iota_dimension < 0 || v.iota_dimension >= static_cast<std::int64_t>(shape.size())) {
    throw InputError(dim_at, "dimension " + std::to_string(v.iota_dimension) +
                                 " of a value of rank " + std::to_string(shape.size()) +
                                 ": an iota's dimension is 0 to the rank less one (JAX raises "
                                 "at trace otherwise, not modelled)");
  }
  const int bits = dtype_bits(dtype);
  const std::int64_t max_vec = 64 / bits;
  if (const json* cast = jr::member(arg, "layout_cast")) {
    v.iota_layout_cast = jr::boolean(*cast, at + ".layout_cast");
    if (v.iota_layout_cast) {
      throw InputError(at + ".layout_cast",
                       "true is the default (the iota cast to a strided layout): leave it out, "
                       "or write false for an iota with no layout cast");
    }
    if (jr::member(arg, "vec_size")) {
      throw InputError(at + ".vec_size",
                       "an iota with \"layout_cast\": false has no vec_size (its layout is "
                       "JAX's to infer)");
    }
  }
  if (const json* vec = jr::member(arg, "vec_size")) {
    const std::string vec_at = at + ".vec_size";
    v.iota_vec_size = jr::integer(*vec, vec_at, -1024, 1024);
    if (v.iota_vec_size < 1 || v.iota_vec_size > max_vec ||
        (v.iota_vec_size & (v.iota_vec_size - 1)) != 0) {
      throw InputError(vec_at, "vec_size " + std::to_string(v.iota_vec_size) + " on " +
                                   std::string(dtype_name(dtype)) +
                                   ": the case language casts an iota to a strided layout of "
                                   "1, 2, 4 ... up to " +
                                   std::to_string(max_vec) +
                                   " elements a vector (64 bits; wider ones are not modelled)");
    }
  } else {
    v.iota_vec_size = std::max<std::int64_t>(1, strided_vec_size(bits, element_count(shape)));
  }
  // Mosaic GPU's FragmentedArray.foreach gives element i of a register vector the index of the
  // vector's first element plus i in the minor dimension only, so where a vector crosses into the
  // next row (the minor dimension no multiple of vec_size) the iota's values are wrong: a JAX bug
  // (ci/known-jax-bugs.json, iota_strided_vector_crosses_rows), not expressible.
  if (shape.back() % v.iota_vec_size != 0) {
    throw InputError(
        at + (v.iota_layout_cast ? ".vec_size" : ".layout_cast"),
        "an iota of shape " + py::tuple_of_ints(shape) +
            (v.iota_layout_cast ? " cast to vec_size "
                                : " with no layout cast (the strided layout Warpgroup "
                                  "infers has vec_size ") +
            std::to_string(v.iota_vec_size) + (v.iota_layout_cast ? "" : ")") +
            ": its register vectors cross rows of the minor dimension, where JAX's "
            "FragmentedArray.foreach computes wrong indices (known JAX bug "
            "iota_strided_vector_crosses_rows, ci/known-jax-bugs.json)" +
            (v.iota_layout_cast ? "; give a vec_size that divides " + std::to_string(shape.back()) +
                                      " (not expressible otherwise)"
                                : std::string(": not expressible")));
  }
}

// A broadcast's operand shape and where its dims go in the node's shape (`dims`, strictly
// increasing; by default the trailing ones: jnp.broadcast_to). Each operand dim has the size of
// the node's dim it goes to, or 1 (a size-1 dim broadcast, lax.broadcast_in_dim's own rule); the
// operand has a lower rank than the node, or the same with a dim of 1 broadcast; along the
// trailing dims it holds a multiple of 128 elements (the strided layout's; a smaller one is not
// modelled there). Along other dims any count: Lane refuses every operand, Warpgroup every one but
// constants (tools/jax_probe_broadcasts.py).
void parse_broadcast_shape(const json& arg, const std::string& at, const Shape& shape,
                           VectorValue& v) {
  const std::string shape_at = at + ".shape";
  const json& j = jr::required(arg, at, "shape");
  jr::array(j, shape_at, shape.size());
  Shape s;
  for (std::size_t k = 0; k < j.size(); ++k)
    s.push_back(jr::integer(j[k], jr::index_path(shape_at, k), 1, std::int64_t{1} << 31));
  if (s.empty()) {
    throw InputError(shape_at, "a broadcast's operand has one dim or more");
  }
  Shape dims;
  if (const json* d = jr::member(arg, "dims")) {
    const std::string dims_at = at + ".dims";
    jr::array(*d, dims_at, shape.size());
    if (d->size() != s.size()) {
      throw InputError(dims_at, "expected " + std::to_string(s.size()) +
                                    " dims (one per dim of the operand's shape " +
                                    py::tuple_of_ints(s) + "), got " + std::to_string(d->size()));
    }
    for (std::size_t k = 0; k < d->size(); ++k) {
      const std::string k_at = jr::index_path(dims_at, k);
      dims.push_back(jr::integer((*d)[k], k_at, 0, static_cast<std::int64_t>(shape.size()) - 1));
      if (k > 0 && dims[k] <= dims[k - 1])
        throw InputError(k_at, "broadcast dims are strictly increasing");
    }
  }
  bool trailing = true;
  for (std::size_t k = 0; k < dims.size(); ++k)
    trailing = trailing && dims[k] == static_cast<std::int64_t>(shape.size() - s.size() + k);
  if (trailing) dims.clear();  // the default: the trailing dims
  bool expands = false;
  for (std::size_t k = 0; k < s.size(); ++k) {
    const std::size_t to =
        dims.empty() ? shape.size() - s.size() + k : static_cast<std::size_t>(dims[k]);
    if (s[k] != shape[to] && s[k] != 1) {
      throw InputError(shape_at, "a broadcast of " + py::tuple_of_ints(s) + " to " +
                                     py::tuple_of_ints(shape) + ": the operand's dim " +
                                     std::to_string(k) + " is neither the value's dim " +
                                     std::to_string(to) + " nor 1");
    }
    expands = expands || s[k] != shape[to];
  }
  if (s.size() > shape.size() || (s.size() == shape.size() && !expands)) {
    throw InputError(shape_at, "a broadcast of " + py::tuple_of_ints(s) + " to " +
                                   py::tuple_of_ints(shape) +
                                   ": the operand has a lower rank than the value, or the same "
                                   "with a dim of 1 broadcast");
  }
  if (dims.empty() && element_count(s) % 128 != 0) {
    throw InputError(shape_at, "a broadcast of " + py::tuple_of_ints(s) +
                                   ": along the trailing dims the operand holds a multiple of 128 "
                                   "elements (smaller ones are not modelled)");
  }
  v.broadcast_shape = std::move(s);
  v.broadcast_dims = std::move(dims);
}

}  // namespace

VectorValue CaseParser::parse_vector_value(const json& j, const std::string& path,
                                           const Shape& shape, DType dtype, int depth) {
  if (depth > limits::kMaxDepth) {
    throw InputError(
        path, "a vector value is nested more than " + std::to_string(limits::kMaxDepth) + " deep");
  }
  if (!j.is_object() || j.size() != 1) {
    throw InputError(
        path,
        "expected a vector value: an object with one of const, load, carry, iota, broadcast, "
        "add, sub, mul, min, max, and, or, xor, shift_left, shift_right_logical, "
        "shift_right_arithmetic, convert");
  }
  VectorValue v;
  const std::string key = j.begin().key();
  const json& arg = j.begin().value();
  const std::string at = jr::key_path(path, key);
  if (key == "const") {
    v.kind = VectorKind::kConst;
    v.bits = value_bits(arg, at, dtype);
    v.number = arg.get<double>();
    return v;
  }
  if (key == "carry") {
    // {"carry": name}: a loop's carried value in scope here, of the node's shape and dtype.
    v.kind = VectorKind::kCarry;
    v.ref = jr::identifier(arg, at);
    const auto c = std::find_if(carries_.rbegin(), carries_.rend(),
                                [&](const CarryInScope& k) { return k.name == v.ref; });
    if (c == carries_.rend()) {
      throw InputError(at, "no loop-carried value \"" + v.ref +
                               "\" is in scope here (a loop's carry is read in its body and "
                               "next, and after the loop in the same body)");
    }
    if (c->shape != shape || c->dtype != dtype) {
      throw InputError(at, "the carry \"" + v.ref + "\" is " + std::string(dtype_name(c->dtype)) +
                               py::tuple_of_ints(c->shape) + ", not " +
                               std::string(dtype_name(dtype)) + py::tuple_of_ints(shape) +
                               ", the value's there");
    }
    v.carry_own_layout = c->own_layout;
    return v;
  }
  if (key == "iota") {
    v.kind = VectorKind::kIota;
    parse_iota(arg, at, shape, dtype, v);
    return v;
  }
  if (key == "broadcast") {
    // {"broadcast": {"shape": S, "dims": D, "value": V}}: lax.broadcast_in_dim(V, shape, D), V
    // of shape S (jnp.broadcast_to(V, shape) without dims).
    jr::object(arg, at, {"shape", "dims", "value"});
    v.kind = VectorKind::kBroadcast;
    parse_broadcast_shape(arg, at, shape, v);
    v.args.push_back(parse_vector_value(jr::required(arg, at, "value"), at + ".value",
                                        v.broadcast_shape, dtype, depth + 1));
    return v;
  }
  if (key == "load") {
    if (!arg.is_object()) {
      throw InputError(at, std::string("expected a ref object, got ") + jr::type_name(arg));
    }
    Shape got;
    if (jr::member(arg, "alloc")) {
      jr::object(arg, at, {"alloc", "index", "cluster"});
      v.kind = VectorKind::kLoadSmem;
      if (const json* cl = jr::member(arg, "cluster"))
        parse_cluster_ref(*cl, at + ".cluster", v.cluster_axis, v.cluster_index);
      v.ref = jr::identifier(jr::required(arg, at, "alloc"), at + ".alloc");
      const Alloc* a = lookup_alloc(v.ref, at + ".alloc");
      if (a->kind != AllocKind::kSmem) {
        throw InputError(at + ".alloc", "\"" + v.ref + "\" is a " + to_string(a->kind) +
                                            " allocation; a vector load reads an smem "
                                            "allocation or an input");
      }
      v.smem_transforms = a->transforms;
      got =
          parse_smem_index(jr::member(arg, "index"), at + ".index", *a, v.smem_index, &v.smem_slot);
      if (a->dtype != dtype) {
        throw InputError(
            at, "the loaded ref has dtype " + std::string(dtype_name(a->dtype)) + ", not " +
                    std::string(dtype_name(dtype)) +
                    ", the dtype of the value there (the destination's, or a convert's \"from\")");
      }
    } else {
      jr::object(arg, at, {"input", "index"});
      v.kind = VectorKind::kLoadInput;
      v.ref = jr::identifier(jr::required(arg, at, "input"), at + ".input");
      const ArraySpec& in = lookup_array(c_.inputs, v.ref, at + ".input", "input");
      got = parse_gmem_index(jr::member(arg, "index"), at + ".index", in, v.gmem_index);
      for (std::size_t d = 0; d < v.gmem_index.size(); ++d) {
        check_store_slice_in_bounds(v.gmem_index[d], in.shape[d], jr::index_path(at + ".index", d));
      }
      if (in.dtype != dtype) {
        throw InputError(
            at, "the loaded ref has dtype " + std::string(dtype_name(in.dtype)) + ", not " +
                    std::string(dtype_name(dtype)) +
                    ", the dtype of the value there (the destination's, or a convert's \"from\")");
      }
    }
    if (got != shape) {
      throw InputError(at,
                       "the loaded ref must have the destination's shape (broadcasting is "
                       "not modelled)");
    }
    return v;
  }
  if (key == "convert") {
    // {"convert": {"from": DTYPE, "value": VALUE}}: VALUE (of dtype `from`).astype(dtype).
    jr::object(arg, at, {"from", "value"});
    v.kind = VectorKind::kConvert;
    v.from = parse_dtype_field(jr::required(arg, at, "from"), at + ".from");
    if (!vector_dtype(v.from)) {
      throw InputError(at + ".from",
                       "a conversion from " + std::string(dtype_name(v.from)) + " to " +
                           std::string(dtype_name(dtype)) +
                           ": the case language converts between float32, float16, bfloat16, "
                           "int8, int16, int32, uint8, uint16 and uint32");
    }
    if (v.from == dtype) {
      throw InputError(at + ".from", "the value is " + std::string(dtype_name(dtype)) +
                                         " already (astype to its own dtype is no conversion)");
    }
    v.args.push_back(parse_vector_value(jr::required(arg, at, "value"), at + ".value", shape,
                                        v.from, depth + 1));
    return v;
  }
  for (const auto& [name, kind] : binary_vector_ops()) {
    if (key != name) continue;
    jr::array(arg, at, 2);
    if (arg.size() != 2) throw InputError(at, "expected two operands");
    v.kind = kind;
    if (is_bitwise(kind) && dtype_info(dtype).is_float) {
      throw InputError(at, "a bitwise " + key + " on " + std::string(dtype_name(dtype)) +
                               ": jnp's &, | and ^ take integers (on floats JAX raises a "
                               "TypeError at trace, not modelled)");
    }
    if (is_shift(kind) && dtype_info(dtype).is_float) {
      throw InputError(at, "a " + key + " on " + std::string(dtype_name(dtype)) +
                               ": lax's shifts take integers (on floats JAX raises a "
                               "TypeError at trace, not modelled)");
    }
    v.args.push_back(parse_vector_value(arg[0], jr::index_path(at, 0), shape, dtype, depth + 1));
    v.args.push_back(parse_vector_value(arg[1], jr::index_path(at, 1), shape, dtype, depth + 1));
    if (is_shift(kind)) check_shift_amount(v.args[1], jr::index_path(at, 1), dtype);
    return v;
  }
  throw InputError(
      at, "unknown vector value \"" + key +
              "\"; expected const, load, iota, broadcast, add, sub, mul, min, max, and, or, "
              "xor, shift_left, shift_right_logical, shift_right_arithmetic or "
              "convert");
}

void CaseParser::refuse_transformed_carry(const VectorValue& v, const std::string& path) const {
  if (loads_transformed_smem(v)) {
    throw InputError(path,
                     "a carried value that loads a transformed smem allocation is not "
                     "expressible (a WGMMA-layout carry is not modelled)");
  }
}

Loop::Carry CaseParser::parse_carry(const json& j, const std::string& path) {
  jr::object(j, path, {"name", "dtype", "shape", "init", "next"});
  if (!warp_axes_.empty()) {
    throw InputError(path, "a loop inside a warp_map carries no value (a carry is a warpgroup's)");
  }
  Loop::Carry carry;
  carry.name = jr::identifier(jr::required(j, path, "name"), path + ".name");
  claim_name(carry.name, path + ".name");
  carry.dtype = parse_dtype_field(jr::required(j, path, "dtype"), path + ".dtype");
  if (!vector_dtype(carry.dtype)) {
    throw InputError(path + ".dtype", "a carried value of dtype " +
                                          std::string(dtype_name(carry.dtype)) +
                                          " is not modelled (the vector store's dtypes are)");
  }
  carry.shape = parse_shape(jr::required(j, path, "shape"), path + ".shape", 1);
  if (element_count(carry.shape) % 128 != 0) {
    throw InputError(path + ".shape",
                     "a carried value of " + std::to_string(element_count(carry.shape)) +
                         " elements: the case language carries a multiple of 128 (JAX's strided "
                         "layout for a warpgroup; other counts are not modelled)");
  }
  carry.init = parse_vector_value(jr::required(j, path, "init"), path + ".init", carry.shape,
                                  carry.dtype, 0);
  refuse_transformed_carry(carry.init, path + ".init");
  return carry;
}

namespace {

// Gives every {"carry": name} node of `v` the carried value's own-layout flag.
void set_carry_own_layout(VectorValue& v, const std::string& name, bool own) {
  if (v.kind == VectorKind::kCarry && v.ref == name) v.carry_own_layout = own;
  for (VectorValue& a : v.args) set_carry_own_layout(a, name, own);
}

}  // namespace

void CaseParser::parse_carry_next(const json& j, const std::string& path, Loop::Carry& carry) {
  // The carry has a layout of its own when its init or its next does (Warpgroup's layout
  // inference gives all three one layout); its own nodes in next read it as init's first.
  carries_.push_back(
      CarryInScope{carry.name, carry.shape, carry.dtype, has_own_layout(carry.init)});
  carry.next = parse_vector_value(jr::required(j, path, "next"), path + ".next", carry.shape,
                                  carry.dtype, 0);
  refuse_transformed_carry(carry.next, path + ".next");
  const bool own = has_own_layout(carry.init) || has_own_layout(carry.next);
  carries_.back().own_layout = own;
  set_carry_own_layout(carry.next, carry.name, own);
}

VectorStore CaseParser::parse_vector_store(const json& j, const std::string& path) {
  jr::object(j, path, {"op", "dst", "value"});
  VectorStore vs;
  const json& dst = jr::required(j, path, "dst");
  Shape shape;
  DType dtype = DType::kFloat32;
  std::string dst_field = path + ".dst.output";
  if (dst.is_object() && jr::member(dst, "alloc")) {
    // An SMEM ref: `smem.at[i...][...] = value`.
    jr::object(dst, path + ".dst", {"alloc", "index", "cluster"});
    vs.to_smem = true;
    dst_field = path + ".dst.alloc";
    vs.dst = jr::identifier(jr::required(dst, path + ".dst", "alloc"), dst_field);
    const Alloc* a = lookup_alloc(vs.dst, dst_field);
    if (a->kind != AllocKind::kSmem) {
      throw InputError(dst_field, "\"" + vs.dst + "\" is a " + to_string(a->kind) +
                                      " allocation; a vector store writes an smem allocation or "
                                      "an output");
    }
    vs.smem_transforms = a->transforms;
    shape = parse_smem_index(jr::member(dst, "index"), path + ".dst.index", *a, vs.smem_index,
                             &vs.smem_slot);
    dtype = a->dtype;
    if (const json* cl = jr::member(dst, "cluster"))
      parse_cluster_ref(*cl, path + ".dst.cluster", vs.cluster_axis, vs.cluster_index);
  } else {
    jr::object(dst, path + ".dst", {"output", "index"});
    vs.dst = jr::identifier(jr::required(dst, path + ".dst", "output"), dst_field);
    const ArraySpec& out = lookup_array(c_.outputs, vs.dst, dst_field, "output");
    shape = parse_gmem_index(jr::member(dst, "index"), path + ".dst.index", out, vs.dst_index);
    for (std::size_t d = 0; d < vs.dst_index.size(); ++d) {
      check_store_slice_in_bounds(vs.dst_index[d], out.shape[d],
                                  jr::index_path(path + ".dst.index", d));
    }
    dtype = out.dtype;
  }
  if (!vector_dtype(dtype)) {
    throw InputError(dst_field, "a vector store of dtype " + std::string(dtype_name(dtype)) +
                                    " is not modelled (float32, float16, bfloat16, int8, int16, "
                                    "int32, uint8, uint16, uint32 are)");
  }
  if (element_count(shape) < 2) {
    throw InputError(path + ".dst",
                     "a vector store of one element is JAX's scalar store, which is not "
                     "modelled (a vector store writes 2 or more elements)");
  }
  vs.value = parse_vector_value(jr::required(j, path, "value"), path + ".value", shape, dtype, 0);
  check_transformed_value(vs, path);
  return vs;
}

// What the case language holds of vector values that meet a transformed allocation (a WGMMA
// layout where the compiler accepts them; docs/case-format.md "Vector values of transformed
// refs"): no broadcast or iota beside them, no untransformed SMEM load (its transfer plan,
// plan_tiled_transfer's bank-conflict search, is not modelled), and such a value is stored into
// an output or a tiled allocation.
void CaseParser::check_transformed_value(const VectorStore& vs, const std::string& path) const {
  const bool into_transformed = vs.to_smem && vs.smem_transforms.any();
  if (!into_transformed && !loads_transformed_smem(vs.value)) return;
  const char* what = into_transformed ? "a vector store into a transformed smem allocation"
                                      : "a vector value that loads a transformed smem allocation";
  const bool other = any_vector_node(vs.value, [](const VectorValue& n) {
    return n.kind == VectorKind::kBroadcast || n.kind == VectorKind::kIota ||
           n.kind == VectorKind::kCarry ||
           (n.kind == VectorKind::kLoadSmem && !n.smem_transforms.any());
  });
  if (other) {
    throw InputError(path + ".value",
                     std::string(what) +
                         " holds no broadcast, iota, carry or load of an untransformed smem "
                         "allocation (not expressible: their layouts beside a WGMMA one are not "
                         "modelled)");
  }
  // Under Warpgroup, which tilings without a swizzle the layout inference lays out depends on
  // the dtype and the tile (probed 2026-12-07: minor tiles of 8 or 16 elements of 16- and 32-bit
  // dtypes, 16 or 32 of 8-bit ones, in 64 rows); that search is not modelled.
  const auto unswizzled = [](const SmemTransforms& t) {
    return !t.tiling.empty() && t.swizzle == 0;
  };
  if (c_.target.semantics == Semantics::kWarpgroup &&
      ((into_transformed && unswizzled(vs.smem_transforms)) ||
       any_vector_node(vs.value, [&](const VectorValue& n) {
         return n.kind == VectorKind::kLoadSmem && unswizzled(n.smem_transforms);
       }))) {
    throw InputError(path,
                     "under Warpgroup semantics, a vector load or store of an smem "
                     "allocation tiled without a swizzle is not expressible (which tilings "
                     "the layout inference accepts there is not modelled)");
  }
  if (vs.to_smem && !into_transformed && loads_transformed_smem(vs.value)) {
    throw InputError(path + ".dst",
                     "a vector value that loads a transformed smem allocation is stored into an "
                     "output or a tiled smem allocation (into an untransformed one its transfer "
                     "plan is not modelled)");
  }
  if (into_transformed && vs.smem_transforms.tiling.empty() && loads_transformed_smem(vs.value)) {
    throw InputError(path + ".dst",
                     "a vector store into an allocation swizzled without a tiling is not "
                     "expressible (its transfer plan is not modelled)");
  }
}

}  // namespace collfuzz::case_json
