#include "tests/fuzz/case_decoder.h"

#include <array>

#include "generators/clean_plan.h"
#include "generators/mesh_gen.h"
#include "generators/program_builder.h"
#include "tests/fuzz/choice_bytes.h"

namespace collfuzz::fuzz {
namespace {

using namespace collfuzz::generators;

constexpr std::array<std::int64_t, 8> kNearLimit = {1, 2, 3, 16, 127, 128, 256, 257};
constexpr std::array<std::int64_t, 8> kMultipliers = {1, 2, 3, 4, 8, 16, 32, 64};
constexpr std::array<std::int64_t, 9> kClusterDims = {1, 2, 3, 4, 8, 16, 17, 32, 64};

MeshChoice mesh(ChoiceBytes& in) {
  MeshChoice m;
  const auto rank = in.below(5);
  for (std::uint64_t i = 0; i < rank; ++i)
    m.cluster.push_back(kClusterDims[in.below(kClusterDims.size())]);
  std::int64_t product = 1;
  for (auto& d : m.cluster) {
    if (product * d > 64) d = 1;
    product *= d;
  }
  m.scheme = in.below(3);
  m.names = in.pick<NameVariant>(6);
  m.threads = in.pick<ThreadVariant>(4);
  m.num_threads = static_cast<std::int64_t>(1 + in.below(17));
  m.thread_name = in.below(3);
  m.grid = in.pick<GridVariant>(7);
  return m;
}

Target target(ChoiceBytes& in) {
  Target t;
  t.arch = in.pick<Arch>(3);
  t.semantics = in.pick<Semantics>(2);
  t.entry = in.below(16) == 0 ? Entry::kPallasCall : Entry::kKernel;
  t.profile = in.pick<Profile>(2);
  return t;
}

DimChoice dim(ChoiceBytes& in) {
  if (in.below(4) == 0)
    return {DimChoice::Kind::kNearLimit, kNearLimit[in.below(kNearLimit.size())]};
  return {DimChoice::Kind::kAligned, kMultipliers[in.below(kMultipliers.size())]};
}

CondChoice cond(ChoiceBytes& in) {
  CondChoice c;
  c.shape = in.pick<CondChoice::Shape>(6);
  c.first = {static_cast<std::uint8_t>(in.below(3)), in.pick<AtomTest>(7)};
  c.second = {static_cast<std::uint8_t>(in.below(3)), in.pick<AtomTest>(7)};
  return c;
}

CopyPlan copy(ChoiceBytes& in) {
  CopyPlan p;
  p.mode = in.pick<CopyMode>(4);
  p.axes.copy = in.pick<CopyAxes>(12);
  p.axes.leader = in.pick<LeaderAxes>(8);
  p.axes.pick = static_cast<std::uint32_t>(in.below(16));
  p.dtype = in.pick<DType>(16);
  if (in.below(16) == 0) p.src_dtype = in.pick<DType>(16);
  p.shape.rank = 1 + in.below(6);
  p.shape.lead = dim(in);
  for (auto& m : p.shape.middles) m = static_cast<std::int64_t>(1 + in.below(4));
  p.shape.minor = dim(in);
  p.large = in.below(16) == 0;
  p.dst_indexed = in.below(16) == 0;
  p.partition_axis = in.pick<PartitionAxis>(4);
  p.src_fault = in.below(8) == 0 ? in.pick<SrcShapeFault>(3) : SrcShapeFault::kNone;
  p.layout = in.pick<SrcLayout>(7);
  if (in.flag()) p.oob_mode = in.pick<OobMode>(3);
  if (in.below(4) == 0) p.predicate = cond(in);
  if (in.below(8) == 0) p.guard = cond(in);
  p.barrier = in.pick<BarrierChoice>(3);
  p.fill = Fill{};
  p.fill.pattern = in.pick<FillPattern>(3);
  p.fill.seed = in.below(1000);
  p.fill.value = 3;
  p.cp_async = {in.flag(), in.pick<BarrierChoice>(3),
                in.flag() ? std::optional<OobMode>(in.pick<OobMode>(3)) : std::nullopt, in.flag()};
  return p;
}

ScopePlan scope(ChoiceBytes& in, int depth) {
  ScopePlan s;
  s.axes = in.pick<ScopeAxes>(8);
  s.issuers = in.pick<Issuers>(2);
  const auto copies = in.below(4);
  for (std::uint64_t i = 0; i < copies; ++i) s.copies.push_back(copy(in));
  s.extra_arrivals = static_cast<std::int64_t>(in.below(3));
  s.arrival_fault = in.below(4) == 0 ? in.pick<ArrivalFault>(5) : ArrivalFault::kNone;
  s.num_barriers = in.below(8) == 0 ? 33 : 1;
  s.orders_tensor_core = in.below(16) == 0;
  s.wait = in.pick<WaitChoice>(4);
  s.write_back = in.flag();
  if (in.below(4) == 0) {
    ClusterSyncPlan cs;
    cs.axes = in.pick<ClusterBarrierAxes>(6);
    cs.leader_tracked = in.below(8) == 0;
    cs.num_arrivals = static_cast<std::int64_t>(in.below(3));
    cs.num_barriers = static_cast<std::int64_t>(1 + in.below(2));
    cs.unindexed = in.below(8) == 0;
    cs.orders_tensor_core = in.below(16) == 0;
    cs.wait = in.pick<WaitChoice>(4);
    cs.zero_d = in.below(3) == 0;
    s.cluster_sync = cs;
  }
  if (in.below(4) == 0) {
    ExtraAlloc e;
    e.kind = in.pick<AllocKind>(7);
    e.shape = in.flag() ? Shape{64, 64} : Shape{128};
    e.dtype = in.pick<DType>(16);
    e.collective = in.flag();
    e.paired = in.below(8) == 0;
    e.semaphore = in.pick<SemaphoreKind>(2);
    e.num_barriers = in.flag() ? 1 : 33;
    e.own_scope = in.flag();
    e.own_scope_axes = in.pick<ScopeAxes>(8);
    s.extras.push_back(e);
  }
  if (depth > 0 && in.below(8) == 0) s.nested.push_back(scope(in, depth - 1));
  s.zero_d = in.below(3) == 0;  // num_barriers=(), read last in the scope
  return s;
}

}  // namespace

Case decode_case(const std::uint8_t* data, std::size_t size) {
  ChoiceBytes in(data, size);
  const bool clean = in.flag();
  Mesh m = build_mesh(mesh(in), clean);
  Target t = target(in);
  if (clean) t = clean_target(t);
  if (t.entry == Entry::kPallasCall) {
    m.grid_names.clear();
    m.cluster.clear();
    m.cluster_names.clear();
    m.num_threads.reset();
    m.thread_name.reset();
  }
  ProgramPlan plan;
  const auto scopes = 1 + in.below(3);
  for (std::uint64_t i = 0; i < scopes; ++i) plan.scopes.push_back(scope(in, 1));
  return ProgramBuilder(std::move(m), t, clean).build(plan, "fuzz");
}

}  // namespace collfuzz::fuzz
