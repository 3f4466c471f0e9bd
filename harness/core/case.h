// The case: a mesh, a target, GMEM inputs and outputs, and a small Pallas Mosaic GPU kernel
// program. Everything in collfuzz speaks this type; docs/case-format.md is its JSON form.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "harness/core/axis_name.h"
#include "harness/core/dtype.h"
#include "harness/core/jax_version.h"
#include "harness/core/limits.h"

namespace collfuzz {

using Shape = std::vector<std::int64_t>;

// ---------------------------------------------------------------------------------------------
// Mesh and target

struct Mesh {
  Shape grid;
  AxisNames grid_names;
  Shape cluster;
  AxisNames cluster_names;
  std::optional<std::int64_t> num_threads;
  std::optional<std::string> thread_name;
};

enum class Arch : std::uint8_t { kSm80, kSm90a, kSm100a };
enum class Semantics : std::uint8_t { kLane, kWarpgroup };
enum class Entry : std::uint8_t { kKernel, kPallasCall };
enum class Profile : std::uint8_t { kMosaic, kInterpret };

struct Target {
  Arch arch = Arch::kSm90a;
  Semantics semantics = Semantics::kWarpgroup;
  Entry entry = Entry::kKernel;
  Profile profile = Profile::kMosaic;
  // The JAX release the case is judged by. `jax_pinned`: the case names it (target.jax) or --jax
  // set it; an unpinned case is judged by each executor's own JAX release (its hello), and by
  // kDefaultJaxVersion where no executor says.
  JaxVersion jax = kDefaultJaxVersion;
  bool jax_pinned = false;
};

// ---------------------------------------------------------------------------------------------
// GMEM arrays

enum class FillPattern : std::uint8_t { kIota, kRandom, kConstant, kArange, kValues, kJaxRandom };

struct Fill {
  FillPattern pattern = FillPattern::kIota;
  std::uint64_t seed = 0;
  std::int64_t value = 0;  // kConstant
  std::int64_t start = 0;  // kArange: element i is start + i * step
  std::int64_t step = 1;
  // kValues: every element's bit pattern (in the low dtype_bits bits), row-major; shared, so that
  // copying a case (the shrinker, the campaign) does not copy them.
  std::shared_ptr<const std::vector<std::uint64_t>> values = nullptr;
  // kJaxRandom: jax.random.key(seed), split by each (n, i) in order (split(key, n)[i]); the
  // elements are jax.random.uniform's (float dtypes) or jax.random.bits' (unsigned dtypes).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> split;
};

// The same contents: every field of the pattern, the values compared element by element.
bool operator==(const Fill& a, const Fill& b);

struct ArraySpec {
  std::string name;
  Shape shape;
  DType dtype = DType::kFloat32;
  Fill fill;  // inputs only
};

// ---------------------------------------------------------------------------------------------
// Conditions (pl.when guards and copy predicates) over cluster and thread axis indices

enum class CmpOp : std::uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };

struct Cond {
  enum class Kind : std::uint8_t { kConst, kAtom, kAll, kAny, kNot };
  Kind kind = Kind::kConst;
  bool constant = true;  // kConst
  // kConst: the value of lax.axis_index of a warp axis, bound per warp by expand_warp_maps
  // (warp_map.h). JAX traces it: pl.when traces and lowers the body whatever the value.
  bool traced = false;
  std::string axis;            // kAtom: a cluster axis or the thread axis
  CmpOp op = CmpOp::kEq;       // kAtom
  std::int64_t value = 0;      // kAtom
  std::vector<Cond> children;  // kAll, kAny, kNot (one child)
};

// ---------------------------------------------------------------------------------------------
// Indexing of GMEM refs: `ref.at[i, pl.ds(start, size), ...]`

// `loop_info.index[d]` of a `plgpu.nd_loop` (docs/case-format.md, "nd_loop"): with
// step = trip * axis_size + a, where a is lax.axis_index of the collective axes (several flattened
// row-major), the sum over its pieces of (step / stride % extent) * scale: one piece, or two with
// a tiling (the tile's index times the tile, plus the index inside the tile).
struct NdCoord {
  std::vector<std::string> axes;
  std::vector<std::int64_t> axis_sizes;
  std::int64_t axis_size = 1;  // the product of axis_sizes (lax.axis_size)
  struct Piece {
    std::int64_t stride = 1;
    std::int64_t extent = 1;
    std::int64_t scale = 1;
  };
  std::vector<Piece> pieces;
};

// lax.axis_index(axes) of an nd_loop's collective axes: their indices flattened row-major.
template <typename AxisIndex>
std::int64_t flat_axis_index(const std::vector<std::string>& axes,
                             const std::vector<std::int64_t>& sizes, const AxisIndex& axis_index) {
  std::int64_t a = 0;
  for (std::size_t k = 0; k < axes.size(); ++k) a = a * sizes[k] + axis_index(axes[k]);
  return a;
}

template <typename AxisIndex>
std::int64_t nd_axis_index(const NdCoord& nd, const AxisIndex& axis_index) {
  return flat_axis_index(nd.axes, nd.axis_sizes, axis_index);
}

// The value of `nd` on trip `trip` of the executing thread.
template <typename AxisIndex>
std::int64_t nd_value(const NdCoord& nd, const AxisIndex& axis_index, std::int64_t trip) {
  const std::int64_t step = trip * nd.axis_size + nd_axis_index(nd, axis_index);
  std::int64_t v = 0;
  for (const NdCoord::Piece& p : nd.pieces) v += step / p.stride % p.extent * p.scale;
  return v;
}

// One more term of a dynamic index: axis_index(axis) * mul, or, with `loop`, i * mul (i a loop's
// index, or, with `nd`, a coordinate of an nd_loop's grid index).
struct DynTerm {
  std::string axis;
  std::int64_t mul = 1;
  bool loop = false;
  std::shared_ptr<const NdCoord> nd = nullptr;  // `loop`: the name is an nd_loop's index[d]
};

// The value a term (`loop`, `axis`, `nd`) reads for the executing thread on `loop_iteration`.
template <typename AxisIndex>
std::int64_t dyn_term_value(bool loop, const std::string& axis, const NdCoord* nd,
                            const AxisIndex& axis_index, std::int64_t loop_iteration) {
  if (!loop) return axis_index(axis);
  return nd ? nd_value(*nd, axis_index, loop_iteration) : loop_iteration;
}

// start = axis_index(axis) * mul + add, or, with `loop`, i * mul + add where i is the index of
// the enclosing loop whose `index` is `axis` (`lax.fori_loop(0, n, lambda i, c: ...)`), plus the
// terms of `plus` (`lax.axis_index("a") * 128 + lax.axis_index("b") * 64`: an index summed over
// several axes, GMEM index entries only).
struct DynStart {
  std::string axis;
  std::int64_t mul = 1;
  std::int64_t add = 0;
  bool loop = false;
  std::int64_t mod = 0;  // > 0: (v * mul + add) % mod, `lax.rem` (a pipeline's slot: i % 2)
  std::vector<DynTerm> plus = {};
  // > 0: `pl.multiple_of(start, multiple_of)` around the whole value, which it leaves unchanged:
  // Warpgroup's layout inference takes it as proof (mgpu.dialect.assume_multiple); Lane drops it.
  std::int64_t multiple_of = 0;
  std::shared_ptr<const NdCoord> nd = nullptr;  // `loop`: the name is an nd_loop's index[d]
};

// The value of a dynamic index without `plus` terms for `v` (the axis index, or the loop's trip).
inline std::int64_t dyn_value(const DynStart& d, std::int64_t v) {
  const std::int64_t x = v * d.mul + d.add;
  return d.mod > 0 ? x % d.mod : x;
}

// The value of a dynamic index where `axis_index(name)` gives each axis's index and
// `loop_iteration` is the enclosing loop's trip.
template <typename AxisIndex>
std::int64_t dyn_eval(const DynStart& d, const AxisIndex& axis_index, std::int64_t loop_iteration) {
  std::int64_t x =
      dyn_term_value(d.loop, d.axis, d.nd.get(), axis_index, loop_iteration) * d.mul + d.add;
  for (const DynTerm& t : d.plus)
    x += dyn_term_value(t.loop, t.axis, t.nd.get(), axis_index, loop_iteration) * t.mul;
  return d.mod > 0 ? x % d.mod : x;
}

// Folds every term of `d` (its own and its `plus` ones) that `fixed(axis, loop)` gives a value
// into `add`; returns the static value when no term is left, else nullopt (a term left takes the
// own term's place when that one was folded).
template <typename Fixed>
std::optional<std::int64_t> dyn_fold(DynStart& d, const Fixed& fixed) {
  std::vector<DynTerm> left;
  for (const DynTerm& t : d.plus) {
    if (const std::optional<std::int64_t> v = fixed(t.axis, t.loop)) {
      d.add += *v * t.mul;
    } else {
      left.push_back(t);
    }
  }
  d.plus = std::move(left);
  if (const std::optional<std::int64_t> v = fixed(d.axis, d.loop)) {
    d.add += *v * d.mul;
    if (d.plus.empty()) return d.mod > 0 ? d.add % d.mod : d.add;
    d.axis = d.plus.front().axis;
    d.mul = d.plus.front().mul;
    d.loop = d.plus.front().loop;
    d.nd = d.plus.front().nd;
    d.plus.erase(d.plus.begin());
  }
  return std::nullopt;
}

struct IndexEntry {
  enum class Kind : std::uint8_t { kAt, kSlice };
  Kind kind = Kind::kSlice;
  std::int64_t at = 0;                // kAt: an integer index (squeezes the dim)
  std::int64_t start = 0;             // kSlice, static start
  std::optional<DynStart> dyn_start;  // kSlice: a dynamic start; kAt: a dynamic integer index
  std::int64_t size = 0;              // kSlice
  bool whole = false;                 // kSlice: written ":" (slice(None)), start 0, size the dim
  // expand_warp_maps bound the warp axis of a pl.multiple_of(...) start to a value: the kernel
  // still computes pl.multiple_of in the warp context (which has no lowering rule for it).
  bool folded_multiple_of = false;
};

// The index an entry starts at along its dim: `at` or `start`, or the dynamic value
// axis_index(axis) * mul + add, where `axis_index` gives the executing thread's index, or
// i * mul + add for a loop index, where `loop_iteration` is the enclosing loop's current trip.
template <typename AxisIndex>
std::int64_t index_start(const IndexEntry& e, const AxisIndex& axis_index,
                         std::int64_t loop_iteration) {
  if (!e.dyn_start) return e.kind == IndexEntry::Kind::kAt ? e.at : e.start;
  return dyn_eval(*e.dyn_start, axis_index, loop_iteration);
}

// ---------------------------------------------------------------------------------------------
// Scoped allocations

enum class AllocKind : std::uint8_t {
  kSmem,
  kBarrier,
  kClusterBarrier,
  kAcc,
  kGmem,
  kSemaphore,
  kTmem,
};

enum class SemaphoreKind : std::uint8_t { kRegular, kBarrier };

// An SMEM allocation's layout transforms (`plgpu.SMEM(..., transforms=...)`), in JAX's order:
// plgpu.TilingTransform of the trailing dims, then plgpu.SwizzleTransform. The buffer's bytes
// are laid out by them (harness/core/smem_layout.h); refs to it stay in its logical shape.
struct SmemTransforms {
  Shape tiling;              // empty: no TilingTransform
  std::int64_t swizzle = 0;  // bytes; 0: no SwizzleTransform
  bool any() const { return !tiling.empty() || swizzle != 0; }
  bool operator==(const SmemTransforms&) const = default;
};

struct Alloc {
  std::string name;
  AllocKind kind = AllocKind::kSmem;
  Shape shape;                      // smem, acc, gmem, tmem, semaphore (may be `()`)
  DType dtype = DType::kFloat32;    // smem, acc, gmem, tmem
  std::int64_t num_arrivals = 1;    // barrier, cluster_barrier
  std::int64_t num_barriers = 1;    // barrier, cluster_barrier
  bool scalar_ref = false;          // barrier, cluster_barrier: `num_barriers: []`, JAX's default
                                    // `()`, one barrier whose ref is 0-d (used without `.at[]`)
  bool orders_tensor_core = false;  // barrier, cluster_barrier
  AxisNames collective_axes;        // cluster_barrier (an entry may group several axes)
  bool leader_tracked = false;      // cluster_barrier
  SemaphoreKind semaphore = SemaphoreKind::kRegular;  // semaphore
  bool collective = false;                            // tmem
  SmemTransforms transforms;                          // smem
};

struct BarrierUse {
  std::string alloc;
  std::optional<std::int64_t> index;  // absent: the ref is used without `.at[i]`
  // `.at[slot]` with a loop's slot (`bars.at[i % 2]`): `index` is then 0 and stands for it.
  std::optional<DynStart> slot = std::nullopt;
};

// Entry k of an SMEM ref's leading indices at a loop's trip: the slot for entry 0 when there is
// one.
inline std::int64_t smem_index_at(const std::vector<std::int64_t>& index,
                                  const std::optional<DynStart>& slot, std::size_t k,
                                  std::int64_t loop_iteration) {
  return k == 0 && slot ? dyn_value(*slot, loop_iteration) : index[k];
}

// The barrier a use names at a loop's trip `loop_iteration`: its slot there, or its index.
inline std::int64_t barrier_index_at(const BarrierUse& u, std::int64_t loop_iteration) {
  return u.slot ? dyn_value(*u.slot, loop_iteration) : u.index.value_or(0);
}

// ---------------------------------------------------------------------------------------------
// Ops

struct Op;
using Body = std::vector<Op>;

struct RunScoped {
  AxisNames collective_axes;  // pl.run_scoped(..., collective_axes=...); absent in JSON is ()
  std::vector<Alloc> allocs;
  Body body;
  // The case's scratch_shapes (harness/core/scratch_shapes.h): this is the one op of the program,
  // and the JSON writes it as `scratch_shapes` while its axes are the ones JAX gives them.
  bool scratch_shapes = false;
};

enum class LeaderTracked : std::uint8_t { kNone, kPartitioned, kReplicated };
enum class OobMode : std::uint8_t { kUndefined = 0, kPromiseInBounds = 1, kZeros = 2 };
// JAX's TMAReductionOp (launch_context.py): what a reducing TMA store does to each GMEM element.
enum class ReductionOp : std::uint8_t {
  kAdd,
  kMin,
  kMax,
  kInc,
  kDec,
  kAnd,
  kOr,
  kXor,
  kUmin,
  kUmax,
  kSmin,
  kSmax
};

// `ref.transpose(permutation)` of a copy's SMEM ref after its indexing (or the deprecated
// `plgpu.transpose_ref(ref, permutation)`, `via_transpose_ref`): the copy sees the ref's dims in
// that order, its GMEM slice having the transposed shape (docs/case-format.md, "Transposed SMEM
// refs").
struct SmemTranspose {
  std::vector<std::int64_t> permutation;
  bool via_transpose_ref = false;
};

// Whether `t` keeps the last `tiled` dims (a tiling's) as a set but not in their order: under
// Warpgroup the compiler commutes such a transpose into the tiling itself, which the case
// language does not model (docs/case-format.md, "Transposed SMEM refs").
inline bool transpose_reorders_tiled_dims(const SmemTranspose& t, std::size_t tiled) {
  const std::size_t n = t.permutation.size();
  if (tiled < 2 || tiled > n) return false;
  bool in_order = true;
  bool same_set = true;
  for (std::size_t k = n - tiled; k < n; ++k) {
    in_order = in_order && t.permutation[k] == static_cast<std::int64_t>(k);
    same_set = same_set && t.permutation[k] >= static_cast<std::int64_t>(n - tiled);
  }
  return same_set && !in_order;
}

// Whether Warpgroup's dialect lowering, which recovers a transposed SMEM ref's permutation by
// sorting the view's dims by their strides (dialect_lowering.py, a stable sort), finds another
// order than `t`'s: only where a dim of size 1 ties with its neighbour. Not modelled: not
// expressible (docs/case-format.md, "Transposed SMEM refs").
inline bool transpose_order_by_strides_differs(const SmemTranspose& t, const Shape& ref_shape) {
  const std::size_t n = t.permutation.size();
  if (n != ref_shape.size()) return false;
  std::vector<std::int64_t> stride(n, 1);
  for (std::size_t j = n; j-- > 1;) stride[j - 1] = stride[j] * ref_shape[j];
  std::vector<std::size_t> by_stride(n);  // view dims, by the stride of the ref dim they are
  for (std::size_t k = 0; k < n; ++k) by_stride[k] = k;
  std::stable_sort(by_stride.begin(), by_stride.end(), [&](std::size_t a, std::size_t b) {
    return stride[static_cast<std::size_t>(t.permutation[a])] >
           stride[static_cast<std::size_t>(t.permutation[b])];
  });
  for (std::size_t j = 0; j < n; ++j) {
    if (t.permutation[by_stride[j]] != static_cast<std::int64_t>(j)) return true;
  }
  return false;
}

// `shape` transposed: its dims in the order of `t` (none: as is).
inline Shape transposed_shape(const Shape& shape, const std::optional<SmemTranspose>& t) {
  if (!t) return shape;
  Shape out;
  for (const std::int64_t p : t->permutation) out.push_back(shape[static_cast<std::size_t>(p)]);
  return out;
}

struct CopyGmemToSmem {
  std::string src;  // an input
  std::vector<IndexEntry> src_index;
  std::string dst;                      // an smem allocation
  std::vector<std::int64_t> dst_index;  // leading integer indices into the allocation
  // The leading index as a loop's slot (`smem.at[i % 2]`): dst_index[0] is then 0 and stands for
  // it.
  std::optional<DynStart> dst_slot = std::nullopt;
  // `dst.at[..., pl.ds(start, size)]`: a slice of the first dim after dst_index (kSlice; its
  // start static or dynamic); the dims after it stay whole.
  std::optional<IndexEntry> dst_slice = std::nullopt;
  std::optional<SmemTranspose> dst_transpose = std::nullopt;  // after the index
  std::optional<BarrierUse> barrier;
  std::optional<AxisNames> collective_axes;  // nullopt: None
  LeaderTracked leader_tracked = LeaderTracked::kNone;
  std::int64_t partition_axis = 0;  // kPartitioned
  std::optional<OobMode> oob_mode;  // nullopt: None
  std::optional<Cond> predicate;    // nullopt: no predicate argument
};

struct CopySmemToGmem {
  std::string src;  // an smem allocation
  std::vector<std::int64_t> src_index;
  std::optional<DynStart> src_slot =
      std::nullopt;  // the leading index as a loop's slot (see dst_slot)
  std::optional<IndexEntry> src_slice = std::nullopt;         // see CopyGmemToSmem::dst_slice
  std::optional<SmemTranspose> src_transpose = std::nullopt;  // after the index
  std::string dst;                                            // an output
  std::vector<IndexEntry> dst_index;
  // `reduction_op=`: the store combines each element with the output's (a cp.reduce.async.bulk).
  std::optional<ReductionOp> reduction_op = std::nullopt;
  // `predicate=`: the store happens only where the condition holds.
  std::optional<Cond> predicate = std::nullopt;
  // `commit_group=`: false leaves the store outside any bulk async-group until a later
  // commit_smem_to_gmem_group (or the next store that commits) commits it.
  bool commit_group = true;
  // `plgpu.commit_smem()` right before the store (JAX's idiom): false leaves it out, and the store
  // may read SMEM that the thread's vector stores wrote without a fence (a race).
  bool commit_smem = true;
  // true: the op is JAX's idiom `commit_smem(); copy_smem_to_gmem(...); wait_smem_to_gmem(0)`;
  // false: no wait follows, and the store stays in flight until a wait_smem_to_gmem retires its
  // group (docs/case-format.md, "Store groups").
  bool wait = true;
};

// `plgpu.commit_smem_to_gmem_group()`: the thread's uncommitted stores become one bulk
// async-group (cp.async.bulk.commit_group; an empty group when there are none).
struct CommitSmemToGmemGroup {};

// `plgpu.wait_smem_to_gmem(n, wait_read_only=...)`: waits until at most the n most recent groups
// the thread committed are pending; with wait_read_only, only until they finished reading SMEM.
struct WaitSmemToGmem {
  std::int64_t n = 0;  // JAX raises at trace for n < 0 (rule trace.wait_smem_to_gmem.n)
  bool read_only = false;
};

// A vector value (docs/case-format.md, "vector_store"): a tree whose leaves are constants and
// loads of a ref, every node of the destination's shape and dtype. The arithmetic is the dtype's:
// integers wrap, floats round to nearest even once per op (harness/core/vector_arith.h).
enum class VectorKind : std::uint8_t {
  kConst,
  kLoadSmem,
  kLoadInput,
  kAdd,
  kSub,
  kMul,
  kMin,      // jnp.minimum (lax.min_p)
  kMax,      // jnp.maximum (lax.max_p)
  kConvert,  // value.astype(dtype) (lax.convert_element_type): args[0] of dtype `from`
  kAnd,      // a & b (lax.and_p), integer dtypes only
  kOr,       // a | b (lax.or_p)
  kXor,      // a ^ b (lax.xor_p)
  // Shifts by a constant amount in [0, bits) (args[1] a kConst), integer dtypes only:
  kShiftLeft,             // lax.shift_left(a, c), a << c
  kShiftRightLogical,     // lax.shift_right_logical(a, c): zeros in from the top
  kShiftRightArithmetic,  // lax.shift_right_arithmetic(a, c): copies of the top bit in
  // plgpu.layout_cast(lax.broadcasted_iota(dtype, shape, dimension),
  //                   plgpu.Layout.WG_STRIDED(shape, vec_size=vec_size)): each element's index
  // along `dimension`, as the dtype (integers wrap, floats round to nearest even).
  kIota,
  // lax.broadcast_in_dim(a, shape, broadcast_dims): args[0] of shape `broadcast_shape`, whose
  // dim k is the node's dim broadcast_dims[k]. Along new leading dims (broadcast_dims the trailing
  // ones: jnp.broadcast_to(a, shape)) element j is a's element j % a's count.
  kBroadcast,
  // The value a loop carries (`ref` its name): inside the loop's body and its `next`, the trip's
  // incoming value; after the loop, its result (docs/case-format.md, "Loop-carried values").
  kCarry,
};

// Whether `k` is one of the bitwise ops, which Mosaic GPU allows on 8-bit integers
// (FragmentedArray._pointwise(restrict_bitwidth=False)) where it refuses arithmetic.
constexpr bool is_bitwise(VectorKind k) {
  return k == VectorKind::kAnd || k == VectorKind::kOr || k == VectorKind::kXor;
}

// Whether `k` is a shift: integer dtypes only, its amount a constant below the width (Mosaic GPU's
// arith.shli/shrui/shrsi through FragmentedArray._pointwise, which refuses 8-bit dtypes).
constexpr bool is_shift(VectorKind k) {
  return k == VectorKind::kShiftLeft || k == VectorKind::kShiftRightLogical ||
         k == VectorKind::kShiftRightArithmetic;
}

struct VectorValue {
  VectorKind kind = VectorKind::kConst;
  std::uint64_t bits = 0;  // kConst: the constant's bit pattern in the dtype
  double number = 0;       // kConst: the constant as the case writes it
  // kLoadSmem: `alloc.at[index...][...]` (leading integer indices, a loop slot for entry 0).
  // kLoadInput: the input; kCarry: the carry's name.
  std::string ref;
  std::vector<std::int64_t> smem_index;
  std::optional<DynStart> smem_slot = std::nullopt;
  // kLoadSmem: `plgpu.cluster_ref(ref, {cluster_axis: index})[...]`, a DSMEM read of the SMEM of
  // the cluster's CTA whose index along the plain cluster axis `cluster_axis` is `cluster_index`
  // (its axis empty: the constant `add`; else lax.axis_index(axis) * mul + add, mul possibly
  // negative, `lax.rem` by mod if set). cluster_axis empty: the CTA's own SMEM.
  std::string cluster_axis;
  DynStart cluster_index;
  // kLoadSmem: the allocation's transforms (a tiled and swizzled ref loads in the WGMMA layout,
  // harness/core/wgmma_transfer.h; docs/case-format.md "Vector values of transformed refs").
  SmemTransforms smem_transforms;
  // kLoadInput: `x_ref.at[entries][...]`.
  std::vector<IndexEntry> gmem_index;
  std::vector<VectorValue> args;  // binary ops (kAdd ... kMax, kAnd ... kShift*): the two
                                  // operands; kConvert: one
  DType from = DType::kFloat32;   // kConvert: the operand's dtype
  // kIota: the dimension of the value's shape whose index it holds, and the vec_size of the
  // strided layout it is cast to (JAX raises where 128 * vec_size does not divide the count).
  std::int64_t iota_dimension = 0;
  std::int64_t iota_vec_size = 1;
  // kIota: false for an iota written without the layout cast ({"layout_cast": false}): Lane
  // refuses it (lower.vector.iota_uncast), Warpgroup's layout inference lays it out as it lays
  // out a load (a multiple of 128 elements; iota_vec_size then holds the strided layout's).
  bool iota_layout_cast = true;
  Shape broadcast_shape;  // kBroadcast: the operand's shape
  // kBroadcast: where the operand's dims go in the node's shape, strictly increasing; empty for
  // the trailing ones (new leading dims only: jnp.broadcast_to, the one broadcast of a strided
  // value that Mosaic GPU lowers).
  Shape broadcast_dims;
  // kCarry: whether the carried value has a register layout of its own (its init or its next
  // loads a ref or holds an iota), which a value of constants only does not (a splat).
  bool carry_own_layout = false;
};

// Where a broadcast's operand dim k goes in the node's shape.
inline std::size_t broadcast_dim(const VectorValue& b, std::size_t rank, std::size_t k) {
  return b.broadcast_dims.empty() ? rank - b.broadcast_shape.size() + k
                                  : static_cast<std::size_t>(b.broadcast_dims[k]);
}

// The element of a broadcast's operand that the node's element `e` (row-major in `shape`) reads:
// along new leading dims the operand repeats (e modulo its count); otherwise its element at the
// node element's coordinates along the dims it goes to, 0 along a dim of size 1 it broadcasts.
inline std::int64_t broadcast_source(const VectorValue& b, const Shape& shape, std::int64_t e) {
  bool repeats = b.broadcast_dims.empty();
  std::int64_t count = 1;
  for (std::size_t k = 0; k < b.broadcast_shape.size(); ++k) {
    count *= b.broadcast_shape[k];
    repeats = repeats && b.broadcast_shape[k] == shape[broadcast_dim(b, shape.size(), k)];
  }
  if (repeats) return e % count;
  std::int64_t coord[limits::kMaxRank] = {};  // the parser bounds every rank
  for (std::size_t d = shape.size(); d-- > 0;) {
    coord[d] = e % shape[d];
    e /= shape[d];
  }
  std::int64_t src = 0;
  for (std::size_t k = 0; k < b.broadcast_shape.size(); ++k) {
    const std::int64_t c = b.broadcast_shape[k] == 1 ? 0 : coord[broadcast_dim(b, shape.size(), k)];
    src = src * b.broadcast_shape[k] + c;
  }
  return src;
}

// Calls f on every load of `v` (a VectorValue or a const one), depth first.
template <typename V, typename F>
void for_each_vector_load(V& v, const F& f) {
  if (v.kind == VectorKind::kLoadSmem || v.kind == VectorKind::kLoadInput) f(v);
  for (auto& a : v.args) for_each_vector_load(a, f);
}

// Whether `holds` is true of `v` or of any value below it (depth first, stopping at the first).
template <typename F>
bool any_vector_node(const VectorValue& v, const F& holds) {
  if (holds(v)) return true;
  for (const VectorValue& a : v.args)
    if (any_vector_node(a, holds)) return true;
  return false;
}

// `dst_ref.at[index][...] = value`: the warpgroup's synchronous vector store into an output
// (st.global from every lane) or into an SMEM allocation (st.shared: a generic-proxy write that a
// TMA store sees only after the thread's commit_smem).
struct VectorStore {
  std::string dst;  // an output, or an smem allocation when to_smem
  std::vector<IndexEntry> dst_index;
  bool to_smem = false;
  std::vector<std::int64_t> smem_index;  // to_smem: leading integer indices
  std::optional<DynStart> smem_slot = std::nullopt;
  // to_smem: `plgpu.cluster_ref(ref, {cluster_axis: index})[...] = value`, a DSMEM write into
  // the SMEM of the cluster's CTA at that index along the axis (VectorValue's fields of the same
  // names); cluster_axis empty: the CTA's own.
  std::string cluster_axis;
  DynStart cluster_index;
  SmemTransforms smem_transforms;  // to_smem: the allocation's
  VectorValue value;
};

// Whether `v` loads a transformed SMEM allocation (its value then has the WGMMA layout where the
// compiler accepts it).
inline bool loads_transformed_smem(const VectorValue& v) {
  return any_vector_node(v, [](const VectorValue& n) {
    return n.kind == VectorKind::kLoadSmem && n.smem_transforms.any();
  });
}

// `plgpu.commit_smem()`: fence.proxy.async.shared::cta, after which the thread's earlier SMEM
// writes through the generic proxy (vector stores) are visible to TMA stores.
struct CommitSmem {};

struct BarrierArrive {
  BarrierUse barrier;
};

// `plgpu.try_cluster_cancel(result, barrier, collective_axes=...)` (cluster launch control,
// docs/case-format.md "try_cluster_cancel"): every Pallas thread arrives once on `barrier`,
// arming 16 bytes when it is the first along the thread axis (if named; every thread otherwise);
// such a thread of a CTA at index 0 along every named cluster axis issues
// clusterlaunchcontrol.try_cancel, whose 16-byte response lands in `result` of every CTA of the
// cluster with a complete_tx of 16 bytes on each CTA's `barrier`.
struct TryClusterCancel {
  std::string result;                      // an SMEM allocation
  std::vector<std::int64_t> result_index;  // its leading integer indices (`res.at[1]`), if any
  BarrierUse barrier;
  std::vector<std::string> collective_axes;  // cluster axes or the thread axis
};

// The shape of a try_cluster_cancel's result ref: the allocation's dims past its index.
inline Shape cancel_result_shape(const TryClusterCancel& tc, const Alloc& result) {
  return Shape(result.shape.begin() + static_cast<std::ptrdiff_t>(tc.result_index.size()),
               result.shape.end());
}

struct BarrierWait {
  BarrierUse barrier;
  // `plgpu.barrier_arrive_and_wait(bar)` (JAX 0.12.0.1): an arrival on the barrier, then the wait.
  bool arrive_first = false;
};

// The barrier an op arrives at (barrier_arrive, barrier_arrive_and_wait), or nullptr.
inline const BarrierUse* arrival_barrier(const Op& op);

struct When {
  Cond cond;
  Body body;
};

// `lax.fori_loop(0, trip_count, lambda i, c: body, None)`: the body runs trip_count times (a
// static count) on every thread that reaches the loop; barrier phases carry across iterations.
// The body holds no run_scoped (docs/case-format.md, "loop").
struct Loop {
  std::int64_t trip_count = 1;
  Body body;
  // The name of the loop's index (`lambda i, carry`), which dynamic index entries in the body may
  // use (`{"loop": name}`); empty when the case does not name it.
  std::string index;
  // `acc = lax.fori_loop(0, n, body, init)` with `body` returning `next`: the one vector value the
  // loop carries, or none (docs/case-format.md, "Loop-carried values").
  struct Carry {
    std::string name;
    DType dtype = DType::kFloat32;
    Shape shape;       // a multiple of 128 elements
    VectorValue init;  // evaluated when the thread reaches the loop
    VectorValue next;  // evaluated at the end of each trip, after the body's ops
  };
  std::optional<Carry> carry = std::nullopt;
  // `@plgpu.nd_loop(grid, collective_axes=axes, tiling=tiling)` (docs/case-format.md,
  // "nd_loop"): a fori_loop whose trip count is each thread's own, G // S + (a < G % S) (G the
  // grid's size, S lax.axis_size(axes), a lax.axis_index(axes)); `trip_count` is then the most
  // trips any thread runs and `index` names loop_info.local_index.
  struct Nd {
    Shape grid;
    Shape tiling;  // empty: none
    std::vector<std::string> axes;
    bool axes_tuple = false;  // written as an array (a Python tuple)
    std::vector<std::int64_t> axis_sizes;
    std::int64_t axis_size = 1;
    std::vector<std::string> index_names;  // loop_info.index; "" where unnamed
    // Whether JAX's checks of the tiling pass (trace.nd_loop.*): the coordinates exist.
    bool tiling_valid() const;
    std::int64_t grid_size() const;
    // The trips of the thread whose lax.axis_index(axes) is `a`.
    std::int64_t trips(std::int64_t a) const;
  };
  std::optional<Nd> nd = std::nullopt;
};

// The trips a thread runs of `l`: its trip_count, or for an nd_loop the thread's own count.
template <typename AxisIndex>
std::int64_t loop_trips(const Loop& l, const AxisIndex& axis_index) {
  if (!l.nd) return l.trip_count;
  return l.nd->trips(flat_axis_index(l.nd->axes, l.nd->axis_sizes, axis_index));
}

// `pl.core_map(plgpu.WarpMesh(axis_name=axis))(body)`: the body runs on each of the 4 warps of
// the warpgroup, `lax.axis_index(axis)` being the warp's index (docs/case-format.md, "warp_map").
// The reference and the lowering see it expanded (harness/core/warp_map.h).
struct WarpMap {
  std::string axis;
  Body body;
};

struct Op {
  std::string path;  // JSON path of the op, e.g. $.program[1].body[0]
  std::variant<RunScoped, CopyGmemToSmem, CopySmemToGmem, BarrierArrive, BarrierWait, When, Loop,
               WarpMap, CommitSmemToGmemGroup, WaitSmemToGmem, VectorStore, CommitSmem,
               TryClusterCancel>
      v;
  // Set only in a case expanded by expand_warp_maps (harness/core/warp_map.h):
  std::string warp_axis;       // the op runs in the warp context of the warp_map over this axis
  bool from_warp_map = false;  // a When(true) standing for a warp_map: each warp's copy of its body
  std::int64_t warp = -1;      // the warp whose copy of a warp_map's body holds the op
};

// ---------------------------------------------------------------------------------------------

struct Case {
  int format = 1;
  std::string name;
  std::string notes;
  Mesh mesh;
  Target target;
  std::vector<ArraySpec> inputs;
  std::vector<ArraySpec> outputs;
  Body program;
};

inline const BarrierUse* arrival_barrier(const Op& op) {
  if (const auto* ar = std::get_if<BarrierArrive>(&op.v)) return &ar->barrier;
  if (const auto* wt = std::get_if<BarrierWait>(&op.v); wt && wt->arrive_first) return &wt->barrier;
  if (const auto* tc = std::get_if<TryClusterCancel>(&op.v)) return &tc->barrier;
  return nullptr;
}

// The ops nested in `op` (a run_scoped's, a when's, a loop's or a warp_map's body), or nullptr.
const Body* nested_body(const Op& op);
Body* nested_body(Op& op);

// Names for enums, as the JSON format spells them.
const char* to_string(Arch a);
const char* to_string(Semantics s);
const char* to_string(Entry e);
const char* to_string(Profile p);
const char* to_string(AllocKind k);
const char* to_string(OobMode m);
const char* to_string(ReductionOp op);
const char* to_string(FillPattern p);
const char* to_string(CmpOp op);

int arch_major(Arch a);
std::int64_t element_count(const Shape& s);  // callers have checked overflow at parse time

}  // namespace collfuzz
