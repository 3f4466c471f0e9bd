// A loop's index (`lax.fori_loop(0, n, lambda i, carry: ...)`, docs/case-format.md "loop"): the
// dynamic index entries of a loop body that read it ({"loop": name, "mul", "add"}), and the slots
// of SMEM refs and barrier arrays (`.at[i % 2]`).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "harness/core/case.h"

namespace collfuzz {

// Replaces every dynamic entry of `body` that reads the loop index `name` by its value at trip
// `value` (i * mul + add), as static entries: the body of a loop unwrapped at one trip.
void bind_loop_index(Body& body, const std::string& name, std::int64_t value);

// The coordinate d of an nd_loop's grid index (loop_info.index[d]), as its terms evaluate it.
std::shared_ptr<const NdCoord> nd_coord(const Loop::Nd& nd, std::size_t d);

// Gives every dynamic term of an nd_loop's body and next that reads a coordinate of its grid index
// the coordinate's NdCoord (the reader calls it once the loop is read).
void attach_nd_coords(Loop& l);

// Whether some dynamic entry of `body` reads the loop index `name`.
bool reads_loop_index(const Body& body, const std::string& name);

}  // namespace collfuzz
