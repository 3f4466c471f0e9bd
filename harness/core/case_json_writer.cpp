// The case writer (case_json.h): a case back to its JSON form (docs/case-format.md).

#include <cmath>

#include "harness/core/case_json.h"

#include "harness/core/case_json_fields.h"
#include "harness/core/element_value.h"
#include "harness/core/index_json.h"
#include "harness/core/jax_version.h"
#include "harness/core/scratch_shapes.h"
#include "harness/core/vector_ops.h"
#include "harness/core/warp_map.h"

namespace collfuzz::case_json {

using nlohmann::json;

namespace {

json cond_to_json(const Cond& c) {
  switch (c.kind) {
    case Cond::Kind::kConst:
      return c.constant;
    case Cond::Kind::kAtom:
      return json{{"axis", c.axis}, {name_of(c.op, kCmpOps), c.value}};
    case Cond::Kind::kAll:
    case Cond::Kind::kAny: {
      json arr = json::array();
      for (const auto& ch : c.children) arr.push_back(cond_to_json(ch));
      return json{{c.kind == Cond::Kind::kAll ? "all" : "any", arr}};
    }
    case Cond::Kind::kNot:
      return json{{"not", cond_to_json(c.children.front())}};
  }
  return nullptr;
}

json gmem_index_to_json(const std::vector<IndexEntry>& index) {
  json out = json::array();
  for (const auto& e : index) out.push_back(gmem_index_entry_to_json(e));
  return out;
}

void transpose_to_json(const std::optional<SmemTranspose>& t, json& side) {
  if (!t) return;
  side["transpose"] = t->permutation;
  if (t->via_transpose_ref) side["transpose_ref"] = true;
}

json smem_index_to_json(const std::vector<std::int64_t>& index, const std::optional<DynStart>& slot,
                        const std::optional<IndexEntry>& slice = std::nullopt) {
  json out = json::array();
  for (auto i : index) out.push_back(i);
  if (slot && !index.empty()) out[0] = dyn_to_json(*slot);
  if (slice) out.push_back(gmem_index_entry_to_json(*slice));
  return out;
}

json transforms_to_json(const SmemTransforms& t) {
  json out = json::array();
  if (!t.tiling.empty()) out.push_back(json{{"tiling", t.tiling}});
  if (t.swizzle != 0) out.push_back(json{{"swizzle", t.swizzle}});
  return out;
}

json barrier_use_to_json(const BarrierUse& b) {
  json out{{"alloc", b.alloc}};
  if (b.slot) {
    out["index"] = dyn_to_json(*b.slot);
  } else if (b.index) {
    out["index"] = *b.index;
  }
  return out;
}

json alloc_to_json(const Alloc& a) {
  json out{{"name", a.name}, {"kind", name_of(a.kind, kAllocKinds)}};
  switch (a.kind) {
    case AllocKind::kSmem:
    case AllocKind::kAcc:
    case AllocKind::kGmem:
    case AllocKind::kTmem:
      out["shape"] = a.shape;
      out["dtype"] = std::string(dtype_name(a.dtype));
      if (a.kind == AllocKind::kTmem) out["collective"] = a.collective;
      if (a.kind == AllocKind::kSmem && a.transforms.any())
        out["transforms"] = transforms_to_json(a.transforms);
      break;
    case AllocKind::kBarrier:
    case AllocKind::kClusterBarrier:
      if (a.kind == AllocKind::kClusterBarrier) {
        out["collective_axes"] = axis_names_to_json(a.collective_axes);
        if (a.leader_tracked) out["leader_tracked"] = true;
      }
      out["num_arrivals"] = a.num_arrivals;
      if (a.scalar_ref) {
        out["num_barriers"] = json::array();
      } else if (a.num_barriers != 1) {
        out["num_barriers"] = a.num_barriers;
      }
      if (a.orders_tensor_core) out["orders_tensor_core"] = true;
      break;
    case AllocKind::kSemaphore:
      out["type"] = name_of(a.semaphore, kSemaphoreKinds);
      out["shape"] = a.shape;
      break;
  }
  return out;
}

json body_to_json(const Body& body);

// A cluster_ref's {axis: index} (docs/case-format.md, "DSMEM reads"): a constant index as an
// integer.
json cluster_ref_to_json(const std::string& axis, const DynStart& d) {
  json idx = d.add;
  if (!d.axis.empty()) {
    idx = json{{"axis", d.axis}, {"mul", d.mul}, {"add", d.add}};
    if (d.mod > 0) idx["mod"] = d.mod;
  }
  return json{{axis, idx}};
}

// A vector value (docs/case-format.md "vector_store"); a constant as the number it is, an
// integral one as a JSON integer.
json vector_value_to_json(const VectorValue& v) {
  switch (v.kind) {
    case VectorKind::kConst:
      if (v.number == std::trunc(v.number) && std::fabs(v.number) < 0x1p53)
        return json{{"const", static_cast<std::int64_t>(v.number)}};
      return json{{"const", v.number}};
    case VectorKind::kLoadSmem: {
      json ref{{"alloc", v.ref}};
      if (!v.smem_index.empty()) ref["index"] = smem_index_to_json(v.smem_index, v.smem_slot);
      if (!v.cluster_axis.empty())
        ref["cluster"] = cluster_ref_to_json(v.cluster_axis, v.cluster_index);
      return json{{"load", ref}};
    }
    case VectorKind::kLoadInput: {
      json ref{{"input", v.ref}};
      if (!v.gmem_index.empty()) ref["index"] = gmem_index_to_json(v.gmem_index);
      return json{{"load", ref}};
    }
    case VectorKind::kAdd:
    case VectorKind::kSub:
    case VectorKind::kMul:
    case VectorKind::kMin:
    case VectorKind::kMax:
    case VectorKind::kAnd:
    case VectorKind::kOr:
    case VectorKind::kXor:
    case VectorKind::kShiftLeft:
    case VectorKind::kShiftRightLogical:
    case VectorKind::kShiftRightArithmetic: {
      const std::string name(*binary_vector_op_name(v.kind));
      return json{{name, std::vector<json>{vector_value_to_json(v.args.at(0)),
                                           vector_value_to_json(v.args.at(1))}}};
    }
    case VectorKind::kConvert: {
      json c = json::object();
      c["from"] = dtype_name(v.from);
      c["value"] = vector_value_to_json(v.args.at(0));
      return json{{"convert", c}};
    }
    case VectorKind::kBroadcast: {
      json b = json::object();
      b["shape"] = v.broadcast_shape;
      if (!v.broadcast_dims.empty()) b["dims"] = v.broadcast_dims;
      b["value"] = vector_value_to_json(v.args.at(0));
      return json{{"broadcast", b}};
    }
    case VectorKind::kCarry:
      return json{{"carry", v.ref}};
    case VectorKind::kIota:
      if (!v.iota_layout_cast)
        return json{{"iota", json{{"dimension", v.iota_dimension}, {"layout_cast", false}}}};
      return json{{"iota", json{{"dimension", v.iota_dimension}, {"vec_size", v.iota_vec_size}}}};
  }
  return json{};
}

json op_to_json(const Op& op) {
  return std::visit(
      [](const auto& v) -> json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, RunScoped>) {
          json out{{"op", "run_scoped"}};
          if (!v.collective_axes.empty())
            out["collective_axes"] = axis_names_to_json(v.collective_axes);
          json allocs = json::array();
          for (const auto& a : v.allocs) allocs.push_back(alloc_to_json(a));
          out["allocs"] = allocs;
          out["body"] = body_to_json(v.body);
          return out;
        } else if constexpr (std::is_same_v<T, CopyGmemToSmem>) {
          json out{{"op", "copy_gmem_to_smem"}};
          out["src"] = json{{"input", v.src}};
          if (!v.src_index.empty()) out["src"]["index"] = gmem_index_to_json(v.src_index);
          out["dst"] = json{{"alloc", v.dst}};
          if (!v.dst_index.empty() || v.dst_slice)
            out["dst"]["index"] = smem_index_to_json(v.dst_index, v.dst_slot, v.dst_slice);
          transpose_to_json(v.dst_transpose, out["dst"]);
          if (v.barrier) out["barrier"] = barrier_use_to_json(*v.barrier);
          if (v.collective_axes) out["collective_axes"] = axis_names_to_json(*v.collective_axes);
          if (v.leader_tracked == LeaderTracked::kReplicated) out["leader_tracked"] = "replicated";
          if (v.leader_tracked == LeaderTracked::kPartitioned) {
            out["leader_tracked"] = json{{"partitioned", v.partition_axis}};
          }
          if (v.oob_mode) out["oob_mode"] = name_of(*v.oob_mode, kOobModes);
          if (v.predicate) out["predicate"] = cond_to_json(*v.predicate);
          return out;
        } else if constexpr (std::is_same_v<T, CopySmemToGmem>) {
          json out{{"op", "copy_smem_to_gmem"}};
          out["src"] = json{{"alloc", v.src}};
          if (!v.src_index.empty() || v.src_slice)
            out["src"]["index"] = smem_index_to_json(v.src_index, v.src_slot, v.src_slice);
          transpose_to_json(v.src_transpose, out["src"]);
          out["dst"] = json{{"output", v.dst}};
          if (!v.dst_index.empty()) out["dst"]["index"] = gmem_index_to_json(v.dst_index);
          if (v.reduction_op) out["reduction_op"] = name_of(*v.reduction_op, kReductionOps);
          if (v.predicate) out["predicate"] = cond_to_json(*v.predicate);
          if (!v.commit_group) out["commit_group"] = false;
          if (!v.wait) out["wait"] = false;
          if (!v.commit_smem) out["commit_smem"] = false;
          return out;
        } else if constexpr (std::is_same_v<T, VectorStore>) {
          json out{{"op", "vector_store"}};
          if (v.to_smem) {
            out["dst"] = json{{"alloc", v.dst}};
            if (!v.smem_index.empty())
              out["dst"]["index"] = smem_index_to_json(v.smem_index, v.smem_slot);
            if (!v.cluster_axis.empty())
              out["dst"]["cluster"] = cluster_ref_to_json(v.cluster_axis, v.cluster_index);
          } else {
            out["dst"] = json{{"output", v.dst}};
            if (!v.dst_index.empty()) out["dst"]["index"] = gmem_index_to_json(v.dst_index);
          }
          out["value"] = vector_value_to_json(v.value);
          return out;
        } else if constexpr (std::is_same_v<T, CommitSmem>) {
          return json{{"op", "commit_smem"}};
        } else if constexpr (std::is_same_v<T, CommitSmemToGmemGroup>) {
          return json{{"op", "commit_smem_to_gmem_group"}};
        } else if constexpr (std::is_same_v<T, WaitSmemToGmem>) {
          json w{{"op", "wait_smem_to_gmem"}, {"n", v.n}};
          if (v.read_only) w["wait_read_only"] = true;
          return w;
        } else if constexpr (std::is_same_v<T, BarrierArrive>) {
          return json{{"op", "barrier_arrive"}, {"barrier", barrier_use_to_json(v.barrier)}};
        } else if constexpr (std::is_same_v<T, TryClusterCancel>) {
          json out{{"op", "try_cluster_cancel"},
                   {"result", json{{"alloc", v.result}}},
                   {"barrier", barrier_use_to_json(v.barrier)}};
          if (!v.result_index.empty())
            out["result"]["index"] = smem_index_to_json(v.result_index, std::nullopt);
          if (!v.collective_axes.empty()) out["collective_axes"] = v.collective_axes;
          return out;
        } else if constexpr (std::is_same_v<T, BarrierWait>) {
          return json{{"op", v.arrive_first ? "barrier_arrive_and_wait" : "barrier_wait"},
                      {"barrier", barrier_use_to_json(v.barrier)}};
        } else if constexpr (std::is_same_v<T, Loop>) {
          json l{{"op", "loop"}, {"trip_count", v.trip_count}, {"body", body_to_json(v.body)}};
          if (!v.index.empty()) l["index"] = v.index;
          if (v.nd) {
            l = json{{"op", "nd_loop"}, {"grid", v.nd->grid}, {"body", body_to_json(v.body)}};
            l["collective_axes"] = v.nd->axes_tuple ? json(v.nd->axes) : json(v.nd->axes[0]);
            if (!v.nd->tiling.empty()) l["tiling"] = v.nd->tiling;
            if (!v.nd->index_names.empty()) {
              json names = json::array();
              for (const std::string& n : v.nd->index_names)
                names.push_back(n.empty() ? json(nullptr) : json(n));
              l["index"] = names;
            }
            if (!v.index.empty()) l["local_index"] = v.index;
          }
          if (v.carry) {
            l["carry"] = json{{"name", v.carry->name},
                              {"dtype", std::string(dtype_name(v.carry->dtype))},
                              {"shape", v.carry->shape},
                              {"init", vector_value_to_json(v.carry->init)},
                              {"next", vector_value_to_json(v.carry->next)}};
          }
          return l;
        } else if constexpr (std::is_same_v<T, WarpMap>) {
          return json{{"op", "warp_map"}, {"axis", v.axis}, {"body", body_to_json(v.body)}};
        } else {
          return json{
              {"op", "when"}, {"cond", cond_to_json(v.cond)}, {"body", body_to_json(v.body)}};
        }
      },
      op.v);
}

// An explicit `values` fill's numbers: integers for the integer dtypes, the exact double of each
// element of a float dtype (nlohmann writes the shortest text that reads back to it).
json fill_values_to_json(const ArraySpec& a) {
  json out = json::array();
  if (!a.fill.values) return out;
  const DTypeInfo& info = dtype_info(a.dtype);
  for (const std::uint64_t bits : *a.fill.values) {
    if (info.is_float) {
      out.push_back(float_element_value(a.dtype, bits));
    } else if (!info.is_signed) {
      out.push_back(bits);
    } else {
      const int shift = 64 - info.bits;  // sign-extend the low `bits` bits
      out.push_back(static_cast<std::int64_t>(bits << shift) >> shift);
    }
  }
  return out;
}

json body_to_json(const Body& body) {
  json out = json::array();
  for (const auto& op : body) out.push_back(op_to_json(op));
  return out;
}

}  // namespace

}  // namespace collfuzz::case_json

namespace collfuzz {

using nlohmann::json;
using namespace case_json;

json case_to_json(const Case& c) {
  json out;
  out["format"] = c.format;
  out["name"] = c.name;
  if (!c.notes.empty()) out["notes"] = c.notes;
  json mesh = json::object();
  const Mesh& m = c.mesh;
  if (!m.grid.empty()) mesh["grid"] = m.grid;
  if (!m.grid_names.empty()) mesh["grid_names"] = axis_names_to_json(m.grid_names);
  if (!m.cluster.empty()) mesh["cluster"] = m.cluster;
  if (!m.cluster_names.empty()) mesh["cluster_names"] = axis_names_to_json(m.cluster_names);
  if (m.num_threads) mesh["num_threads"] = *m.num_threads;
  if (m.thread_name) mesh["thread_name"] = *m.thread_name;
  out["mesh"] = mesh;
  out["target"] = json{{"arch", name_of(c.target.arch, kArchs)},
                       {"semantics", name_of(c.target.semantics, kSemantics)},
                       {"entry", name_of(c.target.entry, kEntries)},
                       {"profile", name_of(c.target.profile, kProfiles)}};
  if (c.target.jax_pinned) out["target"]["jax"] = to_string(c.target.jax);
  auto arrays = [](const std::vector<ArraySpec>& v, bool with_fill) {
    json arr = json::array();
    for (const auto& a : v) {
      json e{{"name", a.name}, {"shape", a.shape}, {"dtype", std::string(dtype_name(a.dtype))}};
      if (with_fill) {
        e["fill"] = json{{"pattern", name_of(a.fill.pattern, kPatterns)}};
        if (a.fill.pattern == FillPattern::kRandom) e["fill"]["seed"] = a.fill.seed;
        if (a.fill.pattern == FillPattern::kConstant) e["fill"]["value"] = a.fill.value;
        if (a.fill.pattern == FillPattern::kArange) {
          e["fill"]["start"] = a.fill.start;
          e["fill"]["step"] = a.fill.step;
        }
        if (a.fill.pattern == FillPattern::kValues) e["fill"]["values"] = fill_values_to_json(a);
        if (a.fill.pattern == FillPattern::kJaxRandom) {
          e["fill"]["distribution"] = dtype_info(a.dtype).is_float ? "uniform" : "bits";
          e["fill"]["seed"] = a.fill.seed;
          if (!a.fill.split.empty()) {
            json split = json::array();
            for (const auto& [n, i] : a.fill.split) split.push_back(json::array({n, i}));
            e["fill"]["split"] = std::move(split);
          }
        }
      }
      arr.push_back(e);
    }
    return arr;
  };
  out["inputs"] = arrays(c.inputs, true);
  if (!c.outputs.empty()) out["outputs"] = arrays(c.outputs, false);
  if (const RunScoped* scratch = written_as_scratch_shapes(c)) {
    json allocs = json::array();
    for (const auto& a : scratch->allocs) allocs.push_back(alloc_to_json(a));
    out["scratch_shapes"] = allocs;
    out["program"] = body_to_json(scratch->body);
  } else {
    out["program"] = body_to_json(c.program);
  }
  return out;
}

}  // namespace collfuzz
