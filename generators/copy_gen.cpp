#include "generators/copy_gen.h"

#include "generators/weighted.h"

namespace collfuzz::generators {
namespace {

// Dims that sit at the edges of JAX's rules (the 16-byte granule, the 256-element box).
rc::Gen<DimChoice> near_limit_dim() {
  return rc::gen::map(
      weighted_element<std::int64_t>(
          {{20, 1}, {15, 2}, {15, 3}, {15, 16}, {10, 127}, {10, 128}, {8, 256}, {7, 257}}),
      [](std::int64_t v) {
        return DimChoice{DimChoice::Kind::kNearLimit, v};
      });
}

rc::Gen<DimChoice> aligned_dim(std::vector<std::pair<std::size_t, std::int64_t>> multipliers) {
  return rc::gen::map(weighted_element<std::int64_t>(std::move(multipliers)), [](std::int64_t k) {
    return DimChoice{DimChoice::Kind::kAligned, k};
  });
}

rc::Gen<DimChoice> minor_dim() {
  return weighted_one_of<DimChoice>(
      {{85, aligned_dim({{20, 1}, {20, 2}, {5, 3}, {20, 4}, {20, 8}, {8, 16}, {4, 32}, {3, 64}})},
       {15, near_limit_dim()}});
}

rc::Gen<DimChoice> leading_dim() {
  return weighted_one_of<DimChoice>(
      {{80, aligned_dim({{25, 1}, {25, 2}, {5, 3}, {20, 4}, {15, 8}, {6, 16}, {2, 32}, {2, 64}})},
       {12, near_limit_dim()},
       {8, rc::gen::just(DimChoice{DimChoice::Kind::kNearLimit, 1})}});
}

rc::Gen<AtomChoice> atom_choice() {
  return rc::gen::build<AtomChoice>(
      rc::gen::set(&AtomChoice::axis, weighted_element<std::uint8_t>({{60, 0}, {25, 1}, {15, 2}})),
      rc::gen::set(&AtomChoice::test, weighted_element<AtomTest>({{50, AtomTest::kEqZero},
                                                                  {15, AtomTest::kNeZero},
                                                                  {10, AtomTest::kLtLast},
                                                                  {10, AtomTest::kGeOne},
                                                                  {5, AtomTest::kLeSize},
                                                                  {5, AtomTest::kGtSize},
                                                                  {5, AtomTest::kEqSize}})));
}

rc::Gen<std::optional<CondChoice>> predicate() {
  using S = CondChoice::Shape;
  const auto of_shape = [](S s) {
    CondChoice c;
    c.shape = s;
    return std::optional<CondChoice>(c);
  };
  return weighted_one_of<std::optional<CondChoice>>(
      {{80, rc::gen::just(std::optional<CondChoice>())},
       {5, rc::gen::just(of_shape(S::kTrue))},
       {6, rc::gen::just(of_shape(S::kFalse))},
       {9, rc::gen::cast<std::optional<CondChoice>>(cond_choice())}});
}

rc::Gen<std::optional<OobMode>> oob_mode() {
  using M = std::optional<OobMode>;
  return weighted_element<M>({{55, M()},
                              {10, OobMode::kZeros},
                              {17, OobMode::kUndefined},
                              {18, OobMode::kPromiseInBounds}});
}

Fill recipe_fill(FillPattern pattern, std::uint64_t seed, std::int64_t value) {
  Fill f;
  f.pattern = pattern;
  f.seed = seed;
  f.value = value;
  return f;
}

rc::Gen<Fill> fill() {
  const auto random_fill =
      rc::gen::map(rc::gen::inRange<std::uint64_t>(0, 1000),
                   [](std::uint64_t seed) { return recipe_fill(FillPattern::kRandom, seed, 0); });
  return weighted_one_of<Fill>({{70, rc::gen::just(Fill{})},
                                {25, random_fill},
                                {5, rc::gen::just(recipe_fill(FillPattern::kConstant, 0, 3))}});
}

rc::Gen<CpAsyncChoice> cp_async_choice() {
  using M = std::optional<OobMode>;
  return rc::gen::build<CpAsyncChoice>(
      rc::gen::set(&CpAsyncChoice::plain, weighted_element<bool>({{75, true}, {25, false}})),
      rc::gen::set(&CpAsyncChoice::barrier,
                   weighted_element<BarrierChoice>({{70, BarrierChoice::kNone},
                                                    {25, BarrierChoice::kIndexed},
                                                    {5, BarrierChoice::kUnindexed}})),
      rc::gen::set(&CpAsyncChoice::oob_mode, weighted_element<M>({{75, OobMode::kPromiseInBounds},
                                                                  {15, M()},
                                                                  {5, OobMode::kZeros},
                                                                  {5, OobMode::kUndefined}})),
      rc::gen::set(&CpAsyncChoice::keep_predicate, chance(25)));
}

}  // namespace

rc::Gen<DType> dtype() {
  return weighted_element<DType>({{30, DType::kFloat32},
                                  {14, DType::kBFloat16},
                                  {9, DType::kFloat16},
                                  {5, DType::kInt8},
                                  {3, DType::kUInt8},
                                  {8, DType::kInt32},
                                  {2, DType::kUInt32},
                                  {3, DType::kFloat8E4M3FN},
                                  {2, DType::kFloat8E5M2},
                                  {4, DType::kInt4},
                                  {2, DType::kUInt4},
                                  {3, DType::kInt16},
                                  {1, DType::kUInt16},
                                  {3, DType::kInt64},
                                  {1, DType::kUInt64},
                                  {3, DType::kFloat64}});
}

rc::Gen<ShapeChoice> shape() {
  return rc::gen::build<ShapeChoice>(
      rc::gen::set(&ShapeChoice::rank, weighted_element<std::size_t>(
                                           {{28, 1}, {42, 2}, {15, 3}, {7, 4}, {5, 5}, {3, 6}})),
      rc::gen::set(&ShapeChoice::lead, leading_dim()),
      rc::gen::set(
          &ShapeChoice::middles,
          rc::gen::map(rc::gen::container<std::vector<std::int64_t>>(
                           4, weighted_element<std::int64_t>({{25, 1}, {45, 2}, {10, 3}, {20, 4}})),
                       [](const std::vector<std::int64_t>& v) {
                         return std::array<std::int64_t, 4>{v[0], v[1], v[2], v[3]};
                       })),
      rc::gen::set(&ShapeChoice::minor, minor_dim()));
}

rc::Gen<AxisChoice> axis_choice() {
  return rc::gen::build<AxisChoice>(
      rc::gen::set(&AxisChoice::copy, weighted_element<CopyAxes>({{10, CopyAxes::kAbsent},
                                                                  {4, CopyAxes::kEmpty},
                                                                  {30, CopyAxes::kOne},
                                                                  {15, CopyAxes::kAll},
                                                                  {10, CopyAxes::kSubset},
                                                                  {8, CopyAxes::kReversed},
                                                                  {3, CopyAxes::kDuplicate},
                                                                  {2, CopyAxes::kWithGrid},
                                                                  {2, CopyAxes::kComposite},
                                                                  {2, CopyAxes::kThread},
                                                                  {2, CopyAxes::kGrid},
                                                                  {2, CopyAxes::kUnknown}})),
      rc::gen::set(&AxisChoice::leader, weighted_element<LeaderAxes>({{75, LeaderAxes::kSizeTwo},
                                                                      {5, LeaderAxes::kOne},
                                                                      {6, LeaderAxes::kAll},
                                                                      {6, LeaderAxes::kAbsent},
                                                                      {5, LeaderAxes::kEmpty},
                                                                      {3, LeaderAxes::kUnknown},
                                                                      {2, LeaderAxes::kGrid},
                                                                      {2, LeaderAxes::kThread}})),
      rc::gen::set(&AxisChoice::pick, rc::gen::inRange<std::uint32_t>(0, 16)));
}

rc::Gen<CondChoice> cond_choice() {
  using S = CondChoice::Shape;
  return rc::gen::build<CondChoice>(
      rc::gen::set(&CondChoice::shape, weighted_element<S>({{80, S::kAtom},
                                                            {5, S::kAll},
                                                            {5, S::kAny},
                                                            {5, S::kNot},
                                                            {3, S::kTrue},
                                                            {2, S::kFalse}})),
      rc::gen::set(&CondChoice::first, atom_choice()),
      rc::gen::set(&CondChoice::second, atom_choice()));
}

rc::Gen<SmemChoice> smem_choice() {
  using T = SmemTransformKind;
  using S = SmemSliceKind;
  return rc::gen::build<SmemChoice>(
      rc::gen::set(&SmemChoice::transform, weighted_element<T>({{80, T::kNone},
                                                                {11, T::kTiledSwizzled},
                                                                {3, T::kTiled},
                                                                {2, T::kSwizzled},
                                                                {1, T::kBadSwizzle},
                                                                {1, T::kTilingNotDividing},
                                                                {1, T::kSwizzleMinorMismatch},
                                                                {2, T::kTiledMinor}})),
      rc::gen::set(&SmemChoice::swizzle,
                   weighted_element<std::int64_t>({{4, 32}, {4, 64}, {7, 128}})),
      rc::gen::set(&SmemChoice::row_tiles,
                   weighted_element<std::int64_t>({{8, 1}, {4, 2}, {1, 4}})),
      rc::gen::set(&SmemChoice::wgmma_rows, chance(35)),
      rc::gen::set(&SmemChoice::gmem_misfit, chance(15)),
      rc::gen::set(&SmemChoice::slice,
                   weighted_element<S>(
                       {{80, S::kNone}, {8, S::kStatic}, {5, S::kMisaligned}, {7, S::kPerCta}})));
}

rc::Gen<CopyPlan> copy() {
  return rc::gen::build<CopyPlan>(
      rc::gen::set(&CopyPlan::mode, weighted_element<CopyMode>({{28, CopyMode::kPlain},
                                                                {47, CopyMode::kMulticast},
                                                                {14, CopyMode::kPartitioned},
                                                                {11, CopyMode::kReplicated}})),
      rc::gen::set(&CopyPlan::axes, axis_choice()), rc::gen::set(&CopyPlan::dtype, dtype()),
      rc::gen::set(&CopyPlan::src_dtype, sometimes(2, dtype())),
      rc::gen::set(&CopyPlan::shape, shape()), rc::gen::set(&CopyPlan::large, chance(3)),
      rc::gen::set(&CopyPlan::dst_indexed, chance(5)),
      rc::gen::set(&CopyPlan::assume_multiple, chance(8)),
      rc::gen::set(&CopyPlan::partition_axis,
                   weighted_element<PartitionAxis>({{70, PartitionAxis::kFirst},
                                                    {10, PartitionAxis::kSecond},
                                                    {15, PartitionAxis::kLast},
                                                    {8, PartitionAxis::kOutOfRange}})),
      rc::gen::set(&CopyPlan::src_fault,
                   weighted_element<SrcShapeFault>({{95, SrcShapeFault::kNone},
                                                    {3, SrcShapeFault::kUnscaled},
                                                    {2, SrcShapeFault::kOffByOne}})),
      rc::gen::set(&CopyPlan::layout,
                   weighted_element<SrcLayout>({{62, SrcLayout::kExact},
                                                {8, SrcLayout::kSqueezedLeading},
                                                {5, SrcLayout::kSqueezedMinor},
                                                {7, SrcLayout::kMinorSlice},
                                                {12, SrcLayout::kPerCta},
                                                {4, SrcLayout::kPartlyOutOfBounds},
                                                {2, SrcLayout::kWhollyOutOfBounds},
                                                {4, SrcLayout::kSqueezedSecond},
                                                {4, SrcLayout::kPerCtaAt},
                                                {5, SrcLayout::kPerCtaSum},
                                                {3, SrcLayout::kUnproven},
                                                {2, SrcLayout::kUnprovenSqueezed}})),
      rc::gen::set(&CopyPlan::oob_mode, oob_mode()),
      rc::gen::set(&CopyPlan::predicate, predicate()),
      rc::gen::set(&CopyPlan::guard, sometimes(10, cond_choice())),
      rc::gen::set(&CopyPlan::barrier,
                   weighted_element<BarrierChoice>({{90, BarrierChoice::kIndexed},
                                                    {7, BarrierChoice::kUnindexed},
                                                    {3, BarrierChoice::kNone}})),
      rc::gen::set(&CopyPlan::fill, fill()), rc::gen::set(&CopyPlan::cp_async, cp_async_choice()),
      rc::gen::set(&CopyPlan::transpose,
                   weighted_element<TransposeChoice>({{88, TransposeChoice::kNone},
                                                      {8, TransposeChoice::kLeading},
                                                      {2, TransposeChoice::kRotate},
                                                      {2, TransposeChoice::kMovesLast}})),
      rc::gen::set(&CopyPlan::transpose_ref, chance(8)),
      rc::gen::set(&CopyPlan::transpose_back, chance(50)),
      rc::gen::set(&CopyPlan::smem, smem_choice()));
}

}  // namespace collfuzz::generators
