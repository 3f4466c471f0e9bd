// Turns generated plans into a case: gives every input, allocation and output a unique name,
// derives each copy's source array and index from its destination and collective size, and each
// barrier's arrival count from what the scope issues on it.
#pragma once

#include <map>
#include <string>

#include "generators/axis_environment.h"
#include "generators/scope_plan.h"
#include "harness/core/case.h"

namespace collfuzz::generators {

class ProgramBuilder {
 public:
  // `clean`: build a case meant to be accepted (clean_plan.h).
  ProgramBuilder(Mesh mesh, const Target& target, bool clean = false);

  Case build(const ProgramPlan& plan, std::string name);

 private:
  Mesh mesh_;
  Target target_;
  AxisEnvironment env_;
  bool clean_;
  Case case_;
  int next_copy_ = 0;
  // The slice each sliced copy destination is used through (the write-back stores the same).
  std::map<std::string, IndexEntry> dst_slices_;
  // The transpose each transposed copy destination is seen through (the write-back may reuse it).
  std::map<std::string, SmemTranspose> dst_transposes_;
  int next_scope_ = 0;
  int next_extra_ = 0;

  void add_scope(const ScopePlan& plan, Body& out);
  Op copy_op(const CopyPlan& plan, const std::string& barrier, Alloc& dst_alloc);
  // The copies of a loop body read tile `index` of their sources: each source whose leading dim
  // is a plain slice grows by `trips` tiles and is read at pl.ds(index * rows + start, rows).
  void tile_by_loop_index(Body& body, const std::string& index, std::int64_t trips,
                          std::map<std::string, std::int64_t>& tiled);
  // Double buffering: the uses of `barrier` in a loop body become `bars.at[i % 2]`, and copies
  // into a 2-slot destination `dst.at[i % 2]`.
  static void slot_by_loop_index(Body& body, const std::string& index, const std::string& barrier,
                                 const std::vector<Alloc>& allocs);
  bool issues_on_barrier(const CopyPlan& plan) const;
  void align_for_acceptance(Shape& dst, DType dtype, std::int64_t split, CopyMode mode) const;
  Alloc extra_alloc(const ExtraAlloc& e);
  AxisNames scope_axes(ScopeAxes a) const;
  AxisNames cluster_barrier_axes(ClusterBarrierAxes a) const;
  Body waits(WaitChoice w, const BarrierUse& use) const;
  std::string thread_name_or_default() const;
};

}  // namespace collfuzz::generators
