#include "harness/lowering/plan_builder.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <optional>
#include <tuple>

#include "harness/core/fill.h"
#include "harness/core/smem_layout.h"
#include "harness/lowering/jax_facts.h"
#include "harness/lowering/kernel_trace.h"
#include "harness/lowering/mutants.h"

namespace collfuzz::lowering {
namespace {

class PlanBuilder {
 public:
  PlanBuilder(const Case& c, const KernelIr& ir, const ModuleLayout& layout,
              const ClusterGeometry& geometry)
      : c_(c), ir_(ir), layout_(layout), geometry_(geometry) {}

  Plan build() {
    const auto& cl = geometry_.cuda();
    for (int d = 0; d < 3; ++d) plan_.cluster[d] = cl[static_cast<std::size_t>(d)];
    plan_.num_ctas = geometry_.num_ctas();
    plan_.threads_per_cta = geometry_.threads_per_cta();
    for (std::int64_t r = 0; r < plan_.num_ctas; ++r)
      plan_.cta_coords.push_back(geometry_.pallas_coords(r));
    plan_.smem_scratch_bytes = layout_.smem_scratch_bytes;
    plan_.smem_bytes = layout_.smem_bytes;
    plan_.mbarriers = layout_.mbarriers;
    plan_.cluster_sync_after_init = plan_.num_ctas > 1;
    plan_.inputs = c_.inputs;
    plan_.outputs = c_.outputs;
    tables();
    for (std::int64_t r = 0; r < plan_.num_ctas; ++r) {
      for (std::int64_t t = 0; t < plan_.threads_per_cta; ++t) thread(r, t);
    }
    return std::move(plan_);
  }

 private:
  const Case& c_;
  const KernelIr& ir_;
  const ModuleLayout& layout_;
  const ClusterGeometry& geometry_;

  // mgpu.get_cluster_ref: the CTA whose coordinate along the cluster_ref's axis is its index, the
  // others this CTA's (mapa to that rank).
  std::int32_t cluster_ref_rank(const std::string& axis, const DynStart& d, std::int64_t r,
                                std::int64_t t) const {
    const std::int64_t k =
        d.axis.empty() ? d.add : dyn_value(d, geometry_.axis_index(r, t, d.axis));
    std::size_t dim = 0;
    while (dim < c_.mesh.cluster_names.size() &&
           (c_.mesh.cluster_names[dim].is_tuple || c_.mesh.cluster_names[dim].as_plain() != axis))
      ++dim;
    std::vector<std::int64_t> want = geometry_.pallas_coords(r);
    want.at(dim) = k;
    for (std::int64_t peer = 0; peer < geometry_.num_ctas(); ++peer) {
      if (geometry_.pallas_coords(peer) == want) return static_cast<std::int32_t>(peer);
    }
    return static_cast<std::int32_t>(r);
  }
  Plan plan_;
  std::vector<std::int32_t> op_strings_;  // per IrOp: Plan::strings index of its path
  std::int64_t iteration_ = 0;  // the trip of the innermost open loop, for the op being built
  std::map<std::string, std::int32_t> registers_;  // the thread's carry registers, by carry
  std::map<std::tuple<Shape, Shape, std::int64_t, std::int64_t, std::int64_t>, std::int32_t>
      places_;  // smem_places' tables, by layout and first byte
  // Inside a warp_map (its ops carry Op::warp): the WarpArrivalCheckOp at its entry, and the warp
  // of the op being built (-1 outside).
  std::optional<std::size_t> warp_check_;
  std::int64_t warp_ = -1;

  std::int32_t intern(const std::string& s) {
    for (std::size_t i = 0; i < plan_.strings.size(); ++i) {
      if (plan_.strings[i] == s) return static_cast<std::int32_t>(i);
    }
    plan_.strings.push_back(s);
    return static_cast<std::int32_t>(plan_.strings.size() - 1);
  }

  // The barrier's index on the trip being built (a slot's value, or its static index).
  std::int64_t barrier_index(const IrBarrier& b) const {
    if (!b.slot) return b.index;
    if (mutant_active(Mutant::kBarrierSlotShifted))  // the next trip's, kept inside the array
      return dyn_value(*b.slot, iteration_ + 1) % b.alloc->num_barriers;
    return dyn_value(*b.slot, iteration_);
  }

  std::int32_t mbarrier(const IrBarrier& b) const {
    return static_cast<std::int32_t>(layout_.groups[static_cast<std::size_t>(b.group)].first +
                                     barrier_index(b));
  }

  std::int32_t record(const IrBarrier& b) const {
    return b.slot ? b.record + static_cast<std::int32_t>(barrier_index(b) - b.index) : b.record;
  }

  void tables() {
    for (std::size_t i = 0; i < ir_.records.size(); ++i) {
      const auto& [alloc, index] = ir_.records[i];
      BarrierRecordInfo r;
      r.alloc = intern(alloc->name);
      r.index = index;
      r.mbarrier = static_cast<std::int32_t>(
          layout_.groups[static_cast<std::size_t>(ir_.record_groups[i])].first + index);
      r.unit =
          (alloc->kind == AllocKind::kBarrier && !alloc->orders_tensor_core) ? kWarpgroupLanes : 1;
      plan_.barrier_records.push_back(r);
    }
    for (const KernelIr::Buffer& b : ir_.buffers) {
      plan_.buffers.push_back(
          BufferInfo{intern(b.alloc->name), b.smem_offset,
                     packed_bytes(element_count(b.alloc->shape), b.alloc->dtype)});
    }
    for (const IrScope& s : ir_.scopes) {
      ScopeInfo info;
      info.owners = s.owners;
      info.first_record = static_cast<std::int32_t>(plan_.scope_records.size());
      info.num_records = static_cast<std::int32_t>(s.records.size());
      info.first_buffer = static_cast<std::int32_t>(plan_.scope_buffers.size());
      info.num_buffers = static_cast<std::int32_t>(s.buffers.size());
      plan_.scope_records.insert(plan_.scope_records.end(), s.records.begin(), s.records.end());
      plan_.scope_buffers.insert(plan_.scope_buffers.end(), s.buffers.begin(), s.buffers.end());
      plan_.scopes.push_back(info);
    }
    for (const IrOp& op : ir_.ops) op_strings_.push_back(op.op ? intern(op.op->path) : -1);
  }

  bool eval(const Cond& cond, std::int64_t r, std::int64_t t) const {
    switch (cond.kind) {
      case Cond::Kind::kConst:
        return cond.constant;
      case Cond::Kind::kAtom: {
        const std::int64_t v = geometry_.axis_index(r, t, cond.axis);
        switch (cond.op) {
          case CmpOp::kEq:
            return v == cond.value;
          case CmpOp::kNe:
            return v != cond.value;
          case CmpOp::kLt:
            return v < cond.value;
          case CmpOp::kLe:
            return v <= cond.value;
          case CmpOp::kGt:
            return v > cond.value;
          case CmpOp::kGe:
            return v >= cond.value;
        }
        return false;
      }
      case Cond::Kind::kAll:
        return std::all_of(cond.children.begin(), cond.children.end(),
                           [&](const Cond& ch) { return eval(ch, r, t); });
      case Cond::Kind::kAny:
        return std::any_of(cond.children.begin(), cond.children.end(),
                           [&](const Cond& ch) { return eval(ch, r, t); });
      case Cond::Kind::kNot:
        return !eval(cond.children.front(), r, t);
    }
    return false;
  }

  void step(StepKind kind, std::int32_t op, std::int32_t index) {
    plan_.steps.push_back(Step{kind, op, index});
  }

  void thread(std::int64_t r, std::int64_t t) {
    ThreadProgram program;
    program.cta = r;
    program.thread = t;
    program.first_step = static_cast<std::int64_t>(plan_.steps.size());
    std::vector<std::int64_t> waits(plan_.mbarriers.size(), 0);  // the thread's `phases` bits
    std::int64_t syncs = 0;
    int skipping = 0;  // depth inside a guard (or a loop of no trips) skipped for this thread
    // Open loops: the index of their kLoopBegin, this thread's trips of it (an nd_loop's are the
    // thread's own) and the iterations left after this one.
    struct OpenLoop {
      std::size_t begin = 0;
      std::int64_t trips = 0;
      std::int64_t left = 0;
    };
    std::vector<OpenLoop> loops;
    // The trip of the innermost open loop (the value of its index).
    const auto iteration = [&]() -> std::int64_t {
      if (loops.empty() || mutant_active(Mutant::kLoopIndexFrozen)) return 0;
      return loops.back().trips - 1 - loops.back().left;
    };
    iteration_ = 0;
    registers_.clear();
    warp_check_.reset();
    warp_ = -1;
    for (std::size_t k = 0; k < ir_.ops.size(); ++k) {
      const IrOp& op = ir_.ops[k];
      const std::int32_t path = op_strings_[k];
      if (skipping) {
        if (op.kind == IrKind::kGuardBegin || op.kind == IrKind::kLoopBegin) ++skipping;
        if (op.kind == IrKind::kGuardEnd || op.kind == IrKind::kLoopEnd) --skipping;
        continue;
      }
      iteration_ = iteration();
      if (op.op) enter_warp(op.op->warp, path);
      switch (op.kind) {
        case IrKind::kLoopBegin: {
          // scf.for from 0 to the thread's upper bound: an nd_loop's is
          // grid_size // axis_size + (axis_index < grid_size % axis_size).
          const Loop* loop = op.op ? std::get_if<Loop>(&op.op->v) : nullptr;
          std::int64_t trips = op.trip_count;
          if (loop && loop->nd && mutant_active(Mutant::kNdLoopTripsRoundedUp)) {
            trips = (loop->nd->grid_size() + loop->nd->axis_size - 1) / loop->nd->axis_size;
          } else if (loop && loop->nd) {
            trips = loop_trips(
                *loop, [&](const std::string& axis) { return geometry_.axis_index(r, t, axis); });
          }
          if (trips <= 0) {
            skipping = 1;
          } else {
            loops.push_back({k, trips, trips - 1});
          }
          break;
        }
        case IrKind::kLoopEnd:
          if (!loops.empty() && loops.back().left > 0) {
            --loops.back().left;
            k = loops.back().begin;  // the next iteration starts after the kLoopBegin
          } else if (!loops.empty()) {
            loops.pop_back();
          }
          break;
        case IrKind::kGuardBegin:
          if (!eval(*op.cond, r, t)) skipping = 1;
          break;
        case IrKind::kGuardEnd:
          break;
        case IrKind::kScopeEnter:
          step(StepKind::kScopeEnter, path, op.index);
          break;
        case IrKind::kScopeExit:
          step(StepKind::kScopeExit, path, op.index);
          break;
        case IrKind::kBlockSync:
          plan_.block_syncs.push_back(BlockSyncOp{op.recorded, op.recorded ? syncs++ : 0});
          step(StepKind::kBlockSync, path, static_cast<std::int32_t>(plan_.block_syncs.size() - 1));
          break;
        case IrKind::kCopy:
          copy(ir_.copies[static_cast<std::size_t>(op.index)], path, r, t);
          break;
        case IrKind::kStore:
          store(ir_.stores[static_cast<std::size_t>(op.index)], path, r, t);
          break;
        case IrKind::kArrive:
          arrive(ir_.barrier_ops[static_cast<std::size_t>(op.index)], path, r);
          break;
        case IrKind::kStoreCommit:
          step(StepKind::kStoreCommit, path, 0);
          break;
        case IrKind::kVectorStore:
          vector_store(ir_.vector_stores[static_cast<std::size_t>(op.index)], path, r, t);
          break;
        case IrKind::kCommitSmem:
          if (!mutant_active(Mutant::kCommitSmemDropped)) step(StepKind::kCommitSmem, path, 0);
          break;
        case IrKind::kClusterCancel:
          cluster_cancel(ir_.cluster_cancels[static_cast<std::size_t>(op.index)], path, r, t);
          break;
        case IrKind::kStoreWait: {
          const auto& w = std::get<WaitSmemToGmem>(op.op->v);
          store_wait(path, w.n, w.read_only);
          break;
        }
        case IrKind::kWait: {
          const IrBarrier& b = ir_.barrier_ops[static_cast<std::size_t>(op.index)].barrier;
          const std::int32_t mb = mbarrier(b);
          std::int64_t& phase = waits[static_cast<std::size_t>(mb)];
          // The mutant: Mosaic's per-barrier `phases` bit never flips, every wait is on parity 0.
          plan_.waits.push_back(
              WaitOp{mb, record(b), mutant_active(Mutant::kWaitPhaseNotFlipped) ? 0 : phase++});
          step(StepKind::kWait, path, static_cast<std::int32_t>(plan_.waits.size() - 1));
          break;
        }
      }
    }
    program.num_steps = static_cast<std::int64_t>(plan_.steps.size()) - program.first_step;
    plan_.threads.push_back(program);
  }

  // try_cluster_cancel_lowering: each warpgroup's arrive_expect_tx (16 bytes from lane 0 of the
  // first warpgroup along a named thread axis, of every warpgroup otherwise; 0 from the rest),
  // then, where that warpgroup's CTA is first along every named cluster axis, the request.
  void cluster_cancel(const IrClusterCancel& c, std::int32_t path, std::int64_t r, std::int64_t t) {
    const std::vector<std::string>& axes = c.op->collective_axes;
    const std::string* wg = geometry_.thread_name();
    const bool wg_named = wg && std::find(axes.begin(), axes.end(), *wg) != axes.end();
    const bool first_wg = !wg_named || t == 0;
    const std::int32_t mb = mbarrier(c.barrier);
    plan_.arrives.push_back(
        ArriveOp{mb, record(c.barrier), kWarpgroupLanes, 1, first_wg ? kResponseBytes : 0, 0});
    step(StepKind::kArrive, path, static_cast<std::int32_t>(plan_.arrives.size() - 1));
    bool first_cta = true;
    for (const std::string& axis : axes) {
      if (!wg || axis != *wg) first_cta = first_cta && geometry_.axis_index(r, t, axis) == 0;
    }
    if (mutant_active(Mutant::kClusterCancelEveryCta)) first_cta = true;
    if (!first_wg || !first_cta) return;
    plan_.cluster_cancels.push_back(ClusterCancelOp{mb, record(c.barrier), c.result_offset});
    step(StepKind::kClusterCancel, path,
         static_cast<std::int32_t>(plan_.cluster_cancels.size() - 1));
  }

  // An op of warp `warp` (-1: none). The first op of a warp_map (a warp no later than the last
  // one's, or the first after ops of no warp) opens its check; an op of no warp closes it.
  void enter_warp(std::int64_t warp, std::int32_t path) {
    if (warp < 0 || (warp_check_ && warp < warp_)) warp_check_.reset();
    if (warp >= 0 && !warp_check_) {
      plan_.warp_checks.emplace_back();
      warp_check_ = plan_.warp_checks.size() - 1;
      step(StepKind::kWarpArrivalCheck, path, static_cast<std::int32_t>(*warp_check_));
    }
    warp_ = warp;
  }

  // One arrival of the current warp on mbarrier `mb` (record `rec`), for its warp_map's check.
  void warp_arrival(std::int32_t mb, std::int32_t rec, WarpArrival a) {
    if (!warp_check_ || warp_ < 0) return;
    auto& barriers = plan_.warp_checks[*warp_check_].barriers;
    auto it =
        std::find_if(barriers.begin(), barriers.end(),
                     [&](const WarpArrivalCheckOp::OnBarrier& b) { return b.mbarrier == mb; });
    if (it == barriers.end()) it = barriers.insert(barriers.end(), {mb, rec, {}});
    if (it->warps.size() <= static_cast<std::size_t>(warp_))
      it->warps.resize(static_cast<std::size_t>(warp_) + 1);
    it->warps[static_cast<std::size_t>(warp_)].push_back(a);
  }

  // The arrive.expect_tx a copy's barrier gets from this warpgroup (from a warp: each of its 32
  // lanes arrives 3 times with no-complete, then once with the bytes; the same 128 arrivals).
  void arm(const IrCopy& ic, std::int32_t path, std::int32_t mb, bool pred) {
    if (!ic.barrier->alloc->orders_tensor_core) {
      warp_arrival(mb, record(*ic.barrier), WarpArrival{96, true, path});
      warp_arrival(mb, record(*ic.barrier), WarpArrival{32, false, path});
    }
    ArriveOp a;
    a.mbarrier = mb;
    a.record = record(*ic.barrier);
    a.lanes = kWarpgroupLanes;
    a.count_per_lane = 1;
    const std::int64_t bytes = ic.bytes;
    if (ic.barrier->alloc->orders_tensor_core &&
        jax_facts(c_.target.jax).orders_tc_single_lane_arrive) {
      // 0.12.0.1: one lane arrives with the whole byte count (the predicate gates the arrive).
      a.lanes = 1;
      a.tx_lane0 = a.tx_other = pred ? bytes : 0;
    } else if (c_.target.semantics == Semantics::kLane) {
      // Every lane: arrive_expect_tx(pred ? bytes/128 : 0).
      a.tx_lane0 = a.tx_other = pred ? bytes / kWarpgroupLanes : 0;
    } else {
      // ArriveExpectTxOp's lowering: a constant byte count divisible by 128 is spread over the
      // lanes; anything else (a non-constant select on the predicate) goes to one lane.
      // 0.12.0.1 passes the constant byte count (the predicate guards the arrive instead).
      const std::optional<bool> folded =
          !ic.copy->predicate || jax_facts(c_.target.jax).predicate_gates_arrive
              ? std::optional<bool>(true)
              : python_bool(*ic.copy->predicate);
      if (folded) {
        const std::int64_t total = *folded ? bytes : 0;
        if (total % kWarpgroupLanes == 0 || mutant_active(Mutant::kExpectTxTruncated)) {
          a.tx_lane0 = a.tx_other = total / kWarpgroupLanes;
        } else {
          a.tx_lane0 = total;
          a.tx_other = 0;
        }
      } else {
        a.tx_lane0 = pred ? bytes : 0;
        a.tx_other = 0;
      }
    }
    plan_.arrives.push_back(a);
    step(StepKind::kArrive, path, static_cast<std::int32_t>(plan_.arrives.size() - 1));
  }

  void copy(const IrCopy& ic, std::int32_t path, std::int64_t r, std::int64_t t) {
    bool pred = !ic.copy->predicate || eval(*ic.copy->predicate, r, t);
    if (mutant_active(Mutant::kPredicateIgnored)) pred = true;
    const std::int32_t mb = ic.barrier ? mbarrier(*ic.barrier) : -1;
    if (!ic.cp_async) {
      const bool first_block =
          !ic.leader_tracked ||
          geometry_.cluster_idx(r, std::span<const int>(ic.collective.data(), 1)) == 0;
      // 0.12.0.1 arms under `when(predicate)`: a predicated-off copy does not arrive at all.
      const bool arrives = pred || !jax_facts(c_.target.jax).predicate_gates_arrive;
      if ((first_block || mutant_active(Mutant::kNonLeaderBarrierArmed)) && arrives)
        arm(ic, path, mb, pred);
    }
    const AsyncCopyShape& shape = *ic.shape;
    LoadOp load;
    load.input = ic.input;
    load.predicate = pred;
    std::int64_t element_offset = 0;
    const auto base = slice_base(
        *ic.src, &ic.copy->src_index,
        [&](const std::string& axis) { return geometry_.axis_index(r, t, axis); }, iteration_);
    instantiate_transfer(shape, *ic.src, base, geometry_.cluster_idx(r, ic.collective), load,
                         element_offset);
    load.smem_offset = ic.smem_offset + element_offset * shape.elem_bits / 8;
    if (ic.copy->dst_slot)
      load.smem_offset += dyn_value(*ic.copy->dst_slot, iteration_) * ic.slot_stride;
    load.smem_offset += slice_offset(ic.slice, r, t);
    load.swizzle = shape.swizzle;
    if (!ic.cp_async) {
      load.mbarrier = mb;
      load.record = record(*ic.barrier);
    }
    const std::int64_t n = shape.collective_size;
    if (n > 1) {
      const bool replicated = ic.copy->leader_tracked == LeaderTracked::kReplicated;
      load.complete_at_leader = ic.leader_tracked;
      if (ic.leader_tracked) {
        // utils.cluster_collective_mask(..., leader_tracked=True): the one bit of the issuer's
        // pair's leader (the CTA at index 0 along the collective axis).
        load.leader = static_cast<std::int32_t>(
            std::countr_zero(geometry_.collective_mask(r, ic.collective, true)));
      }
      if (!ic.leader_tracked || replicated)
        load.multicast_mask = geometry_.collective_mask(r, ic.collective, false) & 0xFFFFu;
    }
    if (shape.path == LoadPath::kBulk && shape.clamp_to_array && pred) {
      // arrive=False with a clamped transfer: complete_tx(requested - clamped) first.
      const std::int64_t requested = load.elements * shape.elem_bits / 8;
      plan_.complete_txs.push_back(
          CompleteTxOp{mb, record(*ic.barrier), requested - load.complete_bytes});
      step(StepKind::kCompleteTx, path, static_cast<std::int32_t>(plan_.complete_txs.size() - 1));
    }
    plan_.loads.push_back(load);
    step(StepKind::kLoad, path, static_cast<std::int32_t>(plan_.loads.size() - 1));
  }

  void store(const IrStore& is, std::int32_t path, std::int64_t r, std::int64_t t) {
    // predicate=: the TMA store's predicate operand (and the single-lane one); false stores
    // nothing, and the wait that follows has no group to wait for.
    if (is.copy->predicate && !eval(*is.copy->predicate, r, t)) {
      // The op's commit and wait still run (empty groups count).
      if (is.copy->commit_group) step(StepKind::kStoreCommit, path, 0);
      if (is.copy->wait) store_wait(path, 0, false);
      return;
    }
    const ArraySpec& out = c_.outputs[static_cast<std::size_t>(is.output)];
    StoreOp s;
    s.output = is.output;
    s.elem_bits = dtype_bits(out.dtype);
    s.smem_offset = is.smem_offset;
    if (is.copy->src_slot)
      s.smem_offset += dyn_value(*is.copy->src_slot, iteration_) * is.slot_stride;
    s.smem_offset += slice_offset(is.slice, r, t);
    s.swizzle = is.transforms.swizzle;
    s.tiling_rank = static_cast<std::int32_t>(is.transforms.tiling.size());
    for (std::size_t k = 0; k < is.transforms.tiling.size(); ++k)
      s.tiling[k] = is.transforms.tiling[k];
    s.elements = element_count(is.src_shape);
    if (is.copy->src_transpose) {
      const auto& perm = is.copy->src_transpose->permutation;
      s.transpose_rank = static_cast<std::int32_t>(perm.size());
      for (std::size_t v = 0; v < perm.size(); ++v)
        s.transpose[v] = static_cast<std::int32_t>(perm[v]);
    }
    s.reduction_op = is.copy->reduction_op;
    s.commit = is.copy->commit_group;
    s.wait = is.copy->wait;
    s.commit_smem = is.copy->commit_smem && !mutant_active(Mutant::kCommitSmemDropped);
    if (mutant_active(Mutant::kStoreReductionIgnored)) s.reduction_op.reset();
    s.slice.rank = static_cast<std::int32_t>(out.shape.size());
    for (std::size_t i = 0; i < out.shape.size(); ++i) {
      s.slice.dims[i] = out.shape[i];
      s.slice.start[i] = 0;
      s.slice.size[i] = out.shape[i];
      if (i < is.copy->dst_index.size()) {
        const IndexEntry& e = is.copy->dst_index[i];
        s.slice.start[i] = index_start(
            e, [&](const std::string& axis) { return geometry_.axis_index(r, t, axis); },
            iteration_);
        s.slice.size[i] = e.kind == IndexEntry::Kind::kAt ? 0 : e.size;
      }
    }
    plan_.stores.push_back(s);
    step(StepKind::kStore, path, static_cast<std::int32_t>(plan_.stores.size() - 1));
  }

  // The bytes a slice `pl.ds(start, size)` of an SMEM ref moves its start by, for thread t of CTA
  // r: a dynamic start into a tiled dim rounds up to the tile.
  std::int64_t slice_offset(const SmemSliceIr& slice, std::int64_t r, std::int64_t t) const {
    if (!slice.entry) return 0;
    std::int64_t start = index_start(
        *slice.entry, [&](const std::string& axis) { return geometry_.axis_index(r, t, axis); },
        iteration_);
    if (slice.tile > 0) start = (start + slice.tile - 1) / slice.tile * slice.tile;
    return start * slice.stride;
  }

  // The slice `index` picks of `shape` for thread t of CTA r at this trip.
  ArraySlice slice_of(const Shape& shape, const std::vector<IndexEntry>& index, std::int64_t r,
                      std::int64_t t) const {
    ArraySlice slice;
    slice.rank = static_cast<std::int32_t>(shape.size());
    for (std::size_t i = 0; i < shape.size(); ++i) {
      slice.dims[i] = shape[i];
      slice.start[i] = 0;
      slice.size[i] = shape[i];
      if (i < index.size()) {
        const IndexEntry& e = index[i];
        slice.start[i] = index_start(
            e, [&](const std::string& axis) { return geometry_.axis_index(r, t, axis); },
            iteration_);
        slice.size[i] = e.kind == IndexEntry::Kind::kAt ? 0 : e.size;
      }
    }
    return slice;
  }

  // Plan::smem_places of a ref laid out as `l` whose first byte is `base` (the swizzle is of the
  // absolute address, as a TMA's); -1 for a row-major ref. One table per (layout, base).
  std::int32_t smem_places(const SmemLayout& l, std::int64_t base) {
    if (l.identity()) return -1;
    auto key = std::make_tuple(l.shape, l.tiling, l.swizzle, l.element_bytes, base);
    const auto found = places_.find(key);
    if (found != places_.end()) return found->second;
    SmemLayout unswizzled = l;
    unswizzled.swizzle = 0;
    std::vector<std::int64_t> offsets;
    physical_offsets(unswizzled, offsets);
    for (std::int64_t& o : offsets) o = swizzled_offset(base + o, l.swizzle) - base;
    plan_.smem_places.push_back(std::move(offsets));
    const auto index = static_cast<std::int32_t>(plan_.smem_places.size() - 1);
    places_.emplace(std::move(key), index);
    return index;
  }

  void vector_store(const IrVectorStore& iv, std::int32_t path, std::int64_t r, std::int64_t t) {
    // The mutant: the carry's next is computed into nothing; the carry keeps its init.
    if (iv.carry_next && mutant_active(Mutant::kCarryNextIgnored)) return;
    VectorStoreOp v;
    v.output = iv.output;
    v.dtype = iv.dtype;
    v.elements = iv.elements;
    if (!iv.carry.empty()) {
      // A loop carry's init or next: the thread's register of the carry (made at its init).
      const auto [reg, made] =
          registers_.try_emplace(iv.carry, static_cast<std::int32_t>(plan_.registers.size()));
      if (made) plan_.registers.push_back(iv.elements);
      v.to_register = reg->second;
    } else if (iv.store->to_smem) {
      v.to_smem = true;
      v.smem_offset = iv.dst_smem_offset;
      if (iv.store->smem_slot)
        v.smem_offset += dyn_value(*iv.store->smem_slot, iteration_) * iv.dst_slot_stride;
      if (!iv.store->cluster_axis.empty() && !mutant_active(Mutant::kClusterRefWritesOwnSmem))
        v.smem_rank = cluster_ref_rank(iv.store->cluster_axis, iv.store->cluster_index, r, t);
      v.places = smem_places(iv.dst_layout, v.smem_offset);
    } else {
      v.slice = slice_of(c_.outputs[static_cast<std::size_t>(iv.output)].shape, iv.store->dst_index,
                         r, t);
    }
    v.first_node = static_cast<std::int32_t>(plan_.vector_nodes.size());
    std::size_t smem_load = 0;
    // `shape`: the node's (the store's, or a broadcast's operand's below it).
    std::function<void(const VectorValue&, DType, const Shape&)> emit =
        [&](const VectorValue& value, DType d, const Shape& shape) {
          for (const VectorValue& a : value.args) {
            emit(a, value.kind == VectorKind::kConvert ? value.from : d,
                 value.kind == VectorKind::kBroadcast ? value.broadcast_shape : shape);
          }
          VectorNode n;
          n.kind = value.kind;
          n.dtype = d;
          n.from = value.from;
          n.bits = value.bits;
          n.elements = element_count(shape);
          if (value.kind == VectorKind::kIota) {
            const auto dim = static_cast<std::size_t>(value.iota_dimension);
            n.iota_size = shape[dim];
            for (std::size_t k = dim + 1; k < shape.size(); ++k) n.iota_inner *= shape[k];
          } else if (value.kind == VectorKind::kLoadSmem) {
            const auto& [offset, slot_stride] = iv.smem_loads[smem_load];
            n.smem_offset = offset;
            if (value.smem_slot)
              n.smem_offset += dyn_value(*value.smem_slot, iteration_) * slot_stride;
            SmemLayout layout = iv.smem_load_layouts[smem_load++];
            if (mutant_active(Mutant::kTiledVectorLoadUnswizzled)) layout.swizzle = 0;
            n.places = smem_places(layout, n.smem_offset);
            if (!value.cluster_axis.empty() && !mutant_active(Mutant::kClusterRefReadsOwnSmem))
              n.smem_rank = cluster_ref_rank(value.cluster_axis, value.cluster_index, r, t);
          } else if (value.kind == VectorKind::kCarry) {
            n.reg = registers_.at(value.ref);
          } else if (value.kind == VectorKind::kLoadInput) {
            for (std::size_t i = 0; i < c_.inputs.size(); ++i) {
              if (c_.inputs[i].name == value.ref) n.input = static_cast<std::int32_t>(i);
            }
            n.slice = slice_of(c_.inputs[static_cast<std::size_t>(n.input)].shape, value.gmem_index,
                               r, t);
          }
          plan_.vector_nodes.push_back(n);
        };
    emit(*iv.value, v.dtype, iv.shape);
    v.num_nodes = static_cast<std::int32_t>(plan_.vector_nodes.size()) - v.first_node;
    plan_.vector_stores.push_back(v);
    step(StepKind::kVectorStore, path, static_cast<std::int32_t>(plan_.vector_stores.size() - 1));
  }

  void store_wait(std::int32_t path, std::int64_t n, bool read_only) {
    if (mutant_active(Mutant::kStoreWaitGroupOffByOne)) ++n;
    plan_.store_waits.push_back(StoreWaitOp{n, read_only});
    step(StepKind::kStoreWait, path, static_cast<std::int32_t>(plan_.store_waits.size() - 1));
  }

  void arrive(const IrBarrierOp& b, std::int32_t path, std::int64_t r) {
    const std::int32_t mb = mbarrier(b.barrier);
    if (b.cluster) {
      // CollectiveBarrierRef.arrive: no mask when every collective entry has size 1.
      const BarrierKey& key = layout_.groups[static_cast<std::size_t>(b.barrier.group)].key;
      std::uint32_t mask = 0;
      bool trivial = true;
      for (const auto& entry : key.dims) {
        if (geometry_.collective_size(entry) == 1) continue;
        trivial = false;
        mask |= geometry_.collective_mask(r, entry, key.leader_tracked);
      }
      if (!trivial) {
        plan_.remote_arrives.push_back(RemoteArriveOp{mb, record(b.barrier), mask});
        step(StepKind::kRemoteArrive, path,
             static_cast<std::int32_t>(plan_.remote_arrives.size() - 1));
        return;
      }
      plan_.arrives.push_back(ArriveOp{mb, record(b.barrier), 1, 1, 0, 0});  // one lane, local
    } else {
      const std::int32_t lanes = b.orders_tensor_core ? 1 : kWarpgroupLanes;
      if (!b.orders_tensor_core) warp_arrival(mb, record(b.barrier), WarpArrival{128, false, path});
      plan_.arrives.push_back(ArriveOp{mb, record(b.barrier), lanes, 1, 0, 0});
    }
    step(StepKind::kArrive, path, static_cast<std::int32_t>(plan_.arrives.size() - 1));
  }
};

}  // namespace

Plan build_plan(const Case& c, const KernelIr& ir, const ModuleLayout& layout,
                const ClusterGeometry& geometry) {
  return PlanBuilder(c, ir, layout, geometry).build();
}

}  // namespace collfuzz::lowering
