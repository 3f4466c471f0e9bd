#include "gpu/plan_encoder.h"

#include <map>
#include <utility>

#include "harness/core/fill.h"

namespace collfuzz::gpu {
namespace {

using lowering::LoadPath;
using lowering::Plan;
using lowering::StepKind;

constexpr std::uint64_t align16(std::uint64_t v) { return (v + 15) & ~std::uint64_t{15}; }

class Encoder {
 public:
  explicit Encoder(const Plan& plan) : p_(plan) {}

  EncodeResult run() {
    EncodeResult r;
    if (geometry() && mbarriers() && layout() && scopes() && programs()) {
      e_.waits_offset = align16(offset_);
      e_.results_bytes = e_.waits_offset + e_.waits.size() * sizeof(DevWaitResult);
      r.encoded = std::move(e_);
      return r;
    }
    r.rejected = std::move(rejected_);
    r.unavailable = why_;
    return r;
  }

 private:
  const Plan& p_;
  EncodedCase e_;
  std::string why_;
  std::optional<Diagnostic> rejected_;
  std::uint64_t offset_ = 0;
  std::vector<std::uint64_t> buffer_flag_;    // per (rank, buffer)
  std::vector<std::uint64_t> buffer_result_;  // per (rank, buffer)
  std::map<std::pair<std::int32_t, std::string>, std::uint32_t> tmap_index_;

  bool fail(std::string why) {
    if (why_.empty()) why_ = std::move(why);
    return false;
  }

  bool abort_at_launch(std::string message, const std::string& op) {
    rejected_ = Diagnostic{"launch", "abort", std::move(message), "", op};
    return false;
  }

  std::string path(const lowering::Step& s) const {
    return s.op >= 0 ? p_.strings[static_cast<std::size_t>(s.op)] : "";
  }

  std::string record_name(std::int32_t record) const {
    const auto& r = p_.barrier_records[static_cast<std::size_t>(record)];
    return p_.strings[static_cast<std::size_t>(r.alloc)] + "[" + std::to_string(r.index) + "]";
  }

  bool in_cluster(std::uint32_t mask) const { return (mask >> e_.num_ctas) == 0; }

  bool geometry() {
    std::int64_t product = 1;
    for (int d = 0; d < 3; ++d) {
      if (p_.cluster[d] < 1 || p_.cluster[d] > kMaxClusterCtas)
        return fail("a cluster dim of " + std::to_string(p_.cluster[d]));
      e_.shape.cluster[static_cast<std::size_t>(d)] = static_cast<std::uint32_t>(p_.cluster[d]);
      product *= p_.cluster[d];
    }
    if (product != p_.num_ctas || p_.num_ctas > kMaxClusterCtas) {
      return fail("a cluster of " + std::to_string(p_.num_ctas) +
                  " CTAs: multicast masks and cluster launches reach 16 at most");
    }
    if (p_.threads_per_cta < 1 || p_.threads_per_cta > kMaxWarpgroups) {
      return fail(std::to_string(p_.threads_per_cta) + " warpgroups per CTA (at most " +
                  std::to_string(kMaxWarpgroups) + " fit a 1024-thread block)");
    }
    e_.num_ctas = static_cast<std::uint32_t>(p_.num_ctas);
    e_.shape.threads_per_cta = static_cast<std::uint32_t>(p_.threads_per_cta);
    if (p_.smem_scratch_bytes < 0 || p_.smem_bytes < p_.smem_scratch_bytes ||
        p_.smem_bytes > (std::int64_t{1} << 30)) {
      return fail("a dynamic SMEM layout of " + std::to_string(p_.smem_bytes) + " bytes");
    }
    e_.smem_scratch = static_cast<std::uint32_t>(p_.smem_scratch_bytes);
    e_.smem_bytes = static_cast<std::uint32_t>(p_.smem_bytes);
    e_.cta_coords = p_.cta_coords;
    e_.inputs = p_.inputs;
    return true;
  }

  bool mbarriers() {
    for (const auto& m : p_.mbarriers) {
      if (m.arrival_count < 1 || m.arrival_count > kMaxArrivalCount) {
        return fail("mbarrier.init with an arrival count of " + std::to_string(m.arrival_count) +
                    " (the PTX ISA's range is 1 to 2^20 - 1; anything else is undefined)");
      }
      if (m.smem_offset % 8 != 0 || m.smem_offset < p_.smem_scratch_bytes ||
          m.smem_offset + 8 > p_.smem_bytes) {
        return fail("an mbarrier at SMEM offset " + std::to_string(m.smem_offset) +
                    " outside the barrier area or not 8-byte aligned");
      }
      e_.mbars.push_back(DevMbar{static_cast<std::uint32_t>(m.smem_offset),
                                 static_cast<std::uint32_t>(m.arrival_count)});
    }
    return true;
  }

  // The results: status, per-CTA control, buffer flags, buffer bytes, outputs (waits come last,
  // once they are counted).
  bool layout() {
    offset_ = sizeof(DevCaseStatus);
    e_.num_scopes = static_cast<std::uint32_t>(p_.scopes.size());
    e_.control_offset = offset_;
    e_.control_stride = align16(sizeof(DevControl) + 4 * std::uint64_t{e_.num_scopes});
    offset_ += e_.control_stride * e_.num_ctas;
    const std::size_t nb = p_.buffers.size();
    for (std::size_t k = 0; k < nb * e_.num_ctas; ++k) buffer_flag_.push_back(offset_ + 4 * k);
    offset_ = align16(offset_ + 4 * nb * e_.num_ctas);
    for (std::uint32_t r = 0; r < e_.num_ctas; ++r) {
      for (std::size_t b = 0; b < nb; ++b) {
        const auto& info = p_.buffers[b];
        if (info.smem_offset < 0 || info.bytes < 0 ||
            info.smem_offset + info.bytes > p_.smem_scratch_bytes) {
          return fail(
              "an SMEM buffer that the layout gives fewer bytes than it holds (prod(shape) * "
              "bits // 8 rounds an odd int4 count down), or one outside the scratch area");
        }
        buffer_result_.push_back(offset_);
        e_.buffer_meta.push_back(BufferMeta{
            r, static_cast<std::int32_t>(b), p_.strings[static_cast<std::size_t>(info.alloc)],
            static_cast<std::uint32_t>(info.bytes), offset_, buffer_flag_[r * nb + b]});
        offset_ = align16(offset_ + static_cast<std::uint64_t>(info.bytes));
      }
    }
    for (const ArraySpec& out : p_.outputs) {
      OutputMeta m;
      m.name = out.name;
      m.dtype = out.dtype;
      m.elements = element_count(out.shape);
      m.bytes = static_cast<std::uint64_t>(packed_bytes(m.elements, out.dtype));
      m.offset = offset_;
      offset_ = align16(offset_ + m.bytes);
      m.written_offset = offset_;
      offset_ = align16(offset_ + static_cast<std::uint64_t>(m.elements));
      e_.outputs.push_back(std::move(m));
    }
    return true;
  }

  bool scopes() {
    const std::size_t nb = p_.buffers.size();
    for (std::uint32_t r = 0; r < e_.num_ctas; ++r) {
      for (const auto& s : p_.scopes) {
        DevScope ds;
        ds.first_buffer = static_cast<std::uint32_t>(e_.buffers.size());
        ds.num_buffers = static_cast<std::uint32_t>(s.num_buffers);
        for (std::int32_t k = 0; k < s.num_buffers; ++k) {
          const auto id = static_cast<std::size_t>(
              p_.scope_buffers[static_cast<std::size_t>(s.first_buffer + k)]);
          const auto& info = p_.buffers[id];
          e_.buffers.push_back(DevBuffer{static_cast<std::uint32_t>(info.smem_offset),
                                         static_cast<std::uint32_t>(info.bytes),
                                         buffer_result_[r * nb + id], buffer_flag_[r * nb + id]});
        }
        e_.scopes.push_back(ds);
      }
    }
    return true;
  }

  bool programs() {
    if (p_.threads.size() != static_cast<std::size_t>(p_.num_ctas * p_.threads_per_cta)) {
      return fail("a plan whose thread programs do not cover the cluster");
    }
    for (std::size_t i = 0; i < p_.threads.size(); ++i) {
      const auto& t = p_.threads[i];
      if (t.cta * p_.threads_per_cta + t.thread != static_cast<std::int64_t>(i)) {
        return fail("thread programs out of (CTA, thread) order");
      }
      DevThread dt;
      dt.first_step = static_cast<std::uint32_t>(e_.steps.size());
      for (std::int64_t k = 0; k < t.num_steps; ++k) {
        if (!step(t, p_.steps[static_cast<std::size_t>(t.first_step + k)])) return false;
      }
      dt.num_steps = static_cast<std::uint32_t>(e_.steps.size()) - dt.first_step;
      e_.threads.push_back(dt);
    }
    return true;
  }

  std::uint32_t mbar_offset(std::int32_t mbarrier) const {
    return static_cast<std::uint32_t>(p_.mbarriers[static_cast<std::size_t>(mbarrier)].smem_offset);
  }

  bool valid_mbar(std::int32_t mbarrier) const {
    return mbarrier >= 0 && static_cast<std::size_t>(mbarrier) < p_.mbarriers.size();
  }

  std::uint32_t add_wait(const lowering::ThreadProgram& t, const lowering::Step& s,
                         std::string barrier, std::int64_t phase) {
    e_.waits.push_back(WaitMeta{t.cta, t.thread, path(s), std::move(barrier), phase});
    return static_cast<std::uint32_t>(e_.waits.size() - 1);
  }

  bool step(const lowering::ThreadProgram& t, const lowering::Step& s) {
    const auto idx = static_cast<std::size_t>(s.index);
    DevStep d;
    switch (s.kind) {
      case StepKind::kScopeEnter:
      case StepKind::kScopeExit:
        if (idx >= p_.scopes.size()) return fail("a scope step naming no scope");
        d.kind = s.kind == StepKind::kScopeEnter ? kOpScopeEnter : kOpScopeExit;
        d.a = static_cast<std::uint32_t>(idx);
        break;
      case StepKind::kBlockSync: {
        const auto& b = p_.block_syncs[idx];
        if (!b.recorded) return true;  // the kernel's own entry sync: the prologue already syncs
        d.kind = kOpBlockSync;
        d.slot = add_wait(t, s, "block_sync", b.phase);
        break;
      }
      case StepKind::kArrive: {
        const auto& a = p_.arrives[idx];
        if (!valid_mbar(a.mbarrier)) return fail("an arrival on no mbarrier");
        if (a.lanes < 1 || a.lanes > static_cast<std::int32_t>(kLanes) || a.count_per_lane < 1 ||
            a.count_per_lane > static_cast<std::int32_t>(kMaxArrivalCount)) {
          return fail("an arrival from " + std::to_string(a.lanes) + " lanes with count " +
                      std::to_string(a.count_per_lane));
        }
        for (std::int64_t tx : {a.tx_lane0, a.tx_other}) {
          if (tx < 0 || tx > kMaxTxPerOp) {
            return fail("an expect_tx of " + std::to_string(tx) +
                        " bytes from one lane (the mbarrier tx-count takes at most 2^20 - 1 per "
                        "operation; more is undefined)");
          }
        }
        d.kind = kOpArrive;
        d.mbar = mbar_offset(a.mbarrier);
        d.a = static_cast<std::uint32_t>(a.lanes);
        d.b = static_cast<std::uint32_t>(a.count_per_lane);
        d.c =
            pack_tx(static_cast<std::uint32_t>(a.tx_lane0), static_cast<std::uint32_t>(a.tx_other));
        break;
      }
      case StepKind::kRemoteArrive: {
        const auto& a = p_.remote_arrives[idx];
        if (!valid_mbar(a.mbarrier)) return fail("a remote arrival on no mbarrier");
        if (a.mask > 0xFFFFu || !in_cluster(a.mask)) {
          return fail("a cluster-barrier arrival with mask " + std::to_string(a.mask) +
                      " on a cluster of " + std::to_string(e_.num_ctas) +
                      " CTAs (mapa to a rank outside the cluster is undefined)");
        }
        d.kind = kOpRemoteArrive;
        d.mbar = mbar_offset(a.mbarrier);
        d.mask = static_cast<std::uint16_t>(a.mask);
        break;
      }
      case StepKind::kCompleteTx: {
        const auto& c = p_.complete_txs[idx];
        if (!valid_mbar(c.mbarrier)) return fail("a complete_tx on no mbarrier");
        if (c.bytes < 0 || c.bytes > kMaxTxPerOp) {
          return fail("an mbarrier.complete_tx of " + std::to_string(c.bytes) + " bytes");
        }
        d.kind = kOpCompleteTx;
        d.mbar = mbar_offset(c.mbarrier);
        d.c = static_cast<std::uint64_t>(c.bytes);
        break;
      }
      case StepKind::kLoad:
        return load(p_.loads[idx], path(s));
      case StepKind::kStore:
        return store(p_.stores[idx]);
      case StepKind::kVectorStore:
        // The device interpreter has no vector arithmetic: the case is unavailable there.
        return fail("a vector_store");
      case StepKind::kClusterCancel:
        // clusterlaunchcontrol is sm_100's; the CUDA executor runs Hopper.
        return fail("a try_cluster_cancel (cluster launch control needs sm_100)");
      case StepKind::kWarpArrivalCheck:  // a check of the CPU run (case_admission.cpp), no op
        return true;
      case StepKind::kCommitSmem:  // no vector stores run here: a fence orders nothing
      case StepKind::kStoreCommit:
      case StepKind::kStoreWait:
        // The device interpreter completes each store before its next step, which is exact
        // while every store of the plan commits and waits for itself (store() refuses any other):
        // then a commit or a wait of its own only meets empty groups.
        return true;
      case StepKind::kWait: {
        const auto& w = p_.waits[idx];
        if (!valid_mbar(w.mbarrier)) return fail("a wait on no mbarrier");
        d.kind = kOpWait;
        d.mbar = mbar_offset(w.mbarrier);
        d.a = static_cast<std::uint32_t>(w.phase & 1);
        d.slot = add_wait(t, s, record_name(w.record), w.phase);
        break;
      }
    }
    e_.steps.push_back(d);
    return true;
  }

  bool load(const lowering::LoadOp& l, const std::string& op) {
    if (l.path == LoadPath::kCpAsync) {
      return fail("a cp.async copy (the pre-Hopper path): the interpreter runs TMA plans only");
    }
    if (l.swizzle != 0) return fail("a swizzled TMA copy (the device interpreter has no swizzle)");
    if (!valid_mbar(l.mbarrier)) return fail("a TMA copy without an mbarrier");
    if (l.input < 0 || static_cast<std::size_t>(l.input) >= p_.inputs.size()) {
      return fail("a copy from no input");
    }
    const ArraySpec& in = p_.inputs[static_cast<std::size_t>(l.input)];
    const std::int64_t region = (l.elements * l.elem_bits + 7) / 8;
    if (l.smem_offset < 0 || l.smem_offset + region > p_.smem_scratch_bytes) {
      return fail("a copy into SMEM outside the scratch area");
    }
    if (l.complete_bytes < 0 || l.complete_bytes > kMaxTxPerOp) {
      return fail("a copy completing " + std::to_string(l.complete_bytes) + " bytes");
    }
    DevStep d;
    d.mbar = mbar_offset(l.mbarrier);
    d.b = static_cast<std::uint32_t>(l.smem_offset);
    d.flags = l.predicate ? kFlagPredicate : 0;
    if (l.multicast_mask != 0) {
      if (l.multicast_mask > 0xFFFFu || !in_cluster(l.multicast_mask)) {
        return fail("a multicast with ctaMask " + std::to_string(l.multicast_mask) +
                    " on a cluster of " + std::to_string(e_.num_ctas) + " CTAs");
      }
      d.flags |= kFlagMulticast;
      d.mask = static_cast<std::uint16_t>(l.multicast_mask);
    }
    if (l.complete_at_leader) {
      d.flags |= kFlagLeader;
      d.c = static_cast<std::uint64_t>(l.leader);
      e_.leader_tracked = true;
    }
    if (l.path == LoadPath::kTensor) {
      TensorMapRequest req;
      req.input = l.input;
      if (auto why = packed_extents_unknown(l.tensor, in.dtype)) return fail(*why);
      if (auto why = tensor_map_params(l.tensor, in.dtype, req.params)) {
        return abort_at_launch(*why, op);
      }
      if (auto why = tensor_coords(l.tensor, in.dtype, d.coords)) return fail(*why);
      const std::string key(reinterpret_cast<const char*>(&req.params), sizeof req.params);
      auto [it, fresh] = tmap_index_.emplace(std::make_pair(l.input, key),
                                             static_cast<std::uint32_t>(e_.tensor_maps.size()));
      if (fresh) e_.tensor_maps.push_back(req);
      d.kind = kOpLoadTensor;
      d.a = it->second;
      d.flags |= static_cast<std::uint8_t>(l.tensor.rank << kFlagRankShift);
      e_.steps.push_back(d);
      return true;
    }
    // cp.async.bulk: a contiguous run of the input.
    if ((d.flags & (kFlagMulticast | kFlagLeader)) != 0) {
      return fail("a bulk copy with a multicast mask or a leader");
    }
    const std::int64_t bytes = l.complete_bytes;
    if (l.elem_bits < 8 && (l.linear_offset * l.elem_bits) % 8 != 0) {
      return fail("a bulk copy starting inside a byte");
    }
    const std::int64_t src = l.linear_offset * l.elem_bits / 8;
    if (bytes == 0 && l.predicate) {
      return fail(
          "a cp.async.bulk of 0 bytes (a copy clamped to nothing): outside the PTX ISA's "
          "rules");
    }
    if (src % 16 != 0 || bytes % 16 != 0 || l.smem_offset % 16 != 0) {
      return fail("a cp.async.bulk of " + std::to_string(bytes) + " bytes from GMEM byte offset " +
                  std::to_string(src) + " into SMEM offset " + std::to_string(l.smem_offset) +
                  ": addresses and size must be multiples of 16 (otherwise undefined)");
    }
    const std::int64_t size = packed_bytes(element_count(in.shape), in.dtype);
    if (src < -kInputGuardBytes || src + bytes > size + kInputGuardBytes) {
      return fail("a bulk copy reading GMEM bytes [" + std::to_string(src) + ", " +
                  std::to_string(src + bytes) + ") of a " + std::to_string(size) +
                  "-byte input: too far out of bounds to read safely");
    }
    d.kind = kOpLoadBulk;
    d.a = static_cast<std::uint32_t>(bytes);
    d.slot = static_cast<std::uint32_t>(l.input);
    d.c = static_cast<std::uint64_t>(src);
    e_.steps.push_back(d);
    return true;
  }

  bool store(const lowering::StoreOp& s) {
    if (s.output < 0 || static_cast<std::size_t>(s.output) >= e_.outputs.size()) {
      return fail("a store to no output");
    }
    if (s.slice.rank < 1 || s.slice.rank > kMaxStoreRank) return fail("a store of rank 0 or > 8");
    if (s.reduction_op) return fail("a store with reduction_op (the device interpreter has none)");
    if (s.tiling_rank > 0 || s.swizzle != 0) {
      return fail(
          "a store from a tiled or swizzled SMEM ref (the device interpreter reads SMEM "
          "row-major)");
    }
    if (s.transpose_rank > 0) {
      return fail(
          "a store from a transposed SMEM ref (the device interpreter reads SMEM in the output "
          "slice's order)");
    }
    if (!s.commit || !s.wait) {
      return fail(
          "a store left in flight (commit_group=False or no wait after it): the device "
          "interpreter stores synchronously");
    }
    const std::int64_t region = (s.elements * s.elem_bits + 7) / 8;
    if (s.smem_offset < 0 || s.smem_offset + region > p_.smem_scratch_bytes) {
      return fail("a store from SMEM outside the scratch area");
    }
    const OutputMeta& out = e_.outputs[static_cast<std::size_t>(s.output)];
    std::int64_t count = 1;
    for (int k = 0; k < s.slice.rank; ++k) {
      const std::int64_t size = s.slice.size[k] == 0 ? 1 : s.slice.size[k];
      if (s.slice.start[k] < 0 || s.slice.start[k] + size > s.slice.dims[k]) {
        return fail("a store outside its output");
      }
      count *= size;
    }
    if (count != s.elements) return fail("a store whose slice does not hold its elements");
    DevStore d;
    d.smem_offset = static_cast<std::uint32_t>(s.smem_offset);
    d.elem_bits = static_cast<std::uint32_t>(s.elem_bits);
    d.elements = static_cast<std::uint64_t>(s.elements);
    d.output_offset = out.offset;
    d.written_offset = out.written_offset;
    d.rank = s.slice.rank;
    for (int k = 0; k < s.slice.rank; ++k) {
      d.dims[k] = s.slice.dims[k];
      d.start[k] = s.slice.start[k];
      d.size[k] = s.slice.size[k];
    }
    e_.stores.push_back(d);
    DevStep step;
    step.kind = kOpStore;
    step.a = static_cast<std::uint32_t>(e_.stores.size() - 1);
    e_.steps.push_back(step);
    return true;
  }
};

}  // namespace

EncodeResult encode_plan(const lowering::Plan& plan) { return Encoder(plan).run(); }

}  // namespace collfuzz::gpu
