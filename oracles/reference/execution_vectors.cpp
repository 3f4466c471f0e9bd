// The reference's execution: vector stores (docs/case-format.md, "vector_store"). The warpgroup
// evaluates the value element by element (harness/core/vector_arith.h) from the refs as they
// stand when the thread reaches the op, and stores it into the output slice at once: a
// synchronous st.global, ordered after the thread's earlier vector stores and its TMA stores that
// a wait_smem_to_gmem retired, unordered with its TMA stores still in flight (output_races.h).
// A TMA store after it over the same elements is unordered with it too: the vector store writes
// through the generic proxy and the TMA store through the async proxy, and no
// fence.proxy.async.global orders them (JAX emits none).
//
// Into SMEM the store is a generic-proxy write (st.shared) with SMEM race tracking (smem_races.h,
// execution_writes.h). A TMA store reads SMEM through the async proxy: it sees the thread's vector
// stores only after the thread's commit_smem (fence.proxy.async.shared::cta; copy_smem_to_gmem's
// own unless "commit_smem": false). Until then the written bytes are the thread's unfenced writes,
// and a TMA store (of any thread) that reads one of them races: its output elements are not
// compared (copy_out, execution_stores.cpp).

#include <algorithm>
#include <cstring>

#include "harness/core/pyrepr.h"
#include "harness/core/vector_arith.h"
#include "oracles/reference/execution_model.h"
#include "oracles/reference/execution_writes.h"

namespace collfuzz::ref::exec {

namespace {

// Where the elements of a slice lie in its array, in the slice's row-major order.
struct SliceWalk {
  std::int64_t origin = 0;
  std::vector<std::int64_t> along;  // per dim of the slice's shape: the array's stride
};

SliceWalk walk_of(const Shape& array_shape, const ResolvedSlice& s) {
  const RankStrides strides = row_major_rank_strides(array_shape);
  SliceWalk w;
  for (std::size_t i = 0; i < array_shape.size(); ++i) {
    w.origin += s.start[i] * strides[i];
    if (s.size[i] != 0) w.along.push_back(strides[i]);
  }
  return w;
}

std::int64_t element_at(const SliceWalk& w, const Shape& shape, std::int64_t e) {
  std::int64_t off = w.origin;
  for (std::size_t k = shape.size(); k-- > 0;) {
    off += (e % shape[k]) * w.along[k];
    e /= shape[k];
  }
  return off;
}

// Element e of a buffer as its bytes hold it: at its physical place in a transformed one.
std::int64_t physical_element(const std::vector<std::int64_t>* places, DType dtype,
                              std::int64_t e) {
  if (places == nullptr) return e;
  return (*places)[static_cast<std::size_t>(e)] / (dtype_bits(dtype) / 8);
}

}  // namespace

const std::vector<std::int64_t>* Execution::transformed_places(const Alloc& a) {
  if (!a.transforms.any()) return nullptr;
  const std::vector<std::int64_t>& p = places(a);
  return p.empty() ? nullptr : &p;
}

std::int64_t Execution::load_rank(const Thread& th, const VectorValue& load,
                                  const std::string& where) {
  if (load.cluster_axis.empty()) return th.rank;
  return cluster_rank(th, load.cluster_axis, load.cluster_index, where, load.ref, "reads");
}

std::int64_t Execution::cluster_rank(const Thread& th, const std::string& axis,
                                     const DynStart& index, const std::string& where,
                                     const std::string& ref, const char* what) {
  const std::int64_t k = index.axis.empty()
                             ? index.add
                             : dyn_value(index, mesh_.axis_index(th.rank, th.index, index.axis));
  ck_.check(
      RuleId::kInterpClusterRef, !mosaic_, where,
      [&] {
        return Holes{{"axis", py::repr_str(axis)},
                     {"idx", "Array(" + std::to_string(k) + ", dtype=int32)"}};
      },
      Stage::kRun);
  std::size_t pos = 0;
  while (pos < c_.mesh.cluster_names.size() &&
         (c_.mesh.cluster_names[pos].is_tuple || c_.mesh.cluster_names[pos].as_plain() != axis))
    ++pos;
  std::vector<std::int64_t> want = mesh_.coords(th.rank);
  want.at(pos) = k;
  std::int64_t peer = th.rank;  // the parser keeps the index inside the cluster
  for (std::int64_t r = 0; r < mesh_.num_ctas(); ++r) {
    if (mesh_.coords(r) == want) peer = r;
  }
  // explain (only then: this is the fast loop's path): which CTA's SMEM the access reaches, and
  // that nothing but the program's own synchronisation orders it against the peer's accesses.
  if (ck_.explaining()) {
    std::string note = "DSMEM: CTA " + std::to_string(th.rank) + " thread " +
                       std::to_string(th.index) + " at " + where + " " + what + " CTA " +
                       std::to_string(peer) + "'s " + ref + " (plgpu.cluster_ref over '" + axis +
                       "' = " + std::to_string(k) +
                       "); it sees or leaves the peer's SMEM as the canonical schedule has it "
                       "when the thread gets there (an access not ordered against the peer's by "
                       "a ClusterBarrier is a race on hardware, not predicted as one)";
    if (std::find(ck_.notes.begin(), ck_.notes.end(), note) == ck_.notes.end())
      ck_.notes.push_back(std::move(note));
  }
  return peer;
}

std::vector<VectorElement> Execution::vector_values(const Thread& th, const VectorValue& value,
                                                    const Shape& shape, DType dtype,
                                                    const std::string& where) {
  const auto axis = [&](const std::string& a) { return mesh_.axis_index(th.rank, th.index, a); };
  // Each load's source, resolved once for this thread and trip.
  struct Leaf {
    View smem;                                          // kLoadSmem
    std::int64_t base = 0;                              // kLoadSmem: the element the ref starts at
    const std::vector<std::int64_t>* places = nullptr;  // kLoadSmem of a transformed buffer
    const std::vector<std::uint8_t>* gmem = nullptr;    // kLoadInput
    SliceWalk walk;                                     // kLoadInput
  };
  std::map<const VectorValue*, Leaf> leaves;
  for_each_vector_load(value, [&](const VectorValue& load) {
    Leaf leaf;
    if (load.kind == VectorKind::kLoadSmem) {
      leaf.smem = buffer(load_rank(th, load, where), load.ref);
      leaf.base = smem_ref_base(load.ref, load.smem_index, load.smem_slot);
      leaf.places = transformed_places(*allocs_.at(load.ref));
    } else {
      const ArraySpec* in = nullptr;
      for (const auto& i : c_.inputs) {
        if (i.name == load.ref) in = &i;
      }
      leaf.gmem = &input_bytes(*in);
      leaf.walk = walk_of(in->shape, resolve_slice(in->shape, load.gmem_index, axis, iteration_));
    }
    leaves.emplace(&load, std::move(leaf));
  });
  // Who computes the arithmetic: the GPU under the compiler's profile, XLA's CPU backend under
  // interpret mode (their conversions and shifts differ where the result is not specified).
  const ComputedBy by = mosaic_ ? ComputedBy::kHardware : ComputedBy::kXlaCpu;
  // `d`, `sh`: the node's dtype (the store's, or a convert's operand's below it) and shape (the
  // store's, or a broadcast's operand's below it); `e`: the element, row-major over `sh`.
  std::function<VectorElement(const VectorValue&, std::int64_t, DType, const Shape&)> eval =
      [&](const VectorValue& v, std::int64_t e, DType d, const Shape& sh) -> VectorElement {
    switch (v.kind) {
      case VectorKind::kConst:
        return {v.bits, false};
      case VectorKind::kLoadSmem: {
        const Leaf& leaf = leaves.at(&v);
        const std::int64_t at = physical_element(leaf.places, leaf.smem.dtype, leaf.base + e);
        return {leaf.smem.load(at), leaf.smem.undefined(at)};
      }
      case VectorKind::kLoadInput: {
        const Leaf& leaf = leaves.at(&v);
        const int w = dtype_bits(d) / 8;
        std::uint64_t bits = 0;
        std::memcpy(&bits, leaf.gmem->data() + element_at(leaf.walk, sh, e) * w,
                    static_cast<std::size_t>(w));
        return {bits, false};
      }
      case VectorKind::kCarry:
        return th.carries.at(v.ref)[static_cast<std::size_t>(e)];
      case VectorKind::kIota: {
        // The element's index along the iota's dimension of the (row-major) value.
        std::int64_t inner = 1;
        for (std::size_t k = static_cast<std::size_t>(v.iota_dimension) + 1; k < sh.size(); ++k)
          inner *= sh[k];
        return {vector_iota(d, e / inner % sh[static_cast<std::size_t>(v.iota_dimension)]), false};
      }
      case VectorKind::kBroadcast:
        // New leading dims repeat the operand, row-major; other dims read the operand at the
        // element's coordinates along broadcast_dims.
        return eval(v.args[0], broadcast_source(v, sh, e), d, v.broadcast_shape);
      case VectorKind::kConvert: {
        const VectorElement a = eval(v.args[0], e, v.from, sh);
        VectorElement r = vector_convert(v.from, d, a.bits, by);
        r.unspecified = r.unspecified || a.unspecified;
        return r;
      }
      default: {
        const VectorElement a = eval(v.args[0], e, d, sh);
        const VectorElement b = eval(v.args[1], e, d, sh);
        VectorElement r = vector_binary(v.kind, d, a.bits, b.bits, by);
        r.unspecified = r.unspecified || a.unspecified || b.unspecified;
        return r;
      }
    }
  };
  const std::int64_t n = element_count(shape);
  std::vector<VectorElement> out(static_cast<std::size_t>(n));
  for (std::int64_t e = 0; e < n; ++e)
    out[static_cast<std::size_t>(e)] = eval(value, e, dtype, shape);
  return out;
}

std::int64_t Execution::smem_ref_base(const std::string& alloc,
                                      const std::vector<std::int64_t>& index,
                                      const std::optional<DynStart>& slot) const {
  const auto strides = row_major_strides(allocs_.at(alloc)->shape);
  std::int64_t base = 0;
  for (std::size_t k = 0; k < index.size(); ++k)
    base += smem_index_at(index, slot, k, iteration_) * strides[k];
  return base;
}

std::int64_t Execution::smem_ref_base(const Thread& th, const std::string& alloc,
                                      const std::vector<std::int64_t>& index,
                                      const std::optional<DynStart>& slot,
                                      const std::optional<IndexEntry>& slice) const {
  std::int64_t base = smem_ref_base(alloc, index, slot);
  if (!slice) return base;
  const Alloc& a = *allocs_.at(alloc);
  const std::size_t dim = index.size();
  std::int64_t start = slice->start;
  if (slice->dyn_start) {
    start = dyn_eval(
        *slice->dyn_start,
        [&](const std::string& axis) { return mesh_.axis_index(th.rank, th.index, axis); },
        iteration_);
    const Shape& tiling = a.transforms.tiling;
    if (mosaic_ && !tiling.empty() && dim + tiling.size() >= a.shape.size()) {
      const std::int64_t tile = tiling[dim + tiling.size() - a.shape.size()];
      start = (start + tile - 1) / tile * tile;
    }
  }
  return base + start * row_major_strides(a.shape)[dim];
}

void Execution::carry(Thread& th, const Loop::Carry& carry, bool next, const std::string& where) {
  // The whole value first: next reads the trip's value it replaces.
  std::vector<VectorElement> value =
      vector_values(th, next ? carry.next : carry.init, carry.shape, carry.dtype, where);
  th.carries[carry.name] = std::move(value);
}

void Execution::vector_store(Thread& th, const Op& op, const VectorStore& vs) {
  if (vs.to_smem) {
    vector_store_smem(th, op, vs);
    return;
  }
  const ArraySpec* out = nullptr;
  for (const auto& o : c_.outputs) {
    if (o.name == vs.dst) out = &o;
  }
  const auto axis = [&](const std::string& a) { return mesh_.axis_index(th.rank, th.index, a); };
  const ResolvedSlice dst_slice = resolve_slice(out->shape, vs.dst_index, axis, iteration_);
  const Shape& shape = dst_slice.shape;
  const SliceWalk dst_walk = walk_of(out->shape, dst_slice);
  const DType dtype = out->dtype;
  const std::vector<VectorElement> values = vector_values(th, vs.value, shape, dtype, op.path);

  std::vector<std::uint8_t>& written = written_.at(vs.dst);
  const std::vector<std::uint8_t> before_written = written;
  const std::vector<std::uint8_t> before = outputs_.at(vs.dst).bytes;
  std::fill(written.begin(), written.end(), kOutputUntouched);
  View dst{&outputs_.at(vs.dst), 0, dtype};
  for (std::size_t e = 0; e < values.size(); ++e) {
    const VectorElement& r = values[e];
    const std::int64_t d = element_at(dst_walk, shape, static_cast<std::int64_t>(e));
    dst.store(d, r.bits, r.unspecified);
    written[static_cast<std::size_t>(d)] = r.unspecified ? kOutputNotWritten : kOutputWritten;
  }
  const std::int64_t tid = thread_id(th);
  const std::vector<std::uint8_t>& now = outputs_.at(vs.dst).bytes;
  settle_output_store(
      written, before_written, output_writers_[vs.dst], store_writer(tid, kVectorStoreSeq),
      [&](std::int64_t i) { return load_element(before, dtype, i) != load_element(now, dtype, i); },
      [&](std::int64_t prev) {
        // Another thread's, or one of its own TMA stores still writing.
        return prev / kStoreSeqSpan != tid || (prev % kStoreSeqSpan != kVectorStoreSeq &&
                                               prev % kStoreSeqSpan >= th.stores.write_done());
      });
}

void Execution::vector_store_smem(Thread& th, const Op& op, const VectorStore& vs) {
  const Alloc* a = allocs_.at(vs.dst);
  const Shape shape(a->shape.begin() + static_cast<std::ptrdiff_t>(vs.smem_index.size()),
                    a->shape.end());
  // The value first: it may read the bytes it overwrites (`tile[...] = tile[...] + 1`).
  const std::vector<VectorElement> values = vector_values(th, vs.value, shape, a->dtype, op.path);
  // A DSMEM write (plgpu.cluster_ref): into the peer's SMEM, this thread its writer.
  const std::int64_t rank =
      vs.cluster_axis.empty()
          ? th.rank
          : cluster_rank(th, vs.cluster_axis, vs.cluster_index, op.path, vs.dst, "writes");
  View dst = buffer(rank, vs.dst);
  const std::int64_t base = smem_ref_base(vs.dst, vs.smem_index, vs.smem_slot);
  const auto [at, n] = byte_span(dst, base, static_cast<std::int64_t>(values.size()));
  writer_ = smem_writer(th.rank, mesh_.num_threads(), th.index);
  writing_op_ = &op;
  // A transformed buffer's element e lies at its physical place; a leading index's block of it is
  // as contiguous as the logical one (the transforms tile the trailing dims).
  const std::vector<std::int64_t>* places = transformed_places(*a);
  guarded_write(*dst.mem, at, n, [&] {
    for (std::size_t e = 0; e < values.size(); ++e)
      dst.store(physical_element(places, a->dtype, base + static_cast<std::int64_t>(e)),
                values[e].bits, values[e].unspecified);
  });
  if (mosaic_) th.unfenced.push_back(UnfencedWrite{dst.mem, at, at + n, &op.path});
}

}  // namespace collfuzz::ref::exec
