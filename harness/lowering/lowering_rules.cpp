#include "harness/lowering/lowering_rules.h"

#include <algorithm>
#include <map>

#include "harness/core/memref_text.h"
#include "harness/core/ndarray.h"
#include "harness/core/pyrepr.h"
#include "harness/core/vector_layout.h"
#include "harness/core/vector_ops.h"
#include "harness/lowering/case_lookup.h"
#include "harness/lowering/jax_facts.h"
#include "harness/lowering/lowering_error.h"
#include "harness/lowering/mutants.h"
#include "harness/lowering/rule_ids.h"
#include "harness/lowering/value_eqns.h"
#include "harness/lowering/warp_context.h"
#include "harness/lowering/wgmma_vectors.h"

namespace collfuzz::lowering {

AsyncCopyRequest load_request(const Case& c, const IrCopy& ic, Stage stage) {
  AsyncCopyRequest r;
  r.jax = jax_facts(c.target.jax);
  r.gmem = ic.src;
  r.index = &ic.copy->src_index;
  r.smem_shape = ic.dst_shape;
  r.smem_transforms = ic.transforms;
  if (ic.copy->dst_transpose) r.transpose = ic.copy->dst_transpose->permutation;
  r.gmem_to_smem = true;
  r.cp_async = ic.cp_async;
  r.collective = ic.collective;
  r.leader_tracked = ic.copy->leader_tracked;
  r.partition_axis = ic.copy->partition_axis;
  r.oob_mode = ic.oob_mode;
  r.stage = stage;
  r.op = ic.op->path;
  return r;
}

AsyncCopyRequest store_request(const Case& c, const IrStore& is, Stage stage) {
  AsyncCopyRequest r;
  r.jax = jax_facts(c.target.jax);
  r.gmem = &c.outputs[static_cast<std::size_t>(is.output)];
  r.index = &is.copy->dst_index;
  r.smem_shape = is.src_shape;
  r.smem_transforms = is.transforms;
  if (is.copy->src_transpose) r.transpose = is.copy->src_transpose->permutation;
  r.gmem_to_smem = false;
  r.oob_mode = OobMode::kUndefined;  // _copy_smem_to_gmem_lowering passes UNDEFINED
  r.reduction_op = is.copy->reduction_op;
  r.stage = stage;
  r.op = is.op->path;
  return r;
}

namespace {

class Lowerer {
 public:
  Lowerer(const Case& c, const ClusterGeometry& geometry, const ModuleLayout& layout, KernelIr& ir)
      : c_(c), geometry_(geometry), layout_(layout), lookup_(c), ir_(ir) {
    // runtime_barriers: the groups of each key, in rs.barriers order.
    for (std::size_t g = 0; g < layout.groups.size(); ++g) {
      pool(layout.groups[g].key).push_back(static_cast<std::int32_t>(g));
    }
  }

  void kernel(const TracedBody& body) {
    // plgpu.kernel: run_scoped(body, collective_axes=thread_name or ()) with no allocations.
    if (geometry_.thread_name())
      ir_.ops.push_back(IrOp{IrKind::kBlockSync, nullptr, 0, nullptr, false});
    lower(body);
  }

 private:
  const Case& c_;
  const ClusterGeometry& geometry_;
  const ModuleLayout& layout_;
  CaseLookup lookup_;
  KernelIr& ir_;
  std::int64_t smem_used_ = 0;
  std::vector<std::pair<BarrierKey, std::vector<std::int32_t>>> pools_;
  // The group each live barrier allocation holds.
  std::vector<std::pair<const Alloc*, std::int32_t>> reserved_;
  // Each loop carry's Lane vector length (0: a splat), init's inside its loop, next's after it.
  std::map<std::string, std::int64_t> carry_vec_;

  bool lane() const { return c_.target.semantics == Semantics::kLane; }
  bool cp_async() const { return arch_major(c_.target.arch) < 9; }
  std::int64_t arrival_multiplier() const { return lane() ? kWarpgroupLanes : 1; }

  std::vector<std::int32_t>& pool(const BarrierKey& key) {
    for (auto& [k, groups] : pools_) {
      if (k == key) return groups;
    }
    pools_.emplace_back(key, std::vector<std::int32_t>{});
    return pools_.back().second;
  }

  std::int32_t group_of(const Alloc* a) const {
    for (auto it = reserved_.rbegin(); it != reserved_.rend(); ++it) {
      if (it->first == a) return it->second;
    }
    return -1;
  }

  std::int32_t record_of(const Alloc* a, std::int64_t index) const {
    for (std::size_t r = 0; r < ir_.records.size(); ++r) {
      if (ir_.records[r].first == a && ir_.records[r].second == index)
        return static_cast<std::int32_t>(r);
    }
    return -1;
  }

  void lower(const TracedBody& body) {
    for (const TracedNode& n : body) {
      const Op& op = *n.op;
      check_warp_context(op, lookup_, c_.target);
      if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
        run_scoped(op, *rs, n.body);
      } else if (const auto* w = std::get_if<When>(&op.v)) {
        ir_.ops.push_back(IrOp{IrKind::kGuardBegin, &op, 0, &w->cond, true});
        lower(n.body);
        ir_.ops.push_back(IrOp{IrKind::kGuardEnd, &op, 0, nullptr, true});
      } else if (const auto* l = std::get_if<Loop>(&op.v)) {
        if (l->carry) carry_value(op, *l, false);  // init, traced before the loop
        IrOp begin{IrKind::kLoopBegin, &op, 0, nullptr, true};
        begin.trip_count = l->trip_count;
        ir_.ops.push_back(begin);
        lower(n.body);
        if (l->carry) carry_value(op, *l, true);  // next, the body's result, in every trip
        ir_.ops.push_back(IrOp{IrKind::kLoopEnd, &op, 0, nullptr, true});
      } else if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
        copy(op, *cp);
      } else if (const auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
        store(op, *st);
      } else if (const auto* ar = std::get_if<BarrierArrive>(&op.v)) {
        arrive(op, ar->barrier);
      } else if (const auto* wt = std::get_if<BarrierWait>(&op.v)) {
        if (wt->arrive_first) arrive(op, wt->barrier);  // _barrier_arrive_and_wait_lowering
        wait(op, wt->barrier);
      } else if (std::holds_alternative<CommitSmemToGmemGroup>(op.v)) {
        ir_.ops.push_back(
            IrOp{IrKind::kStoreCommit, &op, 0, nullptr, true});  // _commit_group_lowering
      } else if (std::holds_alternative<WaitSmemToGmem>(op.v)) {
        ir_.ops.push_back(IrOp{IrKind::kStoreWait, &op, 0, nullptr, true});  // await_async_copy
      } else if (const auto* vs = std::get_if<VectorStore>(&op.v)) {
        vector_store(op, *vs);
      } else if (std::holds_alternative<CommitSmem>(op.v)) {
        ir_.ops.push_back(IrOp{IrKind::kCommitSmem, &op, 0, nullptr, true});  // _commit_smem
      } else if (const auto* tc = std::get_if<TryClusterCancel>(&op.v)) {
        cluster_cancel(op, *tc);
      }
    }
  }

  // _run_scoped_lowering_rule.
  void run_scoped(const Op& op, const RunScoped& rs, const TracedBody& body) {
    const std::string* wg = geometry_.thread_name();
    const bool multithreaded = wg != nullptr;
    const bool is_wg_tuple =
        wg && rs.collective_axes.size() == 1 && rs.collective_axes[0] == AxisName::plain(*wg);
    const bool thread_collective = multithreaded && is_wg_tuple;
    if (!rs.collective_axes.empty() && !is_wg_tuple) {
      raise(Stage::kLower, "ValueError",
            "Only thread-collective allocations are supported in run_scoped.",
            rule_id::kScopedOnlyThread, op.path);
    }
    if (thread_collective) ir_.ops.push_back(IrOp{IrKind::kBlockSync, &op, 0, nullptr, true});

    const std::int64_t saved_smem = smem_used_;
    const std::size_t saved_reserved = reserved_.size();
    IrScope scope;
    scope.owners =
        rs.collective_axes.empty() ? 1 : static_cast<std::int32_t>(geometry_.threads_per_cta());
    for (const Alloc& a : rs.allocs) {
      if (a.kind == AllocKind::kAcc) {
        if (!rs.collective_axes.empty()) {
          raise(Stage::kLower, "ValueError",
                "WGMMA accumulators can only be allocated non-collectively. Hint: remove "
                "collective_axes from "
                "run_scoped. If other allocations are performed as well, split the run_scoped into "
                "two.",
                rule_id::kAccCollective, op.path);
        }
        const DTypeInfo& info = dtype_info(a.dtype);
        if (!info.is_float && !info.is_signed) {
          raise(
              Stage::kLower, "ValueError",
              "Invalid WGMMA accumulator dtype for s8/i8 WGMMA. Expected signed integer, but got " +
                  std::string(info.name) + ".",
              rule_id::kAccUnsigned, op.path);
        }
        ir_.uses_acc = true;
        continue;
      }
      if (a.kind == AllocKind::kSemaphore) continue;  // reserve_semaphores
      if (multithreaded && !thread_collective && !mutant_active(Mutant::kThreadAxisCheckSkipped)) {
        raise(
            Stage::kLower, "NotImplementedError",
            "Only thread-collective allocations are supported in multithreaded kernels. Hint: add "
            "collective_axes=" +
                *wg +
                " to your run_scoped if you intend all threads to share the same allocation "
                "(currently collective_axes=" +
                py::tuple_of_names(rs.collective_axes) + ").",
            rule_id::kMultithreaded, op.path);
      }
      if (a.kind == AllocKind::kBarrier || a.kind == AllocKind::kClusterBarrier) {
        std::vector<std::int32_t>& available =
            pool(barrier_key(a, arrival_multiplier(), geometry_));
        if (available.empty()) {
          raise(Stage::kLower, "RuntimeError", "Barrier is already reserved", "", op.path);
        }
        const std::int32_t group = available.back();
        available.pop_back();
        reserved_.emplace_back(&a, group);
        for (std::int64_t i = 0; i < a.num_barriers; ++i) {
          scope.records.push_back(static_cast<std::int32_t>(ir_.records.size()));
          ir_.records.emplace_back(&a, i);
          ir_.record_groups.push_back(group);
        }
      } else if (a.kind == AllocKind::kSmem) {
        scope.buffers.push_back(static_cast<std::int32_t>(ir_.buffers.size()));
        ir_.buffers.push_back(KernelIr::Buffer{&a, smem_used_});
        smem_used_ += align_to(element_count(a.shape) * dtype_bits(a.dtype) / 8, kSmemAlignment);
      }
    }
    const auto scope_index = static_cast<std::int32_t>(ir_.scopes.size());
    ir_.scopes.push_back(std::move(scope));
    ir_.ops.push_back(IrOp{IrKind::kScopeEnter, &op, scope_index, nullptr, true});
    lower(body);
    ir_.ops.push_back(IrOp{IrKind::kScopeExit, &op, scope_index, nullptr, true});
    // The ExitStack unwinds in reverse: every group goes back on its pool.
    while (reserved_.size() > saved_reserved) {
      const auto [alloc, group] = reserved_.back();
      reserved_.pop_back();
      pool(layout_.groups[static_cast<std::size_t>(group)].key).push_back(group);
    }
    smem_used_ = saved_smem;
  }

  IrBarrier barrier_operand(const BarrierUse& use) const {
    IrBarrier b;
    b.alloc = lookup_.alloc(use.alloc);
    b.group = group_of(b.alloc);
    b.index = use.index.value_or(0);
    b.record = record_of(b.alloc, b.index);
    if (use.slot) b.slot = &*use.slot;
    return b;
  }

  // BarrierRef.get_ptr on the (indexed) barrier ref.
  void check_single_barrier(const Op& op, const BarrierUse& use, const Alloc& a) const {
    if (!use.index && a.num_barriers != 1) {
      raise(Stage::kLower, "ValueError",
            "Operation is only valid for a single barrier, but barrier ref contains " +
                std::to_string(a.num_barriers) +
                ". Individual barriers can be accessed by indexing into the ref.",
            rule_id::kBarrierNotSingle, op.path);
    }
  }

  // _copy_gmem_to_smem_lowering.
  void copy(const Op& op, const CopyGmemToSmem& cp) {
    IrCopy ic;
    ic.op = &op;
    ic.copy = &cp;
    ic.src = lookup_.input(cp.src);
    ic.input = lookup_.input_index(cp.src);
    const Alloc& dst = *lookup_.alloc(cp.dst);
    // _handle_transforms(dst): a slice of a tiled ref commutes through its untiling.
    ic.slice = smem_slice(op, dst, cp.dst_index.size(), cp.dst_slice);
    ic.dst_shape = indexed_dst_shape(dst, cp.dst_index, cp.dst_slice);
    ic.transforms = dst.transforms;
    ic.smem = &dst;
    ic.smem_offset = smem_offset_of(dst, cp.dst_index, cp.dst_slot.has_value());
    if (cp.dst_slot) ic.slot_stride = slot_stride_of(dst);
    if (cp.barrier) ic.barrier = barrier_operand(*cp.barrier);

    if (cp.collective_axes) {
      for (const AxisName& axis : *cp.collective_axes) {
        const auto dim = geometry_.resolve_cluster_axis(axis);
        if (!dim) {
          raise(Stage::kLower, "LookupError",
                "Unknown cluster axis " + axis.str() +
                    ", available axes: " + geometry_.cluster_axes_repr(),
                rule_id::kCopyUnknownAxis, op.path);
        }
        ic.collective.push_back(*dim);
      }
    }
    ic.leader_tracked = !ic.collective.empty() && cp.leader_tracked != LeaderTracked::kNone;
    const std::int64_t bits = element_count(ic.dst_shape) * dtype_bits(dst.dtype);
    if (bits % 8) {
      raise(Stage::kLower, "ValueError",
            "Can only transfer integer bytes (shape=" + py::list_of_ints(ic.dst_shape) +
                ", dtype=" + std::string(dtype_info(dst.dtype).mlir) + ")",
            rule_id::kIntegerBytes, op.path);
    }
    ic.bytes = bits / 8;
    if (ic.leader_tracked) {
      if (!mutant_active(Mutant::kLeaderBytesNotDoubled))
        ic.bytes *= 2;  // both CTAs complete on the leader
      if (ic.collective.size() != 1) {
        raise(Stage::kLower, "ValueError",
              "Expected exactly one collective axis, got collective_axes=" +
                  py::tuple_of_names(*cp.collective_axes),
              rule_id::kLeaderOneAxis, op.path);
      }
      const auto& cl = geometry_.cuda();
      if (jax_facts(c_.target.jax).leader_on_last_axis_size_2) {
        if (ic.collective != std::vector<int>{0} || cl[0] != 2) {
          raise(Stage::kLower, "NotImplementedError",
                "Partitioned loads only supported along the last cluster dimension " +
                    (c_.mesh.cluster_names.empty() ? std::string("?")
                                                   : c_.mesh.cluster_names.front().str()) +
                    " if it has size 2. Got collective_axes=" +
                    py::tuple_of_names(*cp.collective_axes) + " and cluster size " +
                    py::tuple_of_ints(std::vector<std::int64_t>(cl.rbegin(), cl.rend())) + ".",
                rule_id::kLeaderLastAxis, op.path);
        }
      } else if (geometry_.num_ctas() != 2) {
        raise(Stage::kLower, "NotImplementedError",
              "Partitioned loads only supported for clusters of size 2. Got cluster size " +
                  py::tuple_of_ints(std::vector<std::int64_t>(cl.begin(), cl.end())) + ".",
              rule_id::kLeaderCluster2, op.path);
      }
    }
    ic.cp_async = cp_async();
    if (ic.cp_async) {
      if (cp.barrier) {
        raise(Stage::kLower, "ValueError",
              "copy_gmem_to_smem with a barrier is only supported Hopper and newer GPUs, which use "
              "the TMA "
              "implementation",
              rule_id::kCpAsyncBarrier, op.path);
      }
      if (cp.collective_axes) {
        raise(Stage::kLower, "ValueError", "Only the TMA implementation supports collective copies",
              rule_id::kCpAsyncCollective, op.path);
      }
      if (cp.leader_tracked != LeaderTracked::kNone) {
        raise(Stage::kLower, "ValueError",
              "Only the TMA implementation supports leader_tracked copies", "", op.path);
      }
      if (cp.oob_mode != OobMode::kPromiseInBounds) {
        raise(Stage::kLower, "ValueError",
              "The cp.async implementation only supports oob_mode=OOBFillMode.PROMISE_IN_BOUNDS",
              rule_id::kCpAsyncOob, op.path);
      }
      if (cp.predicate) {
        raise(Stage::kLower, "NotImplementedError",
              "The cp.async implementation does not support user-defined predicates",
              rule_id::kCpAsyncPredicate, op.path);
      }
      ic.oob_mode = OobMode::kPromiseInBounds;
    } else {
      ic.oob_mode = cp.oob_mode.value_or(OobMode::kZeros);
      if (!cp.barrier) {
        raise(Stage::kLower, "ValueError",
              "copy_gmem_to_smem without a barrier is only supported on pre-Hopper GPUs, which use "
              "the cp.async "
              "implementation",
              rule_id::kTmaNoBarrier, op.path);
      }
    }
    if (lane()) {
      if (!ic.cp_async) {
        const bool single_lane_arrive = ic.barrier->alloc->orders_tensor_core &&
                                        jax_facts(c_.target.jax).orders_tc_single_lane_arrive;
        if (ic.bytes % kWarpgroupLanes && !single_lane_arrive) {
          raise(Stage::kLower, "NotImplementedError",
                "Only copies transferring a number of bytes divisible by the warpgroup size are "
                "supported. Got "
                "bytes=" +
                    std::to_string(ic.bytes) + " but warpgroup size is 128",
                rule_id::kLaneBytes128, op.path);
        }
        check_single_barrier(op, *cp.barrier, *ic.barrier->alloc);  // barrier.arrive_expect_tx
      }
      ic.shape = prepare_async_copy(load_request(c_, ic, Stage::kLower), geometry_);
    } else if (!ic.cp_async) {
      check_single_barrier(op, *cp.barrier, *ic.barrier->alloc);  // barrier.as_barrier_memref()
    }
    ir_.uses_cta_group2 =
        ir_.uses_cta_group2 || (ic.leader_tracked && geometry_.collective_size(ic.collective) > 1);
    ir_.ops.push_back(
        IrOp{IrKind::kCopy, &op, static_cast<std::int32_t>(ir_.copies.size()), nullptr, true});
    ir_.copies.push_back(std::move(ic));
  }

  // UntilingTransform.commute_ndindexer over a slice of dim `dim` of `a`: a static start and the
  // size are whole tiles.
  static SmemSliceIr smem_slice(const Op& op, const Alloc& a, std::size_t dim,
                                const std::optional<IndexEntry>& slice) {
    SmemSliceIr out;
    if (!slice) return out;
    out.entry = &*slice;
    out.stride = element_count(a.shape) /
                 element_count(Shape(a.shape.begin(),
                                     a.shape.begin() + static_cast<std::ptrdiff_t>(dim + 1))) *
                 dtype_bits(a.dtype) / 8;
    const Shape& tiling = a.transforms.tiling;
    if (!tiling.empty() && dim + tiling.size() >= a.shape.size()) {
      out.tile = tiling[dim + tiling.size() - a.shape.size()];
      if ((!slice->dyn_start && slice->start % out.tile != 0) || slice->size % out.tile != 0) {
        raise(Stage::kLower, "ValueError",
              "Expected slice start (" + std::to_string(slice->start) + ") and slice size (" +
                  std::to_string(slice->size) + ") to be divisible by the tile size (" +
                  std::to_string(out.tile) + ")",
              rule_id::kSmemSliceTile, op.path);
      }
    }
    return out;
  }

  // The bytes between a.at[k] and a.at[k + 1].
  static std::int64_t slot_stride_of(const Alloc& a) {
    return element_count(a.shape) / a.shape.front() * dtype_bits(a.dtype) / 8;
  }

  // Where a.at[index...] starts; with `slotted`, index[0] is a loop's slot, added per trip by the
  // plan builder (slot_stride), so it counts as 0 here whatever the placeholder holds.
  std::int64_t smem_offset_of(const Alloc& a, const std::vector<std::int64_t>& index,
                              bool slotted) const {
    std::int64_t element = 0;
    std::int64_t stride = element_count(a.shape);
    for (std::size_t k = 0; k < index.size(); ++k) {
      stride /= a.shape[k];
      element += (k == 0 && slotted ? 0 : index[k]) * stride;
    }
    std::int64_t base = 0;
    for (const KernelIr::Buffer& b : ir_.buffers) {
      if (b.alloc == &a) base = b.smem_offset;
    }
    return base + element * dtype_bits(a.dtype) / 8;
  }

  [[noreturn]] void strided_elements(const Op& op, const std::string& memref,
                                     std::int64_t elements) {
    raise(Stage::kLower, "ValueError",
          memref + " must have a number of elements that is a multiple of 128 (got " +
              std::to_string(elements) + ")",
          rule_id::kVectorStridedElements, op.path);
  }
  std::string load_memref(const VectorValue& load) {
    if (load.kind == VectorKind::kLoadSmem) {
      const Alloc& a = *lookup_.alloc(load.ref);
      return memref_text(a.dtype, a.shape,
                         smem_index_entries(load.smem_index, load.smem_slot.has_value()), true,
                         !load.cluster_axis.empty());
    }
    const ArraySpec& x = *lookup_.input(load.ref);
    return memref_text(x.dtype, x.shape, load.gmem_index, false);
  }
  std::string dst_memref(const VectorStore& vs) {
    if (vs.to_smem) {
      const Alloc& a = *lookup_.alloc(vs.dst);
      return memref_text(a.dtype, a.shape,
                         smem_index_entries(vs.smem_index, vs.smem_slot.has_value()), true,
                         !vs.cluster_axis.empty());
    }
    const ArraySpec& o = c_.outputs[static_cast<std::size_t>(lookup_.output_index(vs.dst))];
    return memref_text(o.dtype, o.shape, vs.dst_index, false);
  }

  // WGStridedFragLayout.__post_init__'s error: ValueError((layout, 128)).
  static std::string strided_layout_error(const Shape& shape, std::int64_t vec) {
    return "(WGStridedFragLayout(shape=" + py::tuple_of_ints(shape) +
           ", vec_size=" + std::to_string(vec) + "), 128)";
  }

  // The value's equations, each through its lowering rule in the jaxpr's order. Under Lane each
  // FragmentedArray keeps a register layout (its vector length; 0 for a splat constant): a load
  // gets its ref dtype's strided one (load_strided, which needs a multiple of 128 elements), astype
  // keeps its operand's, and _pointwise refuses 8-bit arithmetic and then two non-splat operands
  // of different layouts. An iota's layout is its layout_cast's, which the lowering builds before
  // the iota's rule under both semantics (the lookahead's hint); under Warpgroup the rest is the
  // layout inference's and the dialect lowering's (dialect_stage.cpp).
  std::int64_t lower_value(const Op& op, const VectorValue& value, DType dtype, IrVectorStore& iv) {
    std::vector<ValueEqn> eqns;
    value_eqns(value, dtype, iv.shape, eqns);
    std::map<const VectorValue*, std::int64_t> layout;
    for (const ValueEqn& q : eqns) {
      const VectorValue* v = q.v;
      // Warpgroup's layout inference (dialect_stage.cpp): a broadcast of a value of its own layout
      // that the strided layout does not hold.
      if (v->kind == VectorKind::kBroadcast && has_own_layout(v->args[0]) &&
          !strided_broadcast_supported(v->broadcast_shape, q.shape, v->broadcast_dims.empty()))
        iv.broadcast_unlaid = true;
      const std::int64_t elements = element_count(q.shape);
      std::int64_t vec = 0;
      if (v->kind == VectorKind::kIota && !v->iota_layout_cast &&
          !(lane() && mutant_active(Mutant::kIotaUncastAccepted))) {
        // _iota_lowering: Lane has no output layout hint; Warpgroup's is the layout inference's.
        if (lane()) {
          raise(Stage::kLower, "RuntimeError",
                "Failed to infer the output layout of the iota. Please apply plgpu.layout_cast "
                "to its output right after its creation.",
                rule_id::kIotaUncast, op.path);
        }
        if (elements % 128 != 0) iv.iota_unlaid = true;
        continue;
      } else if (v->kind == VectorKind::kIota) {
        vec = v->iota_vec_size;
        if (elements % (128 * vec) != 0) {
          raise(Stage::kLower, "ValueError", strided_layout_error(q.shape, vec),
                rule_id::kIotaLayout, op.path);
        }
      } else if (!lane()) {
        continue;
      } else if (v->kind == VectorKind::kCarry) {
        vec = carry_vec_.at(v->ref);  // init's inside the loop, next's after it
      } else if (v->kind == VectorKind::kLoadSmem && v->smem_transforms.any()) {
        vec = lane_transformed_load(*v, q.shape, op.path);  // the WGMMA layout
      } else if (v->kind == VectorKind::kLoadSmem || v->kind == VectorKind::kLoadInput) {
        if (elements % 128 != 0) strided_elements(op, load_memref(*v), elements);
        vec = strided_vec_size(dtype_bits(q.dtype), elements);
      } else if (v->kind == VectorKind::kBroadcast && !v->broadcast_dims.empty()) {
        // _broadcast_in_dim_lowering_rule: a splat or strided array along new leading dims only.
        raise(Stage::kLower, "NotImplementedError",
              "Unsupported layout: " +
                  fragmented_layout_repr(v->broadcast_shape, layout.at(&v->args[0])),
              rule_id::kVectorBroadcastLayout, op.path);
      } else if (v->kind == VectorKind::kBroadcast && layout.at(&v->args[0]) != 0 &&
                 !strided_broadcast_supported(v->broadcast_shape, q.shape, true)) {
        // FragmentedArray.broadcast_in_dim: a size-1 dim broadcast after a kept dim.
        raise(Stage::kLower, "NotImplementedError", "Unsupported broadcast for WGStridedFragLayout",
              rule_id::kVectorStridedBroadcast, op.path);
      } else if (v->kind == VectorKind::kConvert || v->kind == VectorKind::kBroadcast) {
        vec = layout.at(&v->args[0]);  // astype and broadcast_in_dim keep the registers' layout
      } else if (!v->args.empty()) {
        const std::int64_t a = layout.at(&v->args[0]);
        const std::int64_t b = layout.at(&v->args[1]);
        // A splat's _pointwise hands a bitwise op to its non-splat operand's without
        // restrict_bitwidth=False, which then refuses 8 bits as arithmetic.
        if (dtype_bits(q.dtype) == 8 && (!is_bitwise(v->kind) || (a == 0 && b != 0))) {
          raise(Stage::kLower, "NotImplementedError", kPointwise8BitMessage,
                rule_id::kVectorPointwise8Bit, op.path);
        }
        if (a != 0 && b != 0 && a != b) {
          raise(Stage::kLower, "ValueError", "Incompatible FragmentedArray layouts",
                rule_id::kVectorIncompatibleLayouts, op.path);
        }
        vec = a != 0 ? a : b;
      }
      layout[v] = vec;
    }
    const auto root = layout.find(&value);
    return root == layout.end() ? 0 : root->second;
  }

  // The pytree mgpu.fori compares for a carried FragmentedArray of vector length `vec` (0: a
  // splat): its layout, its registers' shape and is_signed, one leaf per register.
  static std::string fori_tree(const Shape& shape, DType dtype, std::int64_t vec) {
    const std::int64_t n = vec == 0 ? 1 : element_count(shape) / (vec * 128);
    std::string leaves = "*";
    for (std::int64_t k = 1; k < n; ++k) leaves += ", *";
    const DTypeInfo& info = dtype_info(dtype);
    return "PyTreeDef([CustomNode(FragmentedArray[(" + fragmented_layout_repr(shape, vec) + ", " +
           (vec == 0 ? std::string("()") : "(" + std::to_string(n) + ",)") + ", " +
           (info.is_float    ? "None"
            : info.is_signed ? "True"
                             : "False") +
           ")], [" + leaves + "])])";
  }

  // A loop carry's init (before the loop) or next (the body's result): the value's rules as a
  // store's, then under Lane mgpu.fori's comparison of next's tree with init's (a loop of one
  // trip is unrolled: none); the thread's register of the carry takes the value.
  void carry_value(const Op& op, const Loop& l, bool next) {
    const Loop::Carry& c = *l.carry;
    IrVectorStore iv;
    iv.op = &op;
    iv.value = next ? &c.next : &c.init;
    iv.carry = c.name;
    iv.carry_next = next;
    iv.dtype = c.dtype;
    iv.shape = c.shape;
    iv.elements = element_count(c.shape);
    iv.eight_bit = computes_8bit_arithmetic(*iv.value, c.dtype);
    iv.own_layout = has_own_layout(*iv.value);
    const std::int64_t vec = lower_value(op, *iv.value, c.dtype, iv);
    if (next && lane() && (l.nd || l.trip_count > 1) && vec != carry_vec_.at(c.name)) {
      raise(Stage::kLower, "ValueError",
            "(" + fori_tree(c.shape, c.dtype, vec) + ", " +
                fori_tree(c.shape, c.dtype, carry_vec_.at(c.name)) + ")",
            rule_id::kLoopCarryLayout, op.path);
    }
    carry_vec_[c.name] = vec;
    vector_loads(*iv.value, iv);
    ir_.ops.push_back(IrOp{IrKind::kVectorStore, &op,
                           static_cast<std::int32_t>(ir_.vector_stores.size()), nullptr, true});
    ir_.vector_stores.push_back(std::move(iv));
  }

  // The SMEM bytes each SMEM load of `value` starts at (depth first), and a loop slot's step.
  void vector_loads(const VectorValue& value, IrVectorStore& iv) {
    for_each_vector_load(value, [&](const VectorValue& load) {
      if (load.kind != VectorKind::kLoadSmem) return;
      const Alloc& a = *lookup_.alloc(load.ref);
      iv.smem_loads.emplace_back(smem_offset_of(a, load.smem_index, load.smem_slot.has_value()),
                                 load.smem_slot ? slot_stride_of(a) : 0);
      iv.smem_load_layouts.push_back(ref_layout(a, load.smem_index.size()));
      // A peer CTA's SMEM through an indexed ref: the type Warpgroup's dialect lowering of
      // 0.11.2 expects for it (dialect_stage.cpp).
      if (!load.cluster_axis.empty() && (!load.smem_index.empty() || load.smem_slot) &&
          iv.indexed_cluster_memref.empty()) {
        iv.indexed_cluster_memref = memref_text(
            a.dtype, a.shape, smem_index_entries(load.smem_index, load.smem_slot.has_value()), true,
            true);
      }
    });
  }

  // _swap_lowering_rule: the value's loads (_get_lowering_rule) read SMEM refs at their offsets.
  void vector_store(const Op& op, const VectorStore& vs) {
    IrVectorStore iv;
    iv.op = &op;
    iv.store = &vs;
    iv.value = &vs.value;
    DType dtype = DType::kFloat32;
    if (vs.to_smem) {
      const Alloc& a = *lookup_.alloc(vs.dst);
      dtype = a.dtype;
      iv.dst_smem_offset = smem_offset_of(a, vs.smem_index, vs.smem_slot.has_value());
      if (vs.smem_slot) iv.dst_slot_stride = slot_stride_of(a);
      iv.shape = indexed_dst_shape(a, vs.smem_index);
      iv.elements = element_count(iv.shape);
      iv.dst_layout = ref_layout(a, vs.smem_index.size());
    } else {
      iv.output = lookup_.output_index(vs.dst);
      const ArraySpec& out = c_.outputs[static_cast<std::size_t>(iv.output)];
      dtype = out.dtype;
      iv.shape = resolve_slice(
                     out.shape, vs.dst_index, [](const std::string&) { return 0; }, 0)
                     .shape;
      iv.elements = element_count(iv.shape);
    }
    iv.dtype = dtype;
    iv.eight_bit = computes_8bit_arithmetic(vs.value, dtype);
    iv.own_layout = has_own_layout(vs.value);
    const std::int64_t layout = lower_value(op, vs.value, dtype, iv);
    if (!lane()) warpgroup_wgmma_store(c_, lookup_, vs, dtype, iv);
    const bool wgmma = lane() ? lane_wgmma_store(c_, vs, iv, layout, op.path) : iv.wgmma;
    // Lane: _swap_lowering_rule reads the destination's old value (load_strided), then stores.
    if (lane() && !wgmma && iv.elements % 128 != 0)
      strided_elements(op, dst_memref(vs), iv.elements);
    // _swap_lowering_rule's store of a splat (Lane here, Warpgroup in dialect_stage).
    if (!wgmma && !iv.own_layout && !jax_facts(c_.target.jax).splat_vec_size_gcd) {
      const std::int64_t vec = splat_store_vec_size_0_11_2(dtype_bits(dtype), iv.elements);
      if (iv.elements % (vec * 128) != 0) {
        iv.splat_vec_size_error = strided_layout_error(iv.shape, vec);
        if (lane()) {
          raise(Stage::kLower, "ValueError", *iv.splat_vec_size_error, rule_id::kSplatVecSize,
                op.path);
        }
      }
    }
    vector_loads(vs.value, iv);
    ir_.ops.push_back(IrOp{IrKind::kVectorStore, &op,
                           static_cast<std::int32_t>(ir_.vector_stores.size()), nullptr, true});
    ir_.vector_stores.push_back(std::move(iv));
  }

  // _copy_smem_to_gmem_lowering (plgpu.commit_smem(); copy_smem_to_gmem; wait_smem_to_gmem(0)).
  void store(const Op& op, const CopySmemToGmem& st) {
    IrStore is;
    is.op = &op;
    is.copy = &st;
    is.output = lookup_.output_index(st.dst);
    const Alloc& src = *lookup_.alloc(st.src);
    is.slice = smem_slice(op, src, st.src_index.size(), st.src_slice);
    is.src_shape = indexed_dst_shape(src, st.src_index, st.src_slice);
    is.transforms = src.transforms;
    is.smem = &src;
    is.dst = lookup_.output(st.dst);
    is.smem_offset = smem_offset_of(src, st.src_index, st.src_slot.has_value());
    if (st.src_slot) is.slot_stride = slot_stride_of(src);
    if (lane()) is.shape = prepare_async_copy(store_request(c_, is, Stage::kLower), geometry_);
    ir_.ops.push_back(
        IrOp{IrKind::kStore, &op, static_cast<std::int32_t>(ir_.stores.size()), nullptr, true});
    ir_.stores.push_back(std::move(is));
  }

 private:
  // _barrier_arrive_lowering.
  void arrive(const Op& op, const BarrierUse& use) {
    IrBarrierOp b;
    b.barrier = barrier_operand(use);
    const Alloc& a = *b.barrier.alloc;
    b.cluster = a.kind == AllocKind::kClusterBarrier;
    b.orders_tensor_core = a.orders_tensor_core;
    if (b.cluster) {
      if (!use.index && a.num_barriers != 1) {
        raise(Stage::kLower, "ValueError", "Can only arrive on a single barrier",
              rule_id::kClusterArriveNotSingle, op.path);
      }
    } else {
      check_single_barrier(op, use, a);
    }
    ir_.uses_orders_tensor_core = ir_.uses_orders_tensor_core || a.orders_tensor_core;
    ir_.ops.push_back(IrOp{IrKind::kArrive, &op, static_cast<std::int32_t>(ir_.barrier_ops.size()),
                           nullptr, true});
    ir_.barrier_ops.push_back(b);
  }

  // try_cluster_cancel_lowering: the barrier's index, the response's size (128 bits), then the
  // arrival and the request (the dialect op's verification of the result: dialect_stage.cpp).
  void cluster_cancel(const Op& op, const TryClusterCancel& tc) {
    IrClusterCancel c;
    c.barrier = barrier_operand(tc.barrier);
    c.op = &tc;
    const Alloc& result = *lookup_.alloc(tc.result);
    const std::int64_t bits =
        element_count(cancel_result_shape(tc, result)) * dtype_bits(result.dtype);
    if (bits != 128) {
      raise(Stage::kLower, "TypeError",
            "Try cluster cancel response must be " + std::string("128 bits, but is ") +
                std::to_string(bits) + " bits.",
            rule_id::kTryClusterCancelBits, op.path);
    }
    c.result = &result;
    c.result_offset = smem_offset_of(result, tc.result_index, false);
    ir_.ops.push_back(IrOp{IrKind::kClusterCancel, &op,
                           static_cast<std::int32_t>(ir_.cluster_cancels.size()), nullptr, true});
    ir_.cluster_cancels.push_back(c);
  }

  // _barrier_wait_lowering: BarrierRef.wait -> wait_parity -> get_ptr.
  void wait(const Op& op, const BarrierUse& use) {
    IrBarrierOp b;
    b.barrier = barrier_operand(use);
    const Alloc& a = *b.barrier.alloc;
    b.cluster = a.kind == AllocKind::kClusterBarrier;
    b.orders_tensor_core = a.orders_tensor_core;
    check_single_barrier(op, use, a);
    ir_.uses_orders_tensor_core = ir_.uses_orders_tensor_core || a.orders_tensor_core;
    ir_.ops.push_back(
        IrOp{IrKind::kWait, &op, static_cast<std::int32_t>(ir_.barrier_ops.size()), nullptr, true});
    ir_.barrier_ops.push_back(b);
  }
};

}  // namespace

KernelIr lower_kernel(const Case& c, const TracedBody& kernel, const ClusterGeometry& geometry,
                      const ModuleLayout& layout) {
  KernelIr ir;
  Lowerer(c, geometry, layout, ir).kernel(kernel);
  return ir;
}

}  // namespace collfuzz::lowering
