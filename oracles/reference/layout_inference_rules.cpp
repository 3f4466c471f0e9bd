// Rule family: Warpgroup's layout inference (jax/experimental/mosaic/gpu/layout_inference.py),
// run over the whole module after the Pallas lowering rules and before the dialect lowering.
//
// A TMA copy between GMEM and a tiled SMEM ref constrains the ref's tiling to divide, dim by dim
// from the minor end, what the layout inference can prove of the GMEM slice: per dim,
// dynamic_gcd(size, start), the largest divisor of the size that utils.is_known_divisible shows
// the start to be a multiple of (cs.Divides). A slice of the SMEM ref (memref.subview) adds the
// same constraint on the allocation, over its dims. When no tiling divides, the system is
// unsatisfiable and _check_unsatisfiable_divisibility_constraints looks for a culprit: for each
// copy of the failing ref in order, each failing dim from the minor end, an index whose gcd is 1
// ("You need to prove the divisibility of index i using pl.multiple_of."); an index list longer
// than the proven dims (a squeezed GMEM dim) trips its assertion first. Else the generic message.
// JAX 0.12.0.1 finds no candidate tiling for a copy through a slice of the SMEM ref, and so only
// the generic message there.
#include <algorithm>
#include <iterator>
#include <numeric>

#include "harness/core/outcome_json.h"
#include "harness/core/pyrepr.h"
#include "oracles/reference/program_walk.h"
#include "oracles/reference/rule_families.h"

namespace collfuzz::ref {
namespace {

// utils.is_known_divisible(start, k): axis and loop indices prove nothing; a product is proven
// by either factor, a sum and a remainder by both operands; pl.multiple_of (assume_multiple) by
// its multiple or its operand.
bool proves(const DynStart& d, std::int64_t k) {
  if (d.multiple_of > 0 && d.multiple_of % k == 0) return true;
  bool all = d.mul % k == 0 && d.add % k == 0 && (d.mod == 0 || d.mod % k == 0);
  for (const DynTerm& t : d.plus) all = all && t.mul % k == 0;
  return all;
}

// dynamic_gcd(size, start): a constant start's gcd with the size; a dynamic one's, the prime
// factors of the size (smallest first) kept while the start is proven a multiple of their
// product.
std::int64_t slice_multiple(std::int64_t size, const IndexEntry& e) {
  if (e.whole) return size;
  if (!e.dyn_start) return std::gcd(size, e.start);
  std::int64_t proven = 1;
  std::int64_t rest = size;
  for (std::int64_t p = 2; p <= rest / p; ++p) {  // trial division; what is left is prime
    while (rest % p == 0) {
      rest /= p;
      if (proves(*e.dyn_start, proven * p)) proven *= p;
    }
  }
  if (rest > 1 && proves(*e.dyn_start, proven * rest)) proven *= rest;
  return proven;
}

// A copy's GMEM side: the index count (squeezed dims included) and the multiples of its
// unsqueezed dims.
struct GmemSlice {
  std::size_t indices = 0;
  std::vector<std::int64_t> multiple;
};

GmemSlice gmem_slice(const ArraySpec& array, const std::vector<IndexEntry>& index) {
  GmemSlice out;
  out.indices = array.shape.size();
  for (std::size_t i = 0; i < array.shape.size(); ++i) {
    if (i >= index.size()) {
      out.multiple.push_back(array.shape[i]);
    } else if (index[i].kind == IndexEntry::Kind::kSlice) {
      out.multiple.push_back(
          slice_multiple(index[i].whole ? array.shape[i] : index[i].size, index[i]));
    }
  }
  return out;
}

// `ref.at[...]` of an SMEM allocation: memref.subview's constraint on the allocation, per dim
// gcd(size, dim, offset) (integer indices have size 1).
std::vector<std::int64_t> subview_multiple(const Alloc& a, std::size_t leading,
                                           const std::optional<IndexEntry>& slice) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < a.shape.size(); ++i) {
    if (i < leading) {
      out.push_back(1);
    } else if (i == leading && slice) {
      out.push_back(slice_multiple(std::gcd(slice->size, a.shape[i]), *slice));
    } else {
      out.push_back(a.shape[i]);
    }
  }
  return out;
}

struct Transfer {
  const Op* op = nullptr;
  GmemSlice gmem;
};

// One variable of the constraint system: an allocation, or the slice of it one copy reads or
// writes. Its Divides constraints merge (constraints.merge_divides_constraints).
struct RefVar {
  const Alloc* alloc = nullptr;
  bool subview = false;
  const Op* first = nullptr;
  std::optional<std::vector<std::int64_t>> multiple = std::nullopt;
  std::vector<Transfer> transfers = {};
  // The tiling's dims (negative, from the minor end) that do not divide the merged multiple;
  // nullopt when the tiling has more dims than the multiple. Set once every copy is in.
  std::optional<std::vector<std::size_t>> culprits = std::nullopt;

  void divides(const Op& op, const std::vector<std::int64_t>& m) {
    if (!first) first = &op;
    if (!multiple) {
      multiple = m;
      return;
    }
    const std::size_t n = std::min(multiple->size(), m.size());
    std::vector<std::int64_t> merged(n);
    for (std::size_t j = 0; j < n; ++j)
      merged[n - 1 - j] = std::gcd((*multiple)[multiple->size() - 1 - j], m[m.size() - 1 - j]);
    multiple = std::move(merged);
  }
  void find_culprits() {
    const Shape& t = alloc->transforms.tiling;
    if (t.size() > multiple->size()) return;
    culprits.emplace();
    for (std::size_t j = 0; j < t.size(); ++j)
      if ((*multiple)[multiple->size() - 1 - j] % t[t.size() - 1 - j] != 0) culprits->push_back(j);
  }
  bool fails() const { return !culprits || !culprits->empty(); }
};

std::vector<RefVar> tiled_ref_vars(const Checker& ck) {
  std::vector<RefVar> vars;
  std::map<const Alloc*, std::size_t> whole;
  const auto var_of = [&](const Op& op, const Alloc& a, std::size_t leading,
                          const std::optional<IndexEntry>& slice) -> RefVar& {
    if (whole.find(&a) == whole.end()) {
      whole[&a] = vars.size();
      vars.push_back(RefVar{&a});
    }
    if (leading == 0 && !slice) return vars[whole[&a]];
    vars[whole[&a]].divides(op, subview_multiple(a, leading, slice));
    vars.push_back(RefVar{&a, true});
    return vars.back();
  };
  walk_program(ck.c.program, [&](const Op& op, const Scope& scope) {
    const std::string* smem = nullptr;
    std::size_t leading = 0;
    const std::optional<IndexEntry>* slice = nullptr;
    const ArraySpec* array = nullptr;
    const std::vector<IndexEntry>* index = nullptr;
    if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      smem = &cp->dst;
      leading = cp->dst_index.size();
      slice = &cp->dst_slice;
      array = find_array(ck.c.inputs, cp->src);
      index = &cp->src_index;
    } else if (const auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
      smem = &st->src;
      leading = st->src_index.size();
      slice = &st->src_slice;
      array = find_array(ck.c.outputs, st->dst);
      index = &st->dst_index;
    } else {
      return;
    }
    const auto it = scope.allocs.find(*smem);
    if (it == scope.allocs.end() || !array || it->second->transforms.tiling.empty()) return;
    RefVar& var = var_of(op, *it->second, leading, *slice);
    Transfer t{&op, gmem_slice(*array, *index)};
    var.divides(op, t.gmem.multiple);
    var.transfers.push_back(std::move(t));
  });
  for (RefVar& var : vars) var.find_culprits();
  return vars;
}

}  // namespace

void check_layout_inference(Checker& ck) {
  // A transposed, tiled ref whose permutation moves the tiled dims (the commute fails).
  walk_program(ck.c.program, [&](const Op& op, const Scope& scope) {
    const std::string* smem = nullptr;
    const std::optional<SmemTranspose>* t = nullptr;
    if (const auto* cp = std::get_if<CopyGmemToSmem>(&op.v)) {
      smem = &cp->dst;
      t = &cp->dst_transpose;
    } else if (const auto* st = std::get_if<CopySmemToGmem>(&op.v)) {
      smem = &st->src;
      t = &st->src_transpose;
    }
    if (!smem || !*t) return;
    const Shape& tiling = scope.allocs.at(*smem)->transforms.tiling;
    const std::vector<std::int64_t>& p = (*t)->permutation;
    if (tiling.empty() || tiling.size() > p.size()) return;
    const auto n = static_cast<std::int64_t>(p.size());
    std::vector<std::int64_t> suffix(p.end() - static_cast<std::ptrdiff_t>(tiling.size()), p.end());
    std::sort(suffix.begin(), suffix.end());
    bool kept = true;
    for (std::size_t j = 0; j < suffix.size(); ++j)
      kept = kept && suffix[j] == n - static_cast<std::int64_t>(tiling.size() - j);
    ck.check(RuleId::kDialectCopyTransposeTiledDims, !kept, op.path);
  });
  const std::vector<RefVar> vars = tiled_ref_vars(ck);
  if (ck.explaining()) {
    for (const RefVar& var : vars) {
      ck.notes.push_back("layout inference: " + std::string(var.subview ? "a slice of " : "") +
                         "smem " + var.alloc->name + " tiled " +
                         py::tuple_of_ints(var.alloc->transforms.tiling) +
                         " against what it proves of the copies' GMEM slices, " +
                         py::tuple_of_ints(*var.multiple) + " (per dim gcd of size and start)" +
                         (var.fails() ? ": the tiling does not divide it" : ": divides"));
    }
  }
  // _check_unsatisfiable_divisibility_constraints, over the failing refs in order.
  const bool sliced_candidates = !ck.jax_at_least(JaxVersion::k0_12_0_1);
  for (const RefVar& var : vars) {
    if (!var.fails() || !var.culprits || (var.subview && !sliced_candidates)) continue;
    for (const Transfer& t : var.transfers) {
      for (const std::size_t j : *var.culprits) {
        ck.check(RuleId::kDialectCopyDivisibilityAssert, t.gmem.indices != var.multiple->size(),
                 t.op->path);
        const std::size_t dim = t.gmem.multiple.size() - 1 - j;
        ck.check(RuleId::kDialectCopyProveDivisibility, t.gmem.multiple[dim] == 1, t.op->path, [&] {
          return Holes{{"index", std::to_string(dim)}};
        });
      }
    }
  }
  // No culprit: the generic message, for the first failing ref or vector value.
  check_vector_layout_inference(ck);
  for (const RefVar& var : vars) {
    ck.check(RuleId::kDialectCopyTilingDivides, var.fails(), var.first->path);
  }
}

// find_assignments_for is a backtracking search over the unknowns' candidate layouts with a fuel
// of _DEFAULT_LAYOUT_INFERENCE_FUEL (100,000) tried assignments, both releases. It raises
// "Layout inference failed to find a solution..." when the fuel runs out before the search has
// proven the system unsatisfiable. How much fuel a kernel's unknowns consume is the search's own
// order over every value of the module, which the reference does not replay: a kernel the
// reference proves unsatisfiable may raise either, at the same stage (found by a campaign of
// JAX 0.12.0.1: a 4x2 cluster, two warpgroups, warp_maps, copies and a broadcast vector store).
// A satisfiable system is not affected: the reference predicts no error there.
void admit_layout_search_exhaustion(Diagnostic& d) {
  static constexpr RuleId kAfterSearch[] = {
      RuleId::kDialectBroadcastLayout, RuleId::kDialectLayoutInference,
      RuleId::kDialectCopyDivisibilityAssert, RuleId::kDialectCopyProveDivisibility,
      RuleId::kDialectCopyTilingDivides};
  const bool after_search = std::any_of(std::begin(kAfterSearch), std::end(kAfterSearch),
                                        [&](RuleId id) { return rule(id).name == d.rule; });
  if (!after_search || !d.alternatives.empty()) return;
  d.alternatives.push_back(DiagnosticAlternative{
      "", "ValueError",
      "Layout inference failed to find a solution. Consider adding layout annotations to your "
      "program to guide the search.",
      ""});
}

}  // namespace collfuzz::ref
