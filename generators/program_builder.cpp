#include "generators/program_builder.h"

#include "generators/cluster_cancel_gen.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "generators/clean_plan.h"
#include "generators/cond_choice.h"
#include "generators/smem_shape.h"
#include "generators/smem_transpose.h"
#include "generators/write_back_ops.h"
#include "harness/core/case_json.h"
#include "harness/core/warp_map.h"

namespace collfuzz::generators {
namespace {

// Drops the index of every use of the barrier allocation `alloc` in `body` (a 0-d barrier).
void use_without_index(Body& body, const std::string& alloc) {
  for (Op& op : body) {
    if (auto* cp = std::get_if<CopyGmemToSmem>(&op.v);
        cp && cp->barrier && cp->barrier->alloc == alloc) {
      cp->barrier->index.reset();
    } else if (auto* ar = std::get_if<BarrierArrive>(&op.v); ar && ar->barrier.alloc == alloc) {
      ar->barrier.index.reset();
    } else if (auto* wt = std::get_if<BarrierWait>(&op.v); wt && wt->barrier.alloc == alloc) {
      wt->barrier.index.reset();
    }
    if (Body* inner = nested_body(op)) use_without_index(*inner, alloc);
  }
}

Op make_op(auto v) {
  Op op;
  op.v = std::move(v);
  return op;
}

Op guarded(Cond cond, Body body) { return make_op(When{std::move(cond), std::move(body)}); }

IndexEntry whole_dim(std::int64_t size) {
  IndexEntry e;
  e.kind = IndexEntry::Kind::kSlice;
  e.size = size;
  return e;
}

}  // namespace

ProgramBuilder::ProgramBuilder(Mesh mesh, const Target& target, bool clean)
    : mesh_(std::move(mesh)), target_(target), env_(mesh_, target.entry), clean_(clean) {}

std::string ProgramBuilder::thread_name_or_default() const {
  return env_.thread_name().value_or("wg");
}

AxisNames ProgramBuilder::scope_axes(ScopeAxes a) const {
  const AxisName thread = AxisName::plain(thread_name_or_default());
  const AxisName cluster =
      env_.cluster().empty() ? AxisName::plain(kUnknownAxis) : env_.cluster().front().name;
  switch (a) {
    case ScopeAxes::kValid:
      return env_.thread() ? AxisNames{thread} : AxisNames{};
    case ScopeAxes::kEmpty:
      return {};
    case ScopeAxes::kCluster:
      return {cluster};
    case ScopeAxes::kClusterAndThread:
      return {cluster, thread};
    case ScopeAxes::kGrid:
      return {env_.grid().empty() ? AxisName::plain("g") : env_.grid().front().name};
    case ScopeAxes::kUnknown:
      return {AxisName::plain(kUnknownAxis)};
    case ScopeAxes::kThreadTwice:
      return {thread, thread};
    case ScopeAxes::kThread:
      return {thread};
  }
  return {};
}

AxisNames ProgramBuilder::cluster_barrier_axes(ClusterBarrierAxes a) const {
  AxisNames all;
  for (const auto& c : env_.cluster()) all.push_back(c.name);
  switch (a) {
    case ClusterBarrierAxes::kAll:
      return all;
    case ClusterBarrierAxes::kFirst:
      return all.empty() ? all : AxisNames{all.front()};
    case ClusterBarrierAxes::kGrouped: {
      const auto& plain = env_.plain_cluster();
      if (plain.size() < 2) return all;
      AxisNames out{AxisName::tuple({plain[0].name.as_plain(), plain[1].name.as_plain()})};
      for (std::size_t i = 2; i < plain.size(); ++i) out.push_back(plain[i].name);
      return out;
    }
    case ClusterBarrierAxes::kUnknown:
      return {AxisName::plain(kUnknownAxis)};
    case ClusterBarrierAxes::kThread:
      return {AxisName::plain(thread_name_or_default())};
    case ClusterBarrierAxes::kReversed:
      return AxisNames(all.rbegin(), all.rend());
  }
  return all;
}

Body ProgramBuilder::waits(WaitChoice w, const BarrierUse& use) const {
  const Op wait = make_op(BarrierWait{use});
  switch (w) {
    case WaitChoice::kAll:
      return {wait};
    case WaitChoice::kLeaderOnly:
      if (env_.plain_cluster().empty()) return {wait};
      return {guarded(axis_equals(env_.plain_cluster().front().name.as_plain(), 0), {wait})};
    case WaitChoice::kNone:
      return {};
    case WaitChoice::kTwice:
      return {wait, wait};
  }
  return {};
}

Op ProgramBuilder::copy_op(const CopyPlan& plan, const std::string& barrier, Alloc& dst_alloc) {
  const int k = next_copy_++;
  const bool cp_async = target_.arch == Arch::kSm80;

  // The copy's mode and axes; before Hopper mostly the plain copy that cp.async supports.
  CopyMode mode = plan.mode;
  if (cp_async && plan.cp_async.plain) mode = CopyMode::kPlain;
  if (clean_ && (mode == CopyMode::kPartitioned || mode == CopyMode::kReplicated)) {
    // JAX accepts leader tracking only over an axis of size 2 in a cluster of 2 CTAs.
    bool size_two = false;
    for (const auto& a : env_.cluster()) size_two = size_two || a.size == 2;
    if (!size_two || env_.num_ctas() != 2) mode = CopyMode::kMulticast;
  }
  std::optional<AxisNames> axes;
  LeaderTracked leader = LeaderTracked::kNone;
  switch (mode) {
    case CopyMode::kPlain:
      break;
    case CopyMode::kMulticast:
      axes = resolve_copy_axes(plan.axes.copy, plan.axes.pick, env_);
      break;
    case CopyMode::kPartitioned:
    case CopyMode::kReplicated:
      axes = resolve_leader_axes(plan.axes.leader, plan.axes.pick, env_);
      leader =
          mode == CopyMode::kPartitioned ? LeaderTracked::kPartitioned : LeaderTracked::kReplicated;
      break;
  }

  // The chunk split divides the destination by the collective size (2 for REPLICATED);
  // PARTITIONED scales the source instead.
  std::int64_t split = 1;
  if (axes && mode == CopyMode::kMulticast) split = env_.cluster_size_of(*axes);
  if (axes && mode == CopyMode::kReplicated) split = 2;
  // Bytes over the whole cluster stay small (the campaign's speed), with an occasional large copy.
  const std::int64_t budget =
      (plan.large ? 256 * 1024 : 16 * 1024) / std::max<std::int64_t>(1, env_.num_ctas());
  Shape dst = resolve_shape(plan.shape, plan.dtype, split,
                            std::clamp<std::int64_t>(budget, 512, 64 * 1024));
  if (clean_) align_for_acceptance(dst, plan.dtype, split, mode);
  const SmemTransforms transforms =
      smem_transforms_for(plan.smem, plan.dtype, !cp_async, clean_, split, dst);
  // cp.async keeps a squeezed dim where it is: one after a leading 1 passes the squeezed-dims
  // assert and reaches launch_context.cp_async.squeeze_leading.
  if (cp_async && plan.layout == SrcLayout::kSqueezedSecond) dst.front() = 1;
  const auto rank = static_cast<std::int64_t>(dst.size());
  std::int64_t partition_axis = 0;
  switch (plan.partition_axis) {
    case PartitionAxis::kFirst:
      break;
    case PartitionAxis::kSecond:
      partition_axis = std::min<std::int64_t>(1, rank - 1);
      break;
    case PartitionAxis::kLast:
      partition_axis = rank - 1;
      break;
    case PartitionAxis::kOutOfRange:
      partition_axis = std::min<std::int64_t>(rank, 7);
      break;
  }

  // A thread axis named like a cluster axis: the abstract evaluation sizes the name by the thread
  // axis, _prepare_async_copy by the cluster axis. An odd PARTITIONED dim then passes the first and
  // fails the second (launch_context.partitioned.size_divides); an even one reaches smem_shape.
  if (leader == LeaderTracked::kPartitioned && axes && env_.thread_name() &&
      plan.layout == SrcLayout::kExact && plan.src_fault == SrcShapeFault::kNone &&
      partition_axis < rank) {
    bool shadowed = false;
    for (const AxisName& a : *axes) {
      for (const auto& c : env_.cluster()) {
        shadowed = shadowed || (a == c.name && !a.is_tuple && a.as_plain() == *env_.thread_name());
      }
    }
    auto& d = dst[static_cast<std::size_t>(partition_axis)];
    if (shadowed && d % 2 == 0) d += 1;
  }

  dst_alloc.name = "dst" + std::to_string(k);
  dst_alloc.kind = AllocKind::kSmem;
  dst_alloc.dtype = plan.dtype;
  dst_alloc.shape = dst;
  dst_alloc.transforms = transforms;
  std::optional<IndexEntry> dst_slice;
  if (!plan.dst_indexed && !dst.empty()) {
    std::int64_t alloc_rows = dst.front();
    dst_slice =
        smem_slice_for(plan.smem, transforms, dst.front(), env_.varying_axis(), clean_, alloc_rows);
    dst_alloc.shape.front() = alloc_rows;
  }
  // A transposed destination: the allocation is dst (its transforms chosen for it), the copy
  // sees it permuted and reads a slice of that shape.
  std::optional<SmemTranspose> transpose;
  if (!dst_slice && !cp_async) transpose = transpose_for(plan, dst);
  if (transpose && target_.semantics == Semantics::kWarpgroup &&
      (transpose_reorders_tiled_dims(*transpose, transforms.tiling.size()) ||
       transpose_order_by_strides_differs(*transpose, dst)))
    transpose.reset();  // not expressible
  if (transpose) dst_transposes_[dst_alloc.name] = *transpose;
  if (plan.dst_indexed) dst_alloc.shape.insert(dst_alloc.shape.begin(), 2);

  // The slice the copy reads: dst's shape, the PARTITIONED dim scaled by the collective size.
  Shape slice = transposed_shape(dst, transpose);
  if (leader == LeaderTracked::kPartitioned && plan.src_fault != SrcShapeFault::kUnscaled &&
      partition_axis < rank) {
    slice[static_cast<std::size_t>(partition_axis)] *= env_.size_of(axes.value_or(AxisNames{}));
  }
  if (plan.src_fault == SrcShapeFault::kOffByOne) slice.back() += 1;

  ArraySpec in;
  in.name = "in" + std::to_string(k);
  in.dtype = plan.src_dtype.value_or(plan.dtype);
  in.fill = plan.fill;
  in.shape = slice;
  std::vector<IndexEntry> index;
  const auto axis = env_.varying_axis();
  SrcLayout layout = plan.layout;
  const bool dynamic = layout == SrcLayout::kPerCta || layout == SrcLayout::kPartlyOutOfBounds ||
                       layout == SrcLayout::kWhollyOutOfBounds || layout == SrcLayout::kPerCtaAt ||
                       layout == SrcLayout::kPerCtaSum || layout == SrcLayout::kUnproven ||
                       layout == SrcLayout::kUnprovenSqueezed;
  if (dynamic && !axis) layout = SrcLayout::kExact;
  const std::vector<NamedAxis> varying = env_.varying_axes();
  if (layout == SrcLayout::kPerCtaSum && varying.size() < 2) layout = SrcLayout::kPerCta;
  switch (layout) {
    case SrcLayout::kExact:
      break;
    case SrcLayout::kSqueezedLeading: {
      in.shape.insert(in.shape.begin(), 3);
      IndexEntry at;
      at.kind = IndexEntry::Kind::kAt;
      at.at = 1;
      index.push_back(at);
      break;
    }
    case SrcLayout::kSqueezedMinor: {
      in.shape.push_back(2);
      for (auto d : slice) index.push_back(whole_dim(d));
      IndexEntry at;
      at.kind = IndexEntry::Kind::kAt;
      at.at = 1;
      index.push_back(at);
      break;
    }
    case SrcLayout::kSqueezedSecond: {
      in.shape.insert(in.shape.begin() + 1, 2);
      index.push_back(whole_dim(slice.front()));
      index.back().whole = true;  // x.at[:, 1]
      IndexEntry at;
      at.kind = IndexEntry::Kind::kAt;
      at.at = 1;
      index.push_back(at);
      for (std::size_t i = 1; i < slice.size(); ++i) index.push_back(whole_dim(slice[i]));
      break;
    }
    case SrcLayout::kMinorSlice: {
      in.shape.back() *= 2;
      for (std::size_t i = 0; i + 1 < slice.size(); ++i) index.push_back(whole_dim(slice[i]));
      IndexEntry half = whole_dim(slice.back());
      half.start = slice.back();
      index.push_back(half);
      break;
    }
    case SrcLayout::kPerCtaAt: {
      in.shape.insert(in.shape.begin(), axis->size);
      IndexEntry at;
      at.kind = IndexEntry::Kind::kAt;
      at.dyn_start = DynStart{axis->name.as_plain(), 1, 0};
      index.push_back(at);
      break;
    }
    case SrcLayout::kPerCtaSum: {
      // x.at[pl.ds(axis_index(a) * rows * |b| + axis_index(b) * rows, rows)]: every CTA (or
      // thread) of the pair of axes reads its own rows (an index summed over two axes).
      const NamedAxis& a = varying[0];
      const NamedAxis& b = varying[1];
      const std::int64_t rows = slice.front();
      in.shape.front() = rows * a.size * b.size;
      IndexEntry e = whole_dim(rows);
      e.dyn_start = DynStart{a.name.as_plain(), rows * b.size, 0};
      e.dyn_start->plus.push_back(DynTerm{b.name.as_plain(), rows, false});
      index.push_back(e);
      break;
    }
    case SrcLayout::kUnproven:
    case SrcLayout::kUnprovenSqueezed: {
      // Every index of the axis reads `rows` rows from its own index on, all in bounds; under
      // Warpgroup, a tiled destination makes the layout inference ask for pl.multiple_of (or,
      // after the integer index, trip its assertion).
      in.shape.front() += axis->size - 1;
      if (layout == SrcLayout::kUnprovenSqueezed) {
        in.shape.insert(in.shape.begin(), 2);
        IndexEntry at;
        at.kind = IndexEntry::Kind::kAt;
        at.at = 1;
        index.push_back(at);
      }
      IndexEntry e = whole_dim(slice.front());
      e.dyn_start = DynStart{axis->name.as_plain(), 1, 0};
      index.push_back(e);
      break;
    }
    case SrcLayout::kPerCta:
    case SrcLayout::kPartlyOutOfBounds:
    case SrcLayout::kWhollyOutOfBounds: {
      const std::int64_t rows = slice.front();
      std::int64_t mul = rows;
      if (layout == SrcLayout::kPerCta) in.shape.front() = rows * axis->size;
      if (layout == SrcLayout::kPartlyOutOfBounds) mul = std::max<std::int64_t>(1, rows / 2);
      IndexEntry e = whole_dim(rows);
      e.dyn_start = DynStart{axis->name.as_plain(), mul, 0};
      index.push_back(e);
      break;
    }
  }
  if (plan.assume_multiple) {
    for (IndexEntry& e : index) {
      if (e.kind == IndexEntry::Kind::kSlice && e.dyn_start) e.dyn_start->multiple_of = e.size;
    }
  }
  // A source array 4 rows past a tiled slice: transform_gmem_shape refuses the array's tiling.
  if (plan.smem.gmem_misfit && !transforms.tiling.empty() && layout == SrcLayout::kExact &&
      !clean_ && in.shape.size() == slice.size()) {
    in.shape.front() += 4;
    index = {whole_dim(slice.front())};
  }
  case_.inputs.push_back(in);

  CopyGmemToSmem cp;
  cp.src = in.name;
  cp.src_index = std::move(index);
  cp.dst = dst_alloc.name;
  if (plan.dst_indexed) cp.dst_index = {1};
  cp.dst_slice = dst_slice;
  cp.dst_transpose = transpose;
  if (dst_slice) dst_slices_[dst_alloc.name] = *dst_slice;
  const BarrierChoice bar_choice = cp_async ? plan.cp_async.barrier : plan.barrier;
  if (bar_choice == BarrierChoice::kIndexed) cp.barrier = BarrierUse{barrier, 0};
  if (bar_choice == BarrierChoice::kUnindexed) cp.barrier = BarrierUse{barrier, std::nullopt};
  cp.collective_axes = axes;
  cp.leader_tracked = leader;
  cp.partition_axis = partition_axis;
  cp.oob_mode = cp_async ? plan.cp_async.oob_mode : plan.oob_mode;
  if (plan.predicate && (!cp_async || plan.cp_async.keep_predicate))
    cp.predicate = resolve_cond(*plan.predicate, env_);
  Op op = make_op(std::move(cp));
  if (plan.guard) return guarded(resolve_cond(*plan.guard, env_), {std::move(op)});
  return op;
}

void ProgramBuilder::tile_by_loop_index(Body& body, const std::string& index, std::int64_t trips,
                                        std::map<std::string, std::int64_t>& tiled) {
  for (Op& op : body) {
    if (Body* inner = nested_body(op)) tile_by_loop_index(*inner, index, trips, tiled);
    auto* cp = std::get_if<CopyGmemToSmem>(&op.v);
    if (!cp) continue;
    ArraySpec* in = nullptr;
    for (auto& a : case_.inputs) {
      if (a.name == cp->src) in = &a;
    }
    if (!in || in->shape.empty()) continue;
    // The leading dim's size before tiling (a copy repeated in the body reads the same source).
    auto [it, first] = tiled.emplace(in->name, in->shape.front());
    const std::int64_t rows = it->second;
    if (cp->src_index.empty()) cp->src_index.push_back(whole_dim(rows));
    IndexEntry& e = cp->src_index.front();
    if (e.kind != IndexEntry::Kind::kSlice || (e.dyn_start && !e.dyn_start->loop)) {
      if (first) tiled.erase(it);
      continue;
    }
    if (!e.dyn_start) {
      const std::int64_t start = e.whole ? 0 : e.start;
      e.dyn_start = DynStart{index, rows, start, true};
      e.whole = false;
      e.start = 0;
      if (e.size == 0) e.size = rows;
    }
    if (first) in->shape.front() = rows * trips;
  }
}

void ProgramBuilder::slot_by_loop_index(Body& body, const std::string& index,
                                        const std::string& barrier,
                                        const std::vector<Alloc>& allocs) {
  const DynStart slot{index, 1, 0, true, 2};  // i % 2
  const auto on_barrier = [&](BarrierUse& u) {
    if (u.alloc != barrier) return;
    u.index = 0;  // an unindexed use of the 1-barrier ref becomes the slot too
    u.slot = slot;
  };
  for (Op& op : body) {
    if (Body* inner = nested_body(op)) slot_by_loop_index(*inner, index, barrier, allocs);
    if (auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      if (cp->barrier) on_barrier(*cp->barrier);
      for (const Alloc& a : allocs) {
        if (a.name == cp->dst && !cp->dst_index.empty() && a.shape.front() == 2) {
          cp->dst_slot = slot;
          cp->dst_index.front() = 0;
        }
      }
    }
    if (auto* ar = std::get_if<BarrierArrive>(&op.v)) on_barrier(ar->barrier);
    if (auto* wt = std::get_if<BarrierWait>(&op.v)) on_barrier(wt->barrier);
  }
}

bool ProgramBuilder::issues_on_barrier(const CopyPlan& plan) const {
  return (target_.arch == Arch::kSm80 ? plan.cp_async.barrier : plan.barrier) !=
         BarrierChoice::kNone;
}

Alloc ProgramBuilder::extra_alloc(const ExtraAlloc& e) {
  Alloc a;
  a.name = "x" + std::to_string(next_extra_++);
  a.kind = e.kind;
  a.shape = e.shape;
  a.dtype = e.dtype;
  a.collective = e.collective;
  a.semaphore = e.semaphore;
  a.num_barriers = e.num_barriers;
  return a;
}

void ProgramBuilder::add_scope(const ScopePlan& plan, Body& out) {
  const int s = next_scope_++;
  RunScoped rs;
  rs.collective_axes = scope_axes(plan.axes);
  const std::string bar = "bar" + std::to_string(s);
  const bool multithreaded = env_.thread().has_value();

  // What each issuing thread does: the copies (in the order of the schedule), the extra
  // arrivals, and the waits.
  std::vector<Alloc> dsts(plan.copies.size());
  std::vector<Op> copy_ops;
  std::int64_t copies_on_barrier = 0;
  for (std::size_t i = 0; i < plan.copies.size(); ++i) {
    copy_ops.push_back(copy_op(plan.copies[i], bar, dsts[i]));
    if (issues_on_barrier(plan.copies[i])) ++copies_on_barrier;
  }
  const bool thread_zero = env_.thread_indexable() && plan.issuers == Issuers::kThreadZero;
  const std::int64_t issuers = multithreaded && !thread_zero ? env_.num_threads() : 1;
  const Op wait = make_op(BarrierWait{BarrierUse{bar, 0}});
  // Issued by the issuing threads only (under `when` for thread 0).
  const auto issued = [&](Body ops) {
    if (thread_zero && !ops.empty())
      return Body{guarded(axis_equals(thread_name_or_default(), 0), std::move(ops))};
    return ops;
  };
  Body body;
  std::int64_t per_phase = 0;  // arrivals per thread in one phase
  if (plan.schedule == Schedule::kBatch || copy_ops.empty()) {
    Body issue = copy_ops;
    for (std::int64_t i = 0; i < plan.extra_arrivals; ++i)
      issue.push_back(make_op(BarrierArrive{BarrierUse{bar, 0}}));
    per_phase = copies_on_barrier + plan.extra_arrivals;
    // From a warp-level context (either lowering semantics, outside a loop: the waits stay
    // outside it).
    if (plan.warp_issue != WarpIssue::kWarpgroup && plan.loop_trips == 0 && !issue.empty()) {
      const bool one = plan.warp_issue != WarpIssue::kEveryWarp &&
                       plan.warp_issue != WarpIssue::kEveryWarpCountedOnce;
      if (plan.warp_issue == WarpIssue::kScopedInside) issue.push_back(make_op(RunScoped{}));
      WarpMap wm;
      wm.axis = "warp";
      wm.body = one ? Body{guarded(axis_equals("warp", 0), std::move(issue))} : std::move(issue);
      if (plan.warp_issue == WarpIssue::kNested) {
        WarpMap outer;
        outer.axis = "outer_warp";
        outer.body = Body{make_op(std::move(wm))};
        wm = std::move(outer);
      }
      issue = Body{make_op(std::move(wm))};
      if (plan.warp_issue == WarpIssue::kEveryWarp) per_phase *= kWarpsPerWarpgroup;
    }
    body = issued(std::move(issue));
    if (per_phase > 0) {
      for (auto& op : waits(plan.wait, BarrierUse{bar, 0})) body.push_back(std::move(op));
    }
  } else {
    // One copy per phase: C and W as the schedule orders them, cycling through the copies.
    static const std::map<Schedule, std::string> kPatterns = {{Schedule::kCopyWaitCopy, "CWC"},
                                                              {Schedule::kMissedPhase, "CWCCC"},
                                                              {Schedule::kWaitLate, "CWCCW"},
                                                              {Schedule::kTwoBeforeAWait, "CCW"}};
    std::string pattern;
    if (plan.schedule == Schedule::kPhased) {
      for (std::size_t i = 0; i < copy_ops.size(); ++i) pattern += "CW";
    } else {
      pattern = kPatterns.at(plan.schedule);
    }
    std::size_t next = 0;
    for (char step : pattern) {
      if (step == 'C') {
        for (auto& op : issued({copy_ops[next++ % copy_ops.size()]})) body.push_back(std::move(op));
      } else {
        body.push_back(wait);
      }
    }
    per_phase = 1;
  }

  Alloc barrier;
  barrier.name = bar;
  barrier.kind = AllocKind::kBarrier;
  barrier.num_barriers = plan.num_barriers;
  const bool slots = plan.loop_trips > 0 && plan.loop_indexed && plan.loop_slots && !body.empty();
  if (slots) barrier.num_barriers = std::max<std::int64_t>(2, barrier.num_barriers);
  barrier.orders_tensor_core = plan.orders_tensor_core;
  barrier.num_arrivals = std::max<std::int64_t>(1, per_phase * issuers);
  switch (plan.arrival_fault) {
    case ArrivalFault::kNone:
      break;
    case ArrivalFault::kOneMore:
      barrier.num_arrivals += 1;
      break;
    case ArrivalFault::kOneFewer:
      barrier.num_arrivals -= 1;
      break;
    case ArrivalFault::kZero:
      barrier.num_arrivals = 0;
      break;
    case ArrivalFault::kNegative:
      barrier.num_arrivals = -1;
      break;
  }

  barrier.scalar_ref = plan.zero_d && barrier.num_barriers == 1;
  for (auto& d : dsts) rs.allocs.push_back(d);
  rs.allocs.push_back(barrier);
  std::optional<std::size_t> indexed_loop;  // where in rs.body the loop with an index is
  // An nd_loop's grid index "i" picks the tile; its local index "t" the slot.
  const std::optional<NamedAxis> nd_axis =
      plan.nd_loop && plan.loop_indexed ? env_.varying_axis() : std::nullopt;
  std::int64_t tiles = plan.loop_trips;  // the tiles the loop's index picks from
  if (plan.loop_trips > 0 && !body.empty()) {
    Loop loop{plan.loop_trips, std::move(body), ""};
    if (plan.loop_indexed) {
      loop.index = "i";
      if (nd_axis) tiles = nd_grid_size(*plan.nd_loop, plan.loop_trips, nd_axis->size);
      std::map<std::string, std::int64_t> tiled;
      tile_by_loop_index(loop.body, loop.index, tiles, tiled);
      if (nd_axis) {
        make_nd_loop(loop, *plan.nd_loop, *nd_axis, tiles, loop.index);
        loop.index = "t";
      }
      if (slots) slot_by_loop_index(loop.body, loop.index, bar, rs.allocs);
      indexed_loop = rs.body.size();
    }
    body = Body{make_op(std::move(loop))};
  }
  for (auto& op : body) rs.body.push_back(std::move(op));

  if (plan.cluster_sync) {
    const ClusterSyncPlan& cs = *plan.cluster_sync;
    Alloc cb;
    cb.name = "cbar" + std::to_string(s);
    cb.kind = AllocKind::kClusterBarrier;
    cb.collective_axes = cluster_barrier_axes(cs.axes);
    cb.leader_tracked = cs.leader_tracked;
    cb.num_arrivals = cs.num_arrivals;
    cb.num_barriers = cs.num_barriers;
    cb.orders_tensor_core = cs.orders_tensor_core;
    cb.scalar_ref = cs.zero_d && cs.num_barriers == 1;
    rs.allocs.push_back(cb);
    Body sync;
    const BarrierUse arrival{cb.name, cs.unindexed ? std::nullopt : std::optional<std::int64_t>(0)};
    const bool warp_arrival = cs.arrive_in_warp;
    if (cs.arrive_and_wait && !warp_arrival && cs.wait == WaitChoice::kAll) {
      sync.push_back(make_op(BarrierWait{arrival, true}));  // plgpu.barrier_arrive_and_wait
    } else {
      sync.push_back(make_op(BarrierArrive{arrival}));
      if (warp_arrival) {
        WarpMap wm;  // from warp 0 of a warp-level context, which JAX refuses
        wm.axis = "warp";
        wm.body = Body{guarded(axis_equals("warp", 0), std::move(sync))};
        sync = Body{make_op(std::move(wm))};
      }
      for (auto& op : waits(cs.wait, BarrierUse{cb.name, 0})) sync.push_back(std::move(op));
    }
    // One warpgroup per CTA takes part in the cluster barrier.
    if (env_.thread_indexable()) {
      rs.body.push_back(guarded(axis_equals(thread_name_or_default(), 0), std::move(sync)));
    } else {
      for (auto& op : sync) rs.body.push_back(std::move(op));
    }
  }

  // try_cluster_cancel: not on sm_80 (the case language does not take it there); a clean case's
  // on sm_100a only (ptxas refuses clusterlaunchcontrol before it).
  if (plan.cluster_cancel && target_.arch != Arch::kSm80 &&
      (!clean_ || target_.arch == Arch::kSm100a))
    append_cluster_cancel(rs, *plan.cluster_cancel, env_, std::to_string(s));

  if (plan.write_back && !plan.copies.empty()) {
    const CopyPlan& first = plan.copies.front();
    ArraySpec out_spec;
    out_spec.name = "out" + std::to_string(s);
    out_spec.shape = dsts.front().shape;
    if (first.dst_indexed) out_spec.shape.erase(out_spec.shape.begin());
    const auto sliced = dst_slices_.find(dsts.front().name);
    if (sliced != dst_slices_.end()) out_spec.shape.front() = sliced->second.size;
    // The write-back through the first copy's transpose: the output has the slice's shape.
    const auto seen = dst_transposes_.find(dsts.front().name);
    std::optional<SmemTranspose> back_transpose;
    if (seen != dst_transposes_.end() && first.transpose_back) {
      back_transpose = seen->second;
      out_spec.shape = transposed_shape(out_spec.shape, back_transpose);
    }
    out_spec.dtype = first.dtype;
    case_.outputs.push_back(out_spec);
    // The write-back's ops; a vector store in them (vector_back.h) where the plan asks.
    const auto back_ops = [&](const CopySmemToGmem& wb) {
      Body ops = write_back_ops(wb, plan.reduce_back, plan.store_sync, plan.store_wait_read_only);
      // A vector store takes no slice of its tile (smem_slice_for slices transformed tiles), nor,
      // under Warpgroup, a tile tiled without a swizzle (not expressible).
      const SmemTransforms& tt = dsts.front().transforms;
      const bool unswizzled_wg =
          target_.semantics == Semantics::kWarpgroup && !tt.tiling.empty() && tt.swizzle == 0;
      if (plan.vector_back && sliced == dst_slices_.end() && !unswizzled_wg && !back_transpose) {
        Shape tile = dsts.front().shape;
        if (first.dst_indexed) tile.erase(tile.begin());
        // kMixedWidth loads an input of the tile's shape and another width: added here.
        std::optional<ArraySpec> partner;
        const auto pd = partner_dtype(first.dtype);
        if (plan.vector_back->value == VectorValueShape::kMixedWidth && pd) {
          partner = ArraySpec{};
          partner->name = "w" + std::to_string(s);
          partner->shape = tile;
          partner->dtype = *pd;
          case_.inputs.push_back(*partner);
        }
        const std::optional<NamedAxis> carry_axis = env_.varying_axis();
        // A peer's tile (plgpu.cluster_ref) where the scope syncs its cluster before the
        // write-back: the first plain cluster axis of size > 1 that no other axis is named like.
        std::optional<NamedAxis> peer_axis;
        if (plan.cluster_sync && !indexed_loop) {
          for (const NamedAxis& a : env_.varying_axes()) {
            if (peer_axis || a.name.is_tuple) continue;
            const std::string n = a.name.as_plain();
            int named = 0;
            for (const AxisName& c : case_.mesh.cluster_names)
              named += !c.is_tuple && c.as_plain() == n ? 1 : 0;
            if (named == 1 && !(case_.mesh.thread_name && *case_.mesh.thread_name == n))
              peer_axis = a;
          }
        }
        apply_vector_back(ops, *plan.vector_back, wb, first.dtype, tile,
                          partner ? &*partner : nullptr, indexed_loop.has_value(),
                          carry_axis ? &*carry_axis : nullptr, peer_axis ? &*peer_axis : nullptr,
                          dsts.front().transforms);
      }
      return ops;
    };
    CopySmemToGmem wb;
    wb.src = dsts.front().name;
    if (first.dst_indexed) wb.src_index = {1};
    if (sliced != dst_slices_.end()) wb.src_slice = sliced->second;
    wb.src_transpose = back_transpose;
    wb.dst = out_spec.name;
    if (plan.write_back_predicate) wb.predicate = resolve_cond(*plan.write_back_predicate, env_);
    if (indexed_loop) {  // each trip stores its tile: out.at[i]
      Loop& loop = std::get<Loop>(rs.body[*indexed_loop].v);
      if (slots && first.dst_indexed) {
        wb.src_slot = DynStart{loop.index, 1, 0, true, 2};
        wb.src_index.front() = 0;  // the slot stands in for it
      }
      out_spec.shape.insert(out_spec.shape.begin(), tiles);
      IndexEntry at;
      at.kind = IndexEntry::Kind::kAt;
      at.dyn_start = DynStart{loop.nd ? loop.nd->index_names[0] : loop.index, 1, 0, true};
      wb.dst_index = {at};
      case_.outputs.back().shape = out_spec.shape;
      for (Op& op : back_ops(wb)) loop.body.push_back(std::move(op));
    } else {
      for (Op& op : back_ops(wb)) rs.body.push_back(std::move(op));
    }
  }
  // An nd_loop's body is complete: its 2-d grid index flattened, its coordinates attached.
  if (indexed_loop) finish_nd_loop(std::get<Loop>(rs.body[*indexed_loop].v));

  Body siblings;
  for (const ExtraAlloc& e : plan.extras) {
    Alloc a = extra_alloc(e);
    if (e.paired) {
      Alloc other = extra_alloc(e);
      other.collective = !a.collective;
      rs.allocs.push_back(std::move(other));
    }
    if (!e.own_scope) {
      rs.allocs.push_back(std::move(a));
      continue;
    }
    RunScoped own;
    own.collective_axes = scope_axes(e.own_scope_axes);
    own.allocs.push_back(std::move(a));
    siblings.push_back(make_op(std::move(own)));
  }

  // A 0-d barrier (num_barriers=()) is used without .at[]: every use of it loses its index.
  for (const Alloc& a : rs.allocs) {
    if (a.scalar_ref) use_without_index(rs.body, a.name);
  }
  for (const ScopePlan& n : plan.nested) add_scope(n, rs.body);
  out.push_back(make_op(std::move(rs)));
  for (auto& op : siblings) out.push_back(std::move(op));
}

void ProgramBuilder::align_for_acceptance(Shape& dst, DType dtype, std::int64_t split,
                                          CopyMode mode) const {
  // Boxes of at most 256 elements per dim (the minor dim in whole granules, the split dim in
  // whole multiples of the split).
  const std::int64_t g = granule(dtype);
  const std::int64_t minor_unit = dst.size() == 1 ? g * split : g;
  while (dst.back() > 256 && dst.back() >= 2 * minor_unit && (dst.back() / 2) % minor_unit == 0)
    dst.back() /= 2;
  if (dst.size() >= 2) {
    while (dst.front() > 256 && dst.front() >= 2 * split && (dst.front() / 2) % split == 0)
      dst.front() /= 2;
  }
  // Lane semantics needs the bytes (doubled when leader-tracked) to be a multiple of 128.
  if (target_.semantics != Semantics::kLane) return;
  const bool leader = mode == CopyMode::kPartitioned || mode == CopyMode::kReplicated;
  const auto bytes = [&] {
    std::int64_t n = dtype_bits(dtype);
    for (auto d : dst) n *= d;
    return n / 8 * (leader ? 2 : 1);
  };
  for (int i = 0; i < 4 && bytes() % 128 != 0; ++i) {
    if (dst.size() >= 2 && dst.front() * 2 <= 256) {
      dst.front() *= 2;
    } else {
      dst.back() *= 2;
    }
  }
}

Case ProgramBuilder::build(const ProgramPlan& plan, std::string name) {
  case_ = Case{};
  case_.name = std::move(name);
  case_.mesh = mesh_;
  case_.target = target_;
  next_copy_ = next_scope_ = next_extra_ = 0;
  for (const ScopePlan& s : plan.scopes) add_scope(clean_ ? clean_scope(s) : s, case_.program);
  renumber_paths(case_);
  return std::move(case_);
}

}  // namespace collfuzz::generators
