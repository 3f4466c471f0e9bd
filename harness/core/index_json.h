// The JSON form of one index entry of a GMEM ref (docs/case-format.md, "Index entries"):
// `k` (ref.at[k]), `":"` (slice(None), the whole dim), {"start", "size"} (pl.ds, the start static
// or dynamic), and a dynamic integer index: {"axis", "mul", "add"}
// (ref.at[lax.axis_index(axis) * mul + add]) or {"loop", "mul", "add"} (ref.at[i * mul + add],
// i the index of the enclosing loop named `loop`), either with "plus": [{"axis"|"loop", "mul"}...]
// (more terms summed in: lax.axis_index("a") * 128 + lax.axis_index("b") * 64).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/case.h"

namespace collfuzz {

// The number of values a dynamic index reads: the size of the axis (`lax.axis_index(axis)`), or
// nullopt when the mesh does not give it one; with `loop`, the trip count of the enclosing loop
// whose index is `axis`. Throws InputError at `path` when the name cannot be indexed at all.
using IndexAxisSize = std::function<std::optional<std::int64_t>(const std::string& axis, bool loop,
                                                                const std::string& path)>;

// One entry along a dim of size `dim`. A static entry must stay inside the dim; a dynamic
// integer index must too, for every value of its axis; a dynamic slice start may run out of
// bounds (that is how out-of-bounds copies are written).
IndexEntry parse_gmem_index_entry(const nlohmann::json& e, const std::string& path,
                                  std::int64_t dim, const IndexAxisSize& axis_size);

nlohmann::json gmem_index_entry_to_json(const IndexEntry& e);

// A loop's slot indexing a dim of `extent` (an SMEM ref's leading dim, a barrier array):
// {"loop", "mul", "add", "mod"}, `smem.at[i % 2]`, in bounds on every trip.
DynStart parse_loop_slot(const nlohmann::json& j, const std::string& path, std::int64_t extent,
                         const IndexAxisSize& axis_size);

// A dynamic index object's JSON form ({"axis"|"loop", "mul", "add"[, "mod"]}).
nlohmann::json dyn_to_json(const DynStart& d);

// The largest value `d` takes over the values 0..n-1 of its axis or loop index.
std::int64_t dyn_max(const DynStart& d, std::int64_t n);
// The same for an index with `plus` terms: sizes[0] is its own term's, sizes[k + 1] plus[k]'s.
// With a mod and more than 65,536 combinations, a bound (the peak, at most mod - 1).
std::int64_t dyn_max(const DynStart& d, const std::vector<std::int64_t>& sizes);

}  // namespace collfuzz
