#include "harness/lowering/tiling_inference.h"

#include <map>
#include <numeric>

#include "harness/lowering/jax_facts.h"
#include "harness/lowering/lowering_error.h"
#include "harness/lowering/rule_ids.h"

namespace collfuzz::lowering {
namespace {

using Multiple = std::vector<std::int64_t>;

// The number whose divisors utils.is_known_divisible proves the start's value a multiple of,
// without pl.multiple_of (0: every number): block, cluster, thread and loop indices are opaque;
// arith.muli needs one operand divisible, arith.addi and arith.remsi both.
std::int64_t known_divisor(const IndexEntry& e) {
  if (!e.dyn_start) return e.whole ? 0 : e.start;
  const DynStart& d = *e.dyn_start;
  std::int64_t g = std::gcd(d.add, d.mul);
  for (const DynTerm& t : d.plus) g = std::gcd(t.mul, g);
  return d.mod > 0 ? std::gcd(d.mod, g) : g;
}

// layout_inference.dynamic_gcd(size, start): over the prime factors of `size` in ascending
// order, each kept when the product so far times it is known to divide the start, which
// pl.multiple_of(start, m) (mgpu.dialect.assume_multiple) proves for the divisors of m too.
std::int64_t dynamic_gcd(std::int64_t size, const IndexEntry& e) {
  const std::int64_t g = known_divisor(e);
  const std::int64_t assumed = e.dyn_start ? e.dyn_start->multiple_of : 0;
  if (assumed == 0) return std::gcd(size, g);
  const auto known = [&](std::int64_t d) { return assumed % d == 0 || g % d == 0; };
  std::int64_t running = 1;
  std::int64_t n = size;
  for (std::int64_t f = 2; f <= n / f; ++f) {
    for (; n % f == 0; n /= f) {
      if (known(running * f)) running *= f;
    }
  }
  if (n > 1 && known(running * n)) running *= n;  // the largest prime factor, last
  return running;
}

// The async op's Divides: per GMEM dim kept, dynamic_gcd(slice length, index).
Multiple copy_multiple(const ArraySpec& gmem, const std::vector<IndexEntry>& index) {
  Multiple m;
  for (std::size_t i = 0; i < gmem.shape.size(); ++i) {
    if (i < index.size() && index[i].kind == IndexEntry::Kind::kAt) continue;  // length -1
    if (i >= index.size() || index[i].whole) {
      m.push_back(gmem.shape[i]);
    } else {
      m.push_back(dynamic_gcd(index[i].size, index[i]));
    }
  }
  return m;
}

// memref.subview's Divides on its source: per dim gcd(size, source dim, offset).
Multiple subview_multiple(const Alloc& a, std::size_t leading, const IndexEntry* slice) {
  Multiple m(a.shape.begin(), a.shape.end());
  for (std::size_t i = 0; i < leading && i < m.size(); ++i) m[i] = 1;
  if (slice && leading < m.size()) {
    m[leading] = dynamic_gcd(std::gcd(slice->size, m[leading]), *slice);
  }
  return m;
}

// constraints.merge_divides_constraints: the shorter length, trailing dims, gcd.
void merge(std::optional<Multiple>& into, const Multiple& m) {
  if (!into) {
    into = m;
    return;
  }
  const std::size_t n = std::min(into->size(), m.size());
  Multiple out(into->end() - static_cast<std::ptrdiff_t>(n), into->end());
  for (std::size_t k = 0; k < n; ++k) out[k] = std::gcd(out[k], m[m.size() - n + k]);
  into = std::move(out);
}

struct AsyncOp {
  const Op* op;
  std::size_t gmem_rank;
  Multiple own;
};

struct Variable {
  const Alloc* alloc = nullptr;
  bool sliced = false;
  const Op* first = nullptr;
  std::optional<Multiple> divides = std::nullopt;
  std::vector<AsyncOp> ops = {};
};

// Dims of the tiling, counted from the minor end, that do not divide; none when the tiling has
// more dims than the constraint (which then fails as a whole).
bool fails(const Variable& v, std::vector<std::size_t>* culprits) {
  const Shape& tiling = v.alloc->transforms.tiling;
  const Multiple& m = *v.divides;
  if (tiling.size() > m.size()) return true;
  bool failed = false;
  for (std::size_t k = 1; k <= tiling.size(); ++k) {
    if (m[m.size() - k] % tiling[tiling.size() - k] == 0) continue;
    failed = true;
    if (culprits) culprits->push_back(k);
  }
  return failed;
}

}  // namespace

void infer_copy_tilings(const Case& c, const KernelIr& ir, const IrVectorStore* vector) {
  // A transposed, tiled ref: UntilingTransform.commute_transpose needs the permutation to end in
  // the tiled dims (any order); otherwise no transforms are found for the ref.
  for (const IrOp& op : ir.ops) {
    const Alloc* a = nullptr;
    const std::optional<SmemTranspose>* t = nullptr;
    const Op* at = nullptr;
    if (op.kind == IrKind::kCopy) {
      const IrCopy& ic = ir.copies[static_cast<std::size_t>(op.index)];
      a = ic.smem;
      t = &ic.copy->dst_transpose;
      at = ic.op;
    } else if (op.kind == IrKind::kStore) {
      const IrStore& is = ir.stores[static_cast<std::size_t>(op.index)];
      a = is.smem;
      t = &is.copy->src_transpose;
      at = is.op;
    }
    if (!a || !*t || a->transforms.tiling.empty()) continue;
    const std::vector<std::int64_t>& p = (*t)->permutation;
    const std::size_t nt = a->transforms.tiling.size();
    if (nt > p.size()) continue;
    std::vector<bool> tiled(p.size(), false);
    for (std::size_t k = p.size() - nt; k < p.size(); ++k)
      tiled[static_cast<std::size_t>(p[k])] = true;
    bool ends_in_tiled = true;
    for (std::size_t d = p.size() - nt; d < p.size(); ++d)
      ends_in_tiled = ends_in_tiled && tiled[d];
    if (!ends_in_tiled) {
      raise(Stage::kDialect, "ValueError", kLayoutInferenceMessage,
            rule_id::kCopyTransposeTiledDims, at->path);
    }
  }
  std::vector<Variable> vars;
  std::map<const Alloc*, std::size_t> alloc_var;
  const auto add = [&](const Op& op, const Alloc& a, std::size_t leading, const IndexEntry* slice,
                       const ArraySpec& gmem, const std::vector<IndexEntry>& index) {
    if (a.transforms.tiling.empty()) return;
    if (!alloc_var.count(&a)) {
      alloc_var.emplace(&a, vars.size());
      vars.push_back(Variable{&a});
    }
    std::size_t at = alloc_var.at(&a);
    if (leading > 0 || slice) {
      Variable& source = vars[at];
      if (!source.first) source.first = &op;
      merge(source.divides, subview_multiple(a, leading, slice));
      at = vars.size();
      vars.push_back(Variable{&a, true});
    }
    Variable& v = vars[at];
    if (!v.first) v.first = &op;
    AsyncOp ao{&op, gmem.shape.size(), copy_multiple(gmem, index)};
    merge(v.divides, ao.own);
    v.ops.push_back(std::move(ao));
  };
  for (const IrOp& op : ir.ops) {
    if (op.kind == IrKind::kCopy) {
      const IrCopy& ic = ir.copies[static_cast<std::size_t>(op.index)];
      const CopyGmemToSmem& cp = *ic.copy;
      add(*ic.op, *ic.smem, cp.dst_index.size(), cp.dst_slice ? &*cp.dst_slice : nullptr, *ic.src,
          cp.src_index);
    } else if (op.kind == IrKind::kStore) {
      const IrStore& is = ir.stores[static_cast<std::size_t>(op.index)];
      const CopySmemToGmem& st = *is.copy;
      add(*is.op, *is.smem, st.src_index.size(), st.src_slice ? &*st.src_slice : nullptr, *is.dst,
          st.dst_index);
    }
  }
  const bool sliced_culprits = !jax_facts(c.target.jax).sliced_ref_no_culprit;
  for (const Variable& v : vars) {
    std::vector<std::size_t> culprits;
    if (!fails(v, &culprits) || culprits.empty() || (v.sliced && !sliced_culprits)) continue;
    for (const AsyncOp& ao : v.ops) {
      for (const std::size_t k : culprits) {
        if (ao.gmem_rank != v.divides->size()) {
          raise(Stage::kDialect, "AssertionError", "", rule_id::kCopyDivisibilityAssert,
                ao.op->path);
        }
        if (ao.own[ao.own.size() - k] == 1) {
          raise(Stage::kDialect, "ValueError",
                "Failed to infer a possible set of layouts. You need to prove the divisibility "
                "of index " +
                    std::to_string(ao.gmem_rank - k) + " using pl.multiple_of.",
                rule_id::kCopyProveDivisibility, ao.op->path);
        }
      }
    }
  }
  if (vector) {
    const bool count = (vector->own_layout && vector->elements % 128 != 0) || vector->iota_unlaid ||
                       vector->wgmma_unlaid;
    raise(Stage::kDialect, "ValueError", kLayoutInferenceMessage,
          count ? rule_id::kLayoutInference : rule_id::kDialectBroadcastLayout, vector->op->path);
  }
  for (const Variable& v : vars) {
    if (fails(v, nullptr)) {
      raise(Stage::kDialect, "ValueError", kLayoutInferenceMessage, rule_id::kCopyTilingDivides,
            v.first->path);
    }
  }
}

}  // namespace collfuzz::lowering
