#include "harness/lowering/async_copy.h"

#include <algorithm>
#include <numeric>

#include "harness/core/pyrepr.h"
#include "harness/lowering/mutants.h"
#include "harness/lowering/rule_ids.h"

namespace collfuzz::lowering {
namespace {

std::vector<std::int64_t> contiguous_strides(const Shape& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

Shape boxes(const std::vector<GmemViewDim>& view) {
  Shape s;
  for (const auto& d : view) s.push_back(d.box);
  return s;
}

// WGStridedFragLayout.from_shaped_type(smem): the vector width of a cp.async transfer, or 0 where
// JAX gets None.
std::int64_t strided_vector_size(std::int64_t size, int bits) {
  if (size % kWarpgroupLanes != 0) return 0;
  std::int64_t vec = std::min<std::int64_t>(64 / bits, size / kWarpgroupLanes);
  while (vec > 0 && size % (vec * kWarpgroupLanes) != 0) vec /= 2;
  if (vec == 0 || (vec * bits) % 8 != 0) return 0;
  return vec;
}

// A view dim that is array dim `dim` itself.
GmemViewDim view_dim(int dim, std::int64_t extent, std::int64_t stride, std::int64_t box) {
  GmemViewDim v;
  v.terms[0] = GmemViewDim::Term{dim, 1};
  v.num_terms = 1;
  v.extent = extent;
  v.stride = stride;
  v.box = box;
  return v;
}

}  // namespace

std::vector<std::int64_t> slice_base(
    const ArraySpec& gmem, const std::vector<IndexEntry>* index,
    const std::function<std::int64_t(const std::string&)>& axis_index,
    std::int64_t loop_iteration) {
  std::vector<std::int64_t> base(gmem.shape.size(), 0);
  if (!index) return base;
  for (std::size_t i = 0; i < index->size() && i < base.size(); ++i) {
    base[i] = index_start((*index)[i], axis_index, loop_iteration);
  }
  return base;
}

AsyncCopyShape prepare_async_copy(const AsyncCopyRequest& req, const ClusterGeometry& geometry) {
  const ArraySpec& g = *req.gmem;
  const int bits = dtype_bits(g.dtype);
  const std::size_t rank = g.shape.size();
  const auto fail = [&](const char* exception, std::string message, std::string_view rule) {
    raise(req.stage, exception, std::move(message), rule, req.op);
  };

  AsyncCopyShape out;
  out.elem_bits = bits;
  out.collective = req.collective;
  out.collective_size = geometry.collective_size(req.collective);
  out.array_elements = element_count(g.shape);

  // utils.parse_indices: squeezed dims keep a size of 1.
  std::vector<bool> squeezed(rank, false);
  Shape slice = g.shape;
  if (req.index) {
    for (std::size_t i = 0; i < req.index->size() && i < rank; ++i) {
      const IndexEntry& e = (*req.index)[i];
      squeezed[i] = e.kind == IndexEntry::Kind::kAt;
      slice[i] = squeezed[i] ? 1 : e.size;
    }
  }

  // async_copy checks the reduction first (_is_tma_reduction_op_supported): an op per MLIR
  // element type, signless (int32 and uint32 are both i32).
  if (req.reduction_op) {
    const std::string mlir(dtype_info(g.dtype).mlir);
    bool supported = false;
    switch (*req.reduction_op) {
      case ReductionOp::kAdd:
        supported =
            mlir == "f16" || mlir == "f32" || mlir == "bf16" || mlir == "i32" || mlir == "i64";
        break;
      case ReductionOp::kMin:
      case ReductionOp::kMax:
        supported = mlir == "f16" || mlir == "bf16";
        break;
      case ReductionOp::kInc:
      case ReductionOp::kDec:
        supported = mlir == "i32";
        break;
      default:
        supported = mlir == "i32" || mlir == "i64";
        break;
    }
    if (!supported) {
      fail("ValueError",
           "Reduction op " + std::string(to_string(*req.reduction_op)) +
               " not supported by the TMA implementation for element type " + mlir,
           rule_id::kTmaReduction);
    }
  }

  // _prepare_async_copy: collective and partitioned loads.
  if (!req.collective.empty() && req.cp_async) {
    fail("ValueError", "Only the TMA implementation supports collective copies", "");
  }
  if (req.jax.leader_not_collective_first && req.leader_tracked != LeaderTracked::kNone &&
      req.collective.empty()) {
    fail("ValueError", "Only collective loads can be leader-tracked",
         rule_id::kLeaderNotCollective);
  }
  if (req.leader_tracked == LeaderTracked::kPartitioned &&
      (!req.jax.leader_not_collective_first || out.collective_size > 1)) {
    // np.where(np.cumsum(~np.array(is_squeezed)) == axis + 1)[0][0]
    int dim = -1;
    std::int64_t seen = 0;
    for (std::size_t i = 0; i < rank && dim < 0; ++i) {
      if (!squeezed[i] && ++seen == req.partition_axis + 1) dim = static_cast<int>(i);
    }
    if (dim < 0)
      fail("IndexError", "index 0 is out of bounds for axis 0 with size 0",
           rule_id::kPartitionedAxis);
    if (req.collective.empty())
      fail("ValueError", "Only collective loads can be partitioned",
           rule_id::kPartitionedNotCollective);
    const std::int64_t n = out.collective_size;
    if (n > 1) {
      // 0.11.2 checks the whole cluster here. 0.12.0.1 checks instead that the collective is
      // CUDA x of size 2 ("Leader-tracked loads only supported along the x dimension ..."),
      // which Pallas's copy.leader_tracked.last_axis_size_2 has ensured before: a 2x2 cluster
      // partitions along x in pairs.
      if (!req.jax.leader_on_last_axis_size_2 && geometry.num_ctas() != 2)
        fail("NotImplementedError", "Partitioned loads only supported for clusters of size 2", "");
      const auto d = static_cast<std::size_t>(dim);
      if (slice[d] % n != 0) {
        fail("ValueError",
             "The collective size (" + std::to_string(n) +
                 ") must divide the slice shape along the partitioned dimension, but it has size " +
                 std::to_string(slice[d]),
             rule_id::kPartitionedDivide);
      }
      slice[d] /= n;
      out.partition_dim = dim;
      out.partition_size = slice[d];
    }
  }

  // Squeezed dims move to the front (TMA only): TransposeTransform((*squeezed, *sliced)).
  std::vector<int> order;
  const bool any_squeezed = std::find(squeezed.begin(), squeezed.end(), true) != squeezed.end();
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < rank; ++i) {
      const bool take = (req.cp_async || !any_squeezed) ? pass == 0 : (squeezed[i] == (pass == 0));
      if (take) order.push_back(static_cast<int>(i));
    }
  }
  const auto strides = contiguous_strides(g.shape);
  std::size_t num_squeezed = 0;
  for (bool s : squeezed) num_squeezed += s ? 1 : 0;
  // A transposed SMEM ref: its dim transpose[v] takes the slice's kept dim v.
  if (!req.transpose.empty() && !req.cp_async &&
      order.size() == num_squeezed + req.transpose.size()) {
    const std::vector<int> kept(order.begin() + static_cast<std::ptrdiff_t>(num_squeezed),
                                order.end());
    const bool inverted = !mutant_active(Mutant::kTransposeNotInverted);
    for (std::size_t v = 0; v < kept.size(); ++v) {
      const auto p = static_cast<std::size_t>(req.transpose[v]);
      if (inverted) {
        order[num_squeezed + p] = kept[v];
      } else {
        order[num_squeezed + v] = kept[p];
      }
    }
  }

  Shape transformed_slice;
  for (int d : order) transformed_slice.push_back(slice[static_cast<std::size_t>(d)]);
  // async_copy: `assert all(d == 1 for d in slice_shape[:len(squeezed_dims)])` (the squeezed dims
  // are in front only when they were moved there, i.e. not for cp.async).
  for (std::size_t k = 0; k < num_squeezed && k < rank; ++k) {
    if (transformed_slice[k] != 1) fail("AssertionError", "", rule_id::kSqueezedAssert);
  }
  // _prepare_async_copy's TileTransform.transform_shape (TMA only): after a PARTITIONED split the
  // tiled dims of the slice can be a part of a tile.
  const Shape& slice_tiling = req.smem_transforms.tiling;
  if (!req.cp_async && !slice_tiling.empty() && transformed_slice.size() >= slice_tiling.size()) {
    const std::size_t first = transformed_slice.size() - slice_tiling.size();
    for (std::size_t j = 0; j < slice_tiling.size(); ++j) {
      if (transformed_slice[first + j] % slice_tiling[j] == 0) continue;
      fail("ValueError",
           "Expected GMEM slice shape " + py::tuple_of_ints(transformed_slice) +
               " suffix to be a multiple of tiling " + py::tuple_of_ints(slice_tiling) +
               ".\nIf you're using padded async copies, your slice might need to extend out of "
               "bounds of the GMEM buffer (OOB accesses will be skipped).",
           rule_id::kSliceTiling);
    }
  }
  const Shape tail(
      transformed_slice.begin() + static_cast<std::ptrdiff_t>(std::min(num_squeezed, rank)),
      transformed_slice.end());
  if (tail != req.smem_shape) {
    // Both as JAX holds them: tiled (TileTransform.transform_shape) when the SMEM ref is.
    const auto tiled = [&](const Shape& shape) {
      const Shape& t = req.smem_transforms.tiling;
      if (t.empty() || t.size() > shape.size()) return shape;
      const std::size_t lead = shape.size() - t.size();
      Shape r(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(lead));
      for (std::size_t j = 0; j < t.size(); ++j) r.push_back(shape[lead + j] / t[j]);
      r.insert(r.end(), t.begin(), t.end());
      return r;
    };
    fail("ValueError",
         "Expected the SMEM reference to have the same shape as the transformed slice: " +
             py::tuple_of_ints(tiled(req.smem_shape)) + " != " + py::tuple_of_ints(tiled(tail)),
         rule_id::kSmemShape);
  }
  for (std::size_t i = 0; i < rank; ++i) {
    out.logical_size.push_back(squeezed[i] ? 0 : slice[i]);
  }

  if (req.cp_async) {
    // async_copy, CP_ASYNC branch.
    if (num_squeezed > 0) {
      std::int64_t max_squeezed = -1;
      std::int64_t min_sliced = -1;
      for (std::size_t i = 0; i < rank; ++i) {
        if (squeezed[i]) {
          max_squeezed = static_cast<std::int64_t>(i);
        } else if (min_sliced < 0) {
          min_sliced = static_cast<std::int64_t>(i);
        }
      }
      if (min_sliced >= 0 && max_squeezed > min_sliced) {
        fail("NotImplementedError",
             "Untiled CP_ASYNC copy expects the GMEM slice to be contiguous in memory, so it only "
             "supports "
             "squeezing leading dimensions",
             rule_id::kCpAsyncSqueeze);
      }
    }
    const std::int64_t size = element_count(req.smem_shape);
    const std::int64_t vec = strided_vector_size(size, bits);
    if (vec == 0)
      fail("ValueError", "CP_ASYNC requires the number of elements to be a multiple of 128",
           rule_id::kCpAsyncElements);
    if (vec * bits < 32)
      fail("ValueError", "CP_ASYNC requires at least 4 bytes per transfer", rule_id::kCpAsyncBytes);
    out.path = LoadPath::kCpAsync;
    for (std::size_t i = 0; i < rank; ++i) {
      out.view.push_back(view_dim(static_cast<int>(i), g.shape[i], strides[i], slice[i]));
    }
    out.transfer_bytes = size * bits / 8;
    return out;
  }

  // _prepare_tma.
  for (std::size_t i = 0; i + 1 < rank && !req.jax.strides_checked_after_split; ++i) {
    if (strides[i] * bits % 128 != 0) {
      fail("ValueError",
           "async_copy requires all GMEM strides except the last one to be a multiple of 16 bytes",
           rule_id::kGmemStrides);
    }
  }
  // TileTransform (the SMEM ref's tiling) over the last dims: tile counts, then places within a
  // tile. transform_gmem_shape clamps a tile to a smaller GMEM dim and refuses a larger one that
  // it does not divide, last dim first.
  const Shape& tiling = req.smem_transforms.tiling;
  const std::size_t ntile = std::min(tiling.size(), order.size());
  const std::size_t lead = order.size() - ntile;
  for (std::size_t j = ntile; j-- > 0;) {
    const std::int64_t size = g.shape[static_cast<std::size_t>(order[lead + j])];
    if (size > tiling[j] && size % tiling[j] != 0) {
      fail("ValueError",
           "When no rounding mode is specified, dimension " + std::to_string(lead + j) +
               " must have size smaller or a multiple of its tiling " + std::to_string(tiling[j]) +
               ", but got " + std::to_string(size),
           rule_id::kGmemTiling);
    }
  }
  struct Candidate {
    GmemViewDim view;
    bool squeezed = false;
  };
  std::vector<Candidate> candidates;
  for (std::size_t k = 0; k < lead; ++k) {
    const auto d = static_cast<std::size_t>(order[k]);
    candidates.push_back(
        {view_dim(order[k], g.shape[d], strides[d], transformed_slice[k]), k < num_squeezed});
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t j = 0; j < ntile; ++j) {
      const auto d = static_cast<std::size_t>(order[lead + j]);
      const std::int64_t tg = std::min(tiling[j], g.shape[d]);
      GmemViewDim v = pass == 0 ? view_dim(order[lead + j], g.shape[d] / tg, strides[d] * tg,
                                           transformed_slice[lead + j] / tiling[j])
                                : view_dim(order[lead + j], tg, strides[d], tiling[j]);
      v.terms[0].tile = tg;
      v.terms[0].in_tile = pass == 1;
      candidates.push_back({v, lead + j < num_squeezed});
    }
  }
  // DropUnitDimsTransform: dims of size 1 in both the (transformed) GMEM ref and the slice.
  std::size_t squeezed_left = 0;
  for (const Candidate& cd : candidates) {
    if (cd.view.extent == 1 && cd.view.box == 1) continue;
    out.view.push_back(cd.view);
    if (cd.squeezed) ++squeezed_left;
  }
  out.swizzle = req.smem_transforms.swizzle;
  if (out.view.size() > 5 && squeezed_left > 0) {
    // CollapseLeadingIndicesTransform over the squeezed dims' strides.
    std::int64_t common = 0;
    for (std::size_t k = 0; k < squeezed_left; ++k) common = std::gcd(common, out.view[k].stride);
    GmemViewDim collapsed;
    std::int64_t max_bound = 0;
    for (std::size_t k = 0; k < squeezed_left; ++k) {
      const GmemViewDim& v = out.view[k];
      collapsed.terms[collapsed.num_terms++] = GmemViewDim::Term{v.terms[0].dim, v.stride / common};
      max_bound += (v.extent - 1) * v.stride / common;
    }
    collapsed.extent = max_bound + 1;
    collapsed.stride = common;
    collapsed.box = 1;
    out.view.erase(out.view.begin(), out.view.begin() + static_cast<std::ptrdiff_t>(squeezed_left));
    out.view.insert(out.view.begin(), collapsed);
    squeezed_left = 1;
  }
  if (out.view.size() > 5)
    fail("ValueError", "Async copies only support striding up to 5 dimensions", rule_id::kRank5);

  // The multicast split (not for PARTITIONED copies, which split before the transforms).
  const std::int64_t n = out.collective_size;
  if (n > 1 && req.leader_tracked != LeaderTracked::kPartitioned) {
    Shape pre_split = boxes(out.view);
    const auto smem_strides = contiguous_strides(pre_split);
    std::int64_t rem = n;
    std::int64_t divisor = 1;
    std::vector<std::size_t> dims(out.view.size());
    std::iota(dims.begin(), dims.end(), std::size_t{0});
    // A swizzled minor dim is never split.
    if (out.swizzle != 0 && !dims.empty()) dims.pop_back();
    if (mutant_active(Mutant::kChunkSplitWrongDim)) std::reverse(dims.begin(), dims.end());
    for (std::size_t k : dims) {
      const std::int64_t size = out.view[k].box;
      if (size % rem == 0) {
        out.view[k].box = size / rem;
        out.splits.push_back(
            ChunkSplit{static_cast<int>(k), divisor, 0, size / rem, smem_strides[k]});
        rem = 1;
        break;
      }
      if (rem % size == 0) {
        if (size > 1) {
          out.view[k].box = 1;
          out.splits.push_back(ChunkSplit{static_cast<int>(k), divisor, size, 1, smem_strides[k]});
          divisor *= size;
          rem /= size;
        }
        continue;
      }
      break;
    }
    if (rem > 1) {
      fail("ValueError",
           "None of the leading dimensions in the transformed slice shape " +
               py::list_of_ints(boxes(out.view)) + " is divisible by the collective size " +
               std::to_string(n),
           rule_id::kMulticastSplit);
    }
  }
  // 0.12.0.1: _check_tma_strides_and_swizzle, after the split; a rank-0 slice's minor dim is 1.
  for (std::size_t i = 0; i + 1 < rank && req.jax.strides_checked_after_split; ++i) {
    if (strides[i] * bits % 128 != 0) {
      fail("ValueError",
           "Async copies require all GMEM strides except the last one to be a multiple of 16 bytes",
           rule_id::kGmemStridesAfterSplit);
    }
  }
  if (out.view.empty() && !req.jax.strides_checked_after_split)
    fail("IndexError", "list index out of range", rule_id::kRank0);
  const std::int64_t minor_bits = (out.view.empty() ? 1 : out.view.back().box) * bits;
  if (minor_bits % 128 != 0) {
    fail("ValueError",
         "Async copies require the number of bits copied along the last dimension to be divisible "
         "by 128, but got " +
             std::to_string(minor_bits),
         rule_id::kMinorBits);
  }

  const Shape box = boxes(out.view);
  out.transfer_bytes = element_count(box) * bits / 8;
  // check_contiguous_slice over the transformed GMEM ref.
  bool contiguous = out.view.back().stride == 1;
  std::int64_t expected = 1;
  for (std::size_t k = out.view.size(); k-- > 0 && contiguous;) {
    if (out.view[k].box != 1 && out.view[k].stride != expected) contiguous = false;
    expected *= out.view[k].box;
  }
  const bool bulk = contiguous && out.swizzle == 0 && n == 1 && req.oob_mode != OobMode::kZeros &&
                    req.leader_tracked == LeaderTracked::kNone && !req.reduction_op;
  if (bulk) {
    out.path = LoadPath::kBulk;
    out.clamp_to_array = req.oob_mode == OobMode::kUndefined;
    return out;
  }
  out.path = LoadPath::kTensor;
  if (*std::max_element(box.begin(), box.end()) > 256) {
    fail("ValueError",
         "Async copies only support copying <=256 elements along each dimension, got " +
             py::tuple_of_ints(box),
         rule_id::kBox256);
  }
  // _get_tma_desc maps the GMEM element type to a TMA data type (_tma_dma_type): every integer
  // width and f16, bf16, f32 and the 8-bit floats have one; f64 has none.
  if (g.dtype == DType::kFloat64) {
    fail("ValueError", "unsupported TMA dtype " + std::string(dtype_info(g.dtype).mlir),
         rule_id::kTmaDtype);
  }
  if (out.view.back().stride != 1) {
    out.descriptor_error =
        "TMA requires the stride of the last dimension after transforming the GMEM reference to be "
        "1, "
        "but it is " +
        std::to_string(out.view.back().stride) + ".";
  }
  return out;
}

void instantiate_transfer(const AsyncCopyShape& shape, const ArraySpec& gmem,
                          std::vector<std::int64_t> base, std::int64_t group_index, LoadOp& load,
                          std::int64_t& smem_element_offset) {
  if (shape.partition_dim >= 0) {
    const std::int64_t half =
        mutant_active(Mutant::kPartitionHalvesSwapped) ? 1 - group_index : group_index;
    base[static_cast<std::size_t>(shape.partition_dim)] += half * shape.partition_size;
  }
  load.path = shape.path;
  load.elem_bits = shape.elem_bits;
  // The view's coordinates: at most 5 dims on the TMA paths, up to the array's rank for cp.async.
  const std::size_t rank = shape.view.size();
  std::int64_t coords[kMaxArrayRank] = {};
  for (std::size_t k = 0; k < rank; ++k) {
    const GmemViewDim& v = shape.view[k];
    for (int k2 = 0; k2 < v.num_terms; ++k2) {
      const GmemViewDim::Term& term = v.terms[k2];
      std::int64_t b = base[static_cast<std::size_t>(term.dim)];
      if (term.tile > 0) {
        // TileTransform.transform_index: unsigned division and remainder of the base index.
        const std::int64_t q = b >= 0 ? b / term.tile : -((-b + term.tile - 1) / term.tile);
        b = term.in_tile ? b - q * term.tile : q;
      }
      coords[k] += b * term.mult;
    }
  }
  smem_element_offset = 0;
  for (const ChunkSplit& s : shape.splits) {
    std::int64_t part = group_index / s.divisor;
    if (s.modulus) part %= s.modulus;
    const std::int64_t offset = part * s.chunk;
    coords[s.dim] += offset;
    smem_element_offset += offset * s.smem_stride;
  }
  load.elements = 1;
  std::int64_t linear = 0;
  for (std::size_t k = 0; k < rank; ++k) {
    load.elements *= shape.view[k].box;
    linear += coords[k] * shape.view[k].stride;
  }
  TensorBox& t = load.tensor;
  if (rank <= static_cast<std::size_t>(kMaxTmaRank)) {
    t.rank = static_cast<std::int32_t>(rank);
    for (std::size_t k = 0; k < rank; ++k) {
      t.dims[k] = shape.view[k].extent;
      t.strides[k] = shape.view[k].stride;
      t.box[k] = shape.view[k].box;
      t.coords[k] = coords[k];
    }
  }
  load.complete_bytes = load.elements * shape.elem_bits / 8;
  load.linear_offset = linear;
  load.linear_elements = load.elements;
  if (shape.clamp_to_array) {
    // min(transfer, elements_to_bytes(total - minui(offset, total))): a negative offset compares as
    // a huge unsigned value, so nothing is moved.
    const std::int64_t total = shape.array_elements;
    const std::int64_t valid = linear < 0 ? total : std::min(linear, total);
    const std::int64_t remaining = total - valid;
    const int bits = shape.elem_bits;
    const std::int64_t remaining_bytes =
        bits >= 8 ? remaining * (bits / 8) : remaining / (8 / bits);
    const std::int64_t clamped = std::min(load.complete_bytes, remaining_bytes);
    load.linear_elements = clamped * 8 / bits;
    load.complete_bytes = clamped;
  }
  ArraySlice& l = load.logical;
  l.rank = static_cast<std::int32_t>(gmem.shape.size());
  for (std::size_t i = 0; i < gmem.shape.size(); ++i) {
    l.dims[i] = gmem.shape[i];
    l.start[i] = base[i];
    l.size[i] = shape.logical_size[i];
  }
}

}  // namespace collfuzz::lowering
