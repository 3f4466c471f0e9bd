#include "harness/lowering/plan_json.h"

namespace collfuzz::lowering {
namespace {

using nlohmann::json;

template <typename T>
json head(const T* v, std::int32_t n) {
  json a = json::array();
  for (std::int32_t i = 0; i < n; ++i) a.push_back(v[i]);
  return a;
}

const char* path_name(LoadPath p) {
  switch (p) {
    case LoadPath::kTensor:
      return "tensor";
    case LoadPath::kBulk:
      return "bulk";
    case LoadPath::kCpAsync:
      return "cp_async";
  }
  return "?";
}

json step_json(const Plan& p, const Step& s) {
  const auto i = static_cast<std::size_t>(s.index);
  json j;
  if (s.op >= 0) j["op"] = p.strings[static_cast<std::size_t>(s.op)];
  switch (s.kind) {
    case StepKind::kScopeEnter:
      j["step"] = "scope_enter";
      j["scope"] = s.index;
      break;
    case StepKind::kScopeExit:
      j["step"] = "scope_exit";
      j["scope"] = s.index;
      break;
    case StepKind::kBlockSync:
      j["step"] = "bar.sync";
      j["recorded"] = p.block_syncs[i].recorded;
      j["phase"] = p.block_syncs[i].phase;
      break;
    case StepKind::kArrive: {
      const ArriveOp& a = p.arrives[i];
      j["step"] = "arrive";
      j["mbarrier"] = a.mbarrier;
      j["lanes"] = a.lanes;
      j["count_per_lane"] = a.count_per_lane;
      j["tx_lane0"] = a.tx_lane0;
      j["tx_other_lanes"] = a.tx_other;
      break;
    }
    case StepKind::kRemoteArrive:
      j["step"] = "cluster_arrive";
      j["mbarrier"] = p.remote_arrives[i].mbarrier;
      j["mask"] = p.remote_arrives[i].mask;
      break;
    case StepKind::kClusterCancel:
      j["step"] = "try_cancel";
      j["mbarrier"] = p.cluster_cancels[i].mbarrier;
      j["result_offset"] = p.cluster_cancels[i].result_offset;
      break;
    case StepKind::kCompleteTx:
      j["step"] = "complete_tx";
      j["mbarrier"] = p.complete_txs[i].mbarrier;
      j["bytes"] = p.complete_txs[i].bytes;
      break;
    case StepKind::kLoad: {
      const LoadOp& l = p.loads[i];
      j["step"] = "load";
      j["path"] = path_name(l.path);
      j["predicate"] = l.predicate;
      j["input"] = p.inputs[static_cast<std::size_t>(l.input)].name;
      j["smem_offset"] = l.smem_offset;
      j["elements"] = l.elements;
      j["complete_bytes"] = l.complete_bytes;
      if (l.path == LoadPath::kTensor) {
        j["dims"] = head(l.tensor.dims, l.tensor.rank);
        j["strides"] = head(l.tensor.strides, l.tensor.rank);
        j["box"] = head(l.tensor.box, l.tensor.rank);
        j["coords"] = head(l.tensor.coords, l.tensor.rank);
      } else {
        j["linear_offset"] = l.linear_offset;
        j["linear_elements"] = l.linear_elements;
      }
      j["multicast_mask"] = l.multicast_mask;
      j["complete_at_leader"] = l.complete_at_leader;
      if (l.complete_at_leader) j["leader"] = l.leader;
      j["mbarrier"] = l.mbarrier;
      break;
    }
    case StepKind::kStore: {
      const StoreOp& st = p.stores[i];
      j["step"] = "store";
      j["output"] = p.outputs[static_cast<std::size_t>(st.output)].name;
      j["smem_offset"] = st.smem_offset;
      j["elements"] = st.elements;
      j["start"] = head(st.slice.start, st.slice.rank);
      if (st.reduction_op) j["reduction_op"] = to_string(*st.reduction_op);
      if (st.transpose_rank > 0) {
        j["transpose"] = std::vector<std::int32_t>(st.transpose, st.transpose + st.transpose_rank);
      }
      j["commit"] = st.commit;
      if (!st.commit_smem) j["commit_smem"] = false;
      j["wait"] = st.wait;
      break;
    }
    case StepKind::kVectorStore: {
      const VectorStoreOp& v = p.vector_stores[i];
      j["step"] = "vector_store";
      if (v.to_register >= 0) {
        j["register"] = v.to_register;
      } else if (v.to_smem) {
        j["smem_offset"] = v.smem_offset;
      } else {
        j["output"] = p.outputs[static_cast<std::size_t>(v.output)].name;
      }
      j["nodes"] = v.num_nodes;
      break;
    }
    case StepKind::kStoreCommit:
      j["step"] = "store_commit_group";
      break;
    case StepKind::kCommitSmem:
      j["step"] = "commit_smem";
      break;
    case StepKind::kWarpArrivalCheck: {
      j["step"] = "warp_arrival_check";
      json barriers = json::array();
      for (const auto& b : p.warp_checks[i].barriers) {
        json warps = json::array();
        for (const auto& w : b.warps) {
          json arrivals = json::array();
          for (const WarpArrival& a : w) {
            arrivals.push_back(
                {{"hardware", a.hardware}, {"no_complete", a.no_complete}, {"op", a.tag}});
          }
          warps.push_back(std::move(arrivals));
        }
        barriers.push_back({{"mbarrier", b.mbarrier}, {"warps", std::move(warps)}});
      }
      j["barriers"] = std::move(barriers);
      break;
    }
    case StepKind::kStoreWait:
      j["step"] = "store_wait_group";
      j["n"] = p.store_waits[i].n;
      j["read_only"] = p.store_waits[i].read_only;
      break;
    case StepKind::kWait:
      j["step"] = "wait";
      j["mbarrier"] = p.waits[i].mbarrier;
      j["phase"] = p.waits[i].phase;
      j["parity"] = p.waits[i].phase & 1;
      break;
  }
  return j;
}

}  // namespace

json plan_to_json(const Plan& p) {
  json j;
  j["cluster"] = {p.cluster[0], p.cluster[1], p.cluster[2]};
  j["num_ctas"] = p.num_ctas;
  j["threads_per_cta"] = p.threads_per_cta;
  j["smem_scratch_bytes"] = p.smem_scratch_bytes;
  j["smem_bytes"] = p.smem_bytes;
  j["cluster_sync_after_init"] = p.cluster_sync_after_init;
  json bars = json::array();
  for (const MbarrierInit& m : p.mbarriers)
    bars.push_back({{"smem_offset", m.smem_offset}, {"arrival_count", m.arrival_count}});
  j["mbarriers"] = bars;
  json buffers = json::array();
  for (const BufferInfo& b : p.buffers) {
    buffers.push_back({{"alloc", p.strings[static_cast<std::size_t>(b.alloc)]},
                       {"smem_offset", b.smem_offset},
                       {"bytes", b.bytes}});
  }
  j["buffers"] = buffers;
  json records = json::array();
  for (const BarrierRecordInfo& r : p.barrier_records) {
    records.push_back({{"alloc", p.strings[static_cast<std::size_t>(r.alloc)]},
                       {"index", r.index},
                       {"mbarrier", r.mbarrier},
                       {"unit", r.unit}});
  }
  j["barrier_records"] = records;
  json threads = json::array();
  for (const ThreadProgram& t : p.threads) {
    json steps = json::array();
    for (std::int64_t k = 0; k < t.num_steps; ++k)
      steps.push_back(step_json(p, p.steps[static_cast<std::size_t>(t.first_step + k)]));
    threads.push_back({{"cta", t.cta}, {"thread", t.thread}, {"steps", steps}});
  }
  j["threads"] = threads;
  return j;
}

}  // namespace collfuzz::lowering
