// The case reader proper (case_json.h, docs/case-format.md): one instance per case, carrying the
// names in scope. Its members are defined per section: case_parser.cpp (the case, mesh, target
// and arrays), case_parser_program.cpp (ops, scopes, allocations, barriers, conditions),
// case_parser_copies.cpp (copies and their indices). Internal to harness/core.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/case.h"
#include "harness/core/index_json.h"

namespace collfuzz::case_json {

// The bit pattern of one element given as a JSON number (a `values` fill, an expectation's
// `values` region): exactly a value of `dtype`, else an InputError naming `path`.
std::uint64_t value_bits(const nlohmann::json& v, const std::string& path, DType dtype);

using nlohmann::json;

class CaseParser {
 public:
  Case parse(const json& j);

 private:
  Case c_;
  std::set<std::string> global_names_;  // arrays and allocations: unique in a case
  std::vector<std::map<std::string, const Alloc*>> scopes_;  // allocations visible here
  std::int64_t op_count_ = 0;
  bool in_loop_ = false;
  // The names the enclosing loop gives its indices while its body is read: a loop's index (its
  // size the trip count) or an nd_loop's local index and grid index coordinates (the size of a
  // coordinate its grid dim), which a slot may not read.
  struct LoopName {
    std::string name;
    std::int64_t size = 0;
    bool coordinate = false;
  };
  std::vector<LoopName> loop_names_;
  std::vector<std::string> warp_axes_;  // the axes of the warp_maps around the op being parsed
  // The loop-carried values a {"carry": name} node may read here, innermost last: a loop's own in
  // its body and next, and in the ops after it in the enclosing body (parse_body drops them at its
  // end).
  struct CarryInScope {
    std::string name;
    Shape shape;
    DType dtype = DType::kFloat32;
    bool own_layout = false;
  };
  std::vector<CarryInScope> carries_;
  static constexpr std::int64_t kMaxTripCount = 256;
  static constexpr std::int64_t kMaxWaitGroups = 1 << 20;  // wait_smem_to_gmem's |n|
  static constexpr std::int64_t kMaxLoopSteps = 1024;
  std::int64_t alloc_bytes_ = 0;

  void parse_mesh(const json& j, const std::string& path);

  void parse_target(const json& j, const std::string& path);

  void claim_name(const std::string& name, const std::string& path);

  // An input's `fill`, checked against the array's dtype and shape (case_parser_fill.cpp).
  static Fill parse_fill(const json& j, const std::string& path, const ArraySpec& a);
  static void parse_jax_random(const json& j, const std::string& path, const ArraySpec& a,
                               const json* distribution, const json* split, Fill& fill);
  void parse_arrays(const json& j, const std::string& path, bool is_input,
                    std::vector<ArraySpec>& out, std::int64_t& total);

  // ---- ops

  Body parse_body(const json& j, const std::string& path, int depth);

  Op parse_op(const json& j, const std::string& path, int depth);

  // warp_map (warp_map.h): its axis is usable by lax.axis_index in the body only.
  WarpMap parse_warp_map(const json& j, const std::string& path, int depth);

  Loop parse_loop(const json& j, const std::string& path, int depth);
  // plgpu.nd_loop (case_parser_nd_loop.cpp): a loop whose trips are each thread's own.
  Loop parse_nd_loop(const json& j, const std::string& path, int depth);
  // A loop's carry and body, its index names in scope (loop_names_ set by the caller).
  void parse_loop_body(const json& j, const std::string& path, int depth, Loop& l);
  // A loop's `carry` (case_parser_vectors.cpp): its name, dtype, shape and init; next is read by
  // parse_carry_next once the carry is in scope.
  Loop::Carry parse_carry(const json& j, const std::string& path);
  void parse_carry_next(const json& j, const std::string& path, Loop::Carry& carry);

  RunScoped parse_run_scoped(const json& j, const std::string& path, int depth);

  // plgpu.try_cluster_cancel (case_parser_cluster_cancel.cpp).
  TryClusterCancel parse_try_cluster_cancel(const json& j, const std::string& path);

  Alloc parse_alloc(const json& j, const std::string& path);

  const Alloc* lookup_alloc(const std::string& name, const std::string& path) const;

  const ArraySpec& lookup_array(const std::vector<ArraySpec>& arrays, const std::string& name,
                                const std::string& path, const char* what) const;

  BarrierUse parse_barrier_use(const json& j, const std::string& path, bool plain_barrier_only);

  // Leading integer indices into an SMEM allocation; returns the shape that remains. With
  // `slot`, the first may be a loop's slot (`smem.at[i % 2]`, index_json.h parse_loop_slot).
  // A copy's SMEM ref may end its index with one slice (`pl.ds(start, size)`, static or
  // dynamic start) of the first dim after the integer indices: `slice` receives it.
  SmemTransforms parse_smem_transforms(const json& j, const std::string& path, std::size_t rank);
  void check_store_tiles(const CopySmemToGmem& cp, const Alloc& src, const ArraySpec& out,
                         const std::string& path) const;
  Shape parse_smem_index(const json* j, const std::string& path, const Alloc& a,
                         std::vector<std::int64_t>& out, std::optional<DynStart>* slot = nullptr,
                         std::optional<IndexEntry>* slice = nullptr);

  // A copy's SMEM side {"transpose": [...], "transpose_ref": true} over the indexed ref of shape
  // `ref_shape` (nullopt when absent).
  std::optional<SmemTranspose> parse_smem_transpose(const json& side, const std::string& path,
                                                    const Alloc& a, const Shape& ref_shape) const;

  // How dynamic indices resolve their axis or loop index here (index_json.h).
  IndexAxisSize index_axis_size() const;
  // The same for a loop's slot (`bars.at[i % 2]`), which reads a loop's index or an nd_loop's
  // local index, not a coordinate of its grid index.
  IndexAxisSize slot_axis_size() const;

  // A vector load's or an SMEM vector store's {"cluster": {axis: index}} (plgpu.cluster_ref):
  // into `axis` and `index`, in range for every CTA (case_parser_cluster_ref.cpp).
  void parse_cluster_ref(const json& j, const std::string& path, std::string& axis,
                         DynStart& index) const;

  // lax.axis_index(axis) is used by conditions and dynamic indices: it must name exactly one
  // cluster axis or the thread axis.
  // Returns the axis's size where the mesh gives one.
  std::optional<std::int64_t> check_index_axis(const std::string& axis,
                                               const std::string& path) const;

  // A loop index read by a dynamic index ({"loop": name}): the enclosing loop's; its trip count.
  std::int64_t check_loop_index(const std::string& name, const std::string& path) const;

  // A dynamic slice start of a TMA store stays in bounds for every value it takes (the store
  // has no OOB mode in the case language).
  void check_store_slice_in_bounds(const IndexEntry& e, std::int64_t dim,
                                   const std::string& path) const;

  // GMEM indexing (index_json.h); returns the shape of the indexed ref (squeezed dims dropped).
  Shape parse_gmem_index(const json* j, const std::string& path, const ArraySpec& arr,
                         std::vector<IndexEntry>& out);

  Cond parse_cond(const json& j, const std::string& path, int depth);

  CopyGmemToSmem parse_copy_g2s(const json& j, const std::string& path);

  CopySmemToGmem parse_copy_s2g(const json& j, const std::string& path);

  // vector_store and its value (case_parser_vectors.cpp): every node of `shape` and `dtype`.
  VectorStore parse_vector_store(const json& j, const std::string& path);
  void check_transformed_value(const VectorStore& vs, const std::string& path) const;
  void refuse_transformed_carry(const VectorValue& v, const std::string& path) const;
  VectorValue parse_vector_value(const json& j, const std::string& path, const Shape& shape,
                                 DType dtype, int depth);
};

}  // namespace collfuzz::case_json
