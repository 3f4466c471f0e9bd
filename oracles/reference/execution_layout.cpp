// The reference's execution: the static layout (SMEM offsets, mbarrier pool slots, each copy's
// facts) and each thread's step list.

#include "oracles/reference/execution_model.h"

namespace collfuzz::ref::exec {

std::string Execution::slot_key(const Alloc& a) const {
  std::string key = a.kind == AllocKind::kBarrier ? "B" : "C";
  key += std::to_string(a.num_arrivals) + "/" + std::to_string(a.num_barriers) + "/" +
         (a.orders_tensor_core ? "t" : "f") + (a.leader_tracked ? "L" : "");
  for (const auto& ax : a.collective_axes) key += "/" + ax.repr();
  return key;
}

void Execution::layout() {
  std::map<std::string, std::vector<int>> pools;
  int next_slot = 0;
  std::function<void(const Body&, std::int64_t)> walk = [&](const Body& body, std::int64_t used) {
    for (const Op& op : body) {
      if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
        std::int64_t off = used;
        std::vector<std::pair<std::string, int>> taken;
        for (const Alloc& a : rs->allocs) {
          allocs_[a.name] = &a;
          if (a.kind == AllocKind::kSmem) {
            smem_offset_[a.name] = off;
            // The layout advances by prod(shape) * bits // 8, as the lowering computes it (0 for
            // a single int4); the memory modelled still holds the buffer's packed bytes.
            smem_size_ = std::max(smem_size_, off + packed_bytes(element_count(a.shape), a.dtype));
            off += align_up(element_count(a.shape) * dtype_bits(a.dtype) / 8, kSmemAlignment);
          } else if (a.kind == AllocKind::kBarrier || a.kind == AllocKind::kClusterBarrier) {
            auto& pool = pools[slot_key(a)];
            int slot;
            if (pool.empty()) {
              slot = next_slot++;
              slot_base_.push_back(slot_base_total_);
              slot_base_total_ += a.num_barriers;
            } else {
              slot = pool.back();
              pool.pop_back();
            }
            slot_of_[a.name] = slot;
            taken.emplace_back(slot_key(a), slot);
          }
        }
        smem_size_ = std::max(smem_size_, off);
        walk(rs->body, off);
        for (auto it = taken.rbegin(); it != taken.rend(); ++it)
          pools[it->first].push_back(it->second);
      } else if (const auto* w = std::get_if<When>(&op.v)) {
        if (python_bool(w->cond).value_or(true))
          walk(w->body, used);  // pl.when(False): never lowered
      }
    }
  };
  walk(c_.program, 0);
  walk_program(c_.program, [&](const Op& op, const Scope& scope) {
    if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      CopyFacts f = copy_facts(op, *cp, c_, scope);
      if (mosaic_) resolve_collective(f, mesh_);  // interpret mode ignores collective axes
      copies_.emplace(&op, std::move(f));
    }
  });
}

std::int64_t Execution::barrier_count(const Alloc& a) const {
  if (a.kind == AllocKind::kBarrier) return a.num_arrivals;
  std::int64_t blocks = 1;
  if (mosaic_) {
    for (const AxisName& entry : a.collective_axes) {
      std::int64_t size = 1;
      for (const auto& part : entry.parts) {
        size *= mesh_.cuda_cluster()[static_cast<std::size_t>(
            *mesh_.cluster_dim(AxisName::plain(part)))];
      }
      blocks += size - 1;
    }
  } else {
    for (std::size_t k : interpret_collective_cluster_axes(a)) blocks += c_.mesh.cluster[k] - 1;
  }
  return a.num_arrivals * blocks;
}

std::vector<std::size_t> Execution::interpret_collective_cluster_axes(const Alloc& a) const {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < c_.mesh.cluster_names.size(); ++k) {
    for (const AxisName& entry : a.collective_axes) {
      if (entry == c_.mesh.cluster_names[k]) {
        out.push_back(k);
        break;
      }
    }
  }
  return out;
}

void Execution::build_steps(const Body& body, Thread& th, std::int64_t iteration) {
  const auto push = [&](Step::Kind kind, const Op& op) {
    th.steps.push_back({kind, &op, iteration});
  };
  for (const Op& op : body) {
    if (const auto* rs = std::get_if<RunScoped>(&op.v)) {
      if (mosaic_ && mesh_.multithreaded() && !rs->collective_axes.empty()) {
        push(Step::Kind::kBlockSync, op);  // gpu.barrier() at entry
      }
      push(Step::Kind::kEnter, op);
      build_steps(rs->body, th, iteration);
      push(Step::Kind::kExit, op);
    } else if (const auto* w = std::get_if<When>(&op.v)) {
      if (!eval_cond(w->cond, mesh_, th.rank, th.index)) continue;
      const bool warp_map = mosaic_ && op.from_warp_map && op.warp_axis.empty();
      if (warp_map) push(Step::Kind::kWarpMapBegin, op);
      build_steps(w->body, th, iteration);
      if (warp_map) push(Step::Kind::kWarpMapEnd, op);
    } else if (const auto* l = std::get_if<Loop>(&op.v)) {
      if (l->carry) push(Step::Kind::kCarryInit, op);
      // An nd_loop's trips are the thread's own (G // S + (a < G % S)).
      const std::int64_t trips = loop_trips(
          *l, [&](const std::string& axis) { return mesh_.axis_index(th.rank, th.index, axis); });
      for (std::int64_t i = 0; i < trips; ++i) {
        build_steps(l->body, th, i);
        if (l->carry) th.steps.push_back({Step::Kind::kCarryNext, &op, i});
      }
    } else if (std::holds_alternative<CopyGmemToSmem>(op.v)) {
      push(Step::Kind::kCopy, op);
    } else if (std::holds_alternative<CopySmemToGmem>(op.v)) {
      push(Step::Kind::kCopyOut, op);
    } else if (std::holds_alternative<VectorStore>(op.v)) {
      push(Step::Kind::kVectorStore, op);
    } else if (std::holds_alternative<CommitSmem>(op.v)) {
      push(Step::Kind::kCommitSmem, op);
    } else if (std::holds_alternative<CommitSmemToGmemGroup>(op.v)) {
      push(Step::Kind::kStoreCommit, op);
    } else if (std::holds_alternative<WaitSmemToGmem>(op.v)) {
      push(Step::Kind::kStoreWait, op);
    } else if (std::holds_alternative<BarrierArrive>(op.v)) {
      push(Step::Kind::kArrive, op);
    } else if (std::holds_alternative<TryClusterCancel>(op.v)) {
      push(Step::Kind::kClusterCancel, op);
    } else if (const auto* wt = std::get_if<BarrierWait>(&op.v)) {
      if (wt->arrive_first) push(Step::Kind::kArrive, op);  // barrier_arrive_and_wait
      push(Step::Kind::kWait, op);
    }
  }
}

}  // namespace collfuzz::ref::exec
