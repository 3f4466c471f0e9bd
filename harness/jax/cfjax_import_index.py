"""Indices and conditions: the scalar arithmetic of a kernel body (`collfuzz import`, cfjax_import.py).

IndexMixin.scalar_eqn follows `lax.axis_index(axis) * m + a` and a lax.fori_loop's `i * m + a`
(both Axis values; the loop's kept through the arithmetic, refused in a comparison: conditions use
only lax.axis_index), linear sums of those (`lax.axis_index("a") * 128 + lax.axis_index("b") * 64
+ i * 16 + 8`, in any order and scaled by integers: the first term the own one, the others an
entry's `plus` terms, a name met twice merged, a final `rem`/% allowed; dynamic_entry refuses one
whose factors or constant would be negative), comparisons of lax.axis_index with an integer and
`and`/`or`/`not` of those (a case's index entries and conditions); the rest turns a ref's
transforms (one `.at[...]`, an NDIndexer) into a case's index entries: GMEM indices (integers,
`:`, lax.axis_index and loop entries and their sums, `pl.ds` with such a start) and SMEM ones
(static integers, the first one possibly a loop slot; on a copy's SMEM side one last `pl.ds`
slice, whose start may be a sum as a GMEM start's; a transformed allocation's own UnswizzleRef /
UntilingTransform dropped from the front of its uses). `rem` (lax.rem) and Python's % (a
jnp.remainder call) of a loop index by an integer k make a slot, an Axis with mod k
(`bars.at[i % 2]`); nothing follows a slot's `%`; a slot is of one loop index (no sum).
"""

from __future__ import annotations

from cfjax_import_values import Axis, Cond, Ref, Unknown, axis_name_json, user_line


_CMP = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}
_FLIP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


class IndexMixin:
  """Scalar equations and ref indices, for cfjax_import.Importer."""

  def scalar_eqn(self, eqn, env: dict) -> bool:
    """Follows the scalar arithmetic of indices and conditions; False if `eqn` is not such."""
    name = eqn.primitive.name
    ins = [self.value(env, v) for v in eqn.invars]
    out = None
    if name == "axis_index":
      out = Axis(self.axis_name(eqn.params["axis_name"]))
    elif name in ("convert_element_type", "copy", "copy_p") and len(ins) == 1:
      out = ins[0]
      if isinstance(out, bool) and eqn.outvars[0].aval.dtype.name != "bool":
        out = int(out)
    elif name == "multiple_of" and len(ins) == 1:
      values = tuple(eqn.params.get("values", ()))
      if isinstance(ins[0], Axis) and ins[0].multiple_of is None and len(values) == 1:
        out = ins[0].assumed(int(values[0]))
      else:
        out = Unknown(f"pl.multiple_of of {self.describe(ins[0])} by {values} (a case takes one "
                      "pl.multiple_of around a whole lax.axis_index or loop index expression)",
                      user_line(eqn, self.user_file))
    elif (name in ("mul", "add", "sub", "rem") or (
        name in ("pjit", "jit") and eqn.params.get("name") == "remainder")) and any(
        isinstance(x, Axis) and x.multiple_of is not None for x in ins):
      out = Unknown(f"`{name}` of {self.describe(ins[0])} and {self.describe(ins[1])} (a case's "
                    "pl.multiple_of goes around the whole index: no arithmetic after it)",
                    user_line(eqn, self.user_file))
    elif name in ("mul", "add", "sub") and any(isinstance(x, Axis) and x.mod is not None
                                               for x in ins):
      out = Unknown(f"`{name}` of {self.describe(ins[0])} and {self.describe(ins[1])} (a slot "
                    "is (i * m + a) % k: no arithmetic after the `%` / lax.rem can be "
                    "represented)", user_line(eqn, self.user_file))
    elif name == "rem" and len(ins) == 2:
      out = self.remainder(eqn, ins, "lax.rem")
    elif name == "div" and len(ins) == 2:
      # lax.div of two static integers (truncating): a plgpu.nd_loop's trip count G // S
      # (cfjax_import_ndloop); of anything else an Unknown (a case's index has no division).
      a, b = ins
      if all(isinstance(x, int) and not isinstance(x, bool) for x in ins) and b != 0:
        out = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
      else:
        out = Unknown(f"`div` of {self.describe(a)} by {self.describe(b)} (a case's index has "
                      "no division)", user_line(eqn, self.user_file))
    elif name in ("pjit", "jit") and eqn.params.get("name") == "remainder" and len(ins) == 2 \
        and (any(isinstance(x, Axis) for x in ins) or
             all(isinstance(x, int) and not isinstance(x, bool) for x in ins)):
      out = self.remainder(eqn, ins, "%")  # Python's % (jnp.remainder: floors)
    elif name in ("mul", "add", "sub") and len(ins) == 2:
      a, b = ins
      if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        out = {"mul": a * b, "add": a + b, "sub": a - b}[name]
      elif name == "mul" and isinstance(a, Axis) and isinstance(b, int):
        out = a.times(b)
      elif name == "mul" and isinstance(b, Axis) and isinstance(a, int):
        out = b.times(a)
      elif name in ("add", "sub") and isinstance(a, Axis) and isinstance(b, Axis):
        out = a.sum(b, 1 if name == "add" else -1)  # an index summed over several terms
      elif name == "add" and isinstance(a, Axis) and isinstance(b, int):
        out = a.plus(b)
      elif name == "add" and isinstance(b, Axis) and isinstance(a, int):
        out = b.plus(a)
      elif name == "sub" and isinstance(a, Axis) and isinstance(b, int):
        out = a.plus(-b)
      elif name == "sub" and isinstance(b, Axis) and isinstance(a, int) and not b.loop:
        out = b.times(-1).plus(a)  # `1 - lax.axis_index("x")` (a cluster_ref's peer CTA)
      else:
        out = Unknown(f"`{name}` of {self.describe(a)} and {self.describe(b)}",
                      user_line(eqn, self.user_file))
    elif name in _CMP and len(ins) == 2:
      a, b = ins
      op = name
      if isinstance(b, Axis) and isinstance(a, int):
        a, b, op = b, a, _FLIP[name]
      if any(isinstance(x, Axis) and x.loop for x in ins):
        out = Unknown(f"the comparison `{name}` of {self.describe(ins[0])} and "
                      f"{self.describe(ins[1])} (a condition may use only lax.axis_index, "
                      "not a lax.fori_loop index)", user_line(eqn, self.user_file))
      elif isinstance(a, Axis) and isinstance(b, int) and a.mul == 1 and a.add == 0 and \
          not a.terms:
        out = Cond({"axis": axis_name_json(a.axis), op: b})
      elif isinstance(a, int) and isinstance(b, int):
        out = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
               "ge": a >= b}[name]
      else:
        out = Unknown(f"the comparison `{name}` of {self.describe(ins[0])} and "
                      f"{self.describe(ins[1])} (a condition compares lax.axis_index(axis) "
                      "with an integer)", user_line(eqn, self.user_file))
    elif name in ("and", "or") and len(ins) == 2:
      parts = []
      for x in ins:
        if isinstance(x, bool):
          parts.append(x)
        elif isinstance(x, Cond):
          parts.append(x.j)
        else:
          parts = None
          break
      if parts is None:
        out = Unknown(f"`{name}` of {self.describe(ins[0])} and {self.describe(ins[1])}",
                      user_line(eqn, self.user_file))
      else:
        key = "all" if name == "and" else "any"
        flat = []
        for p in parts:  # a chain of ands (ors) is one all (any)
          if isinstance(p, dict) and list(p) == [key]:
            flat.extend(p[key])
          else:
            flat.append(p)
        out = Cond({key: flat})
    elif name == "not" and len(ins) == 1:
      x = ins[0]
      if isinstance(x, bool):
        out = not x
      elif isinstance(x, Cond):
        out = Cond({"not": x.j})
      else:
        out = Unknown(f"`not` of {self.describe(x)}", user_line(eqn, self.user_file))
    else:
      return False
    for o in eqn.outvars:
      env[o] = out
    return True

  def remainder(self, eqn, ins: list, spelt: str):
    """`rem` (lax.rem, truncating) or a call of jnp.remainder (Python's %, flooring) of a loop
    index expression i * m + a by an integer k >= 1 -> Axis with mod k (a case's mod is lax.rem:
    for %, only where i * m + a cannot be negative); of integers -> the integer; else Unknown
    with why."""
    a, b = ins
    where = user_line(eqn, self.user_file)
    if all(isinstance(x, int) and not isinstance(x, bool) for x in ins):
      if b == 0:
        return Unknown(f"`{spelt}` by 0", where)
      if spelt == "%":
        return a % b
      return -(abs(a) % abs(b)) if a < 0 else abs(a) % abs(b)
    what = f"`{spelt}` of {self.describe(a)} by {self.describe(b)}"
    if isinstance(b, bool) or not isinstance(b, int) or b < 1:
      return Unknown(f"{what} (a slot is (i * m + a) % k, k an integer >= 1)", where)
    if not isinstance(a, Axis):
      return Unknown(what, where)
    if not a.loop and not a.terms:
      return Unknown(f"{what} (a slot `% k` is made of a lax.fori_loop index, not of "
                     "lax.axis_index)", where)
    if a.mod is not None:
      return Unknown(f"{what} (a slot takes one `% k`: (i * m + a) % k)", where)
    if spelt == "%" and a.negative():
      dividend = a.spelt() if a.terms else f"i * {a.mul} + {a.add}"
      return Unknown(f"{what}, whose dividend {dividend} may be negative (Python's % floors, "
                     "a case's mod is lax.rem: write lax.rem(...))", where)
    return a.modulo(b)

  # -- indices

  def user_transforms(self, transforms, ref: Ref, eqn, what: str) -> list:
    """The transforms of a ref use after a transformed SMEM allocation's own undo transforms
    (Ref.layout: UnswizzleRef, UntilingTransform), which JAX puts first on every use: the
    user's `.at[...]` and `.transpose(...)`, in logical coordinates."""
    transforms = list(transforms or ())
    n = len(ref.layout)
    if n:
      if tuple(transforms[:n]) != ref.layout:
        kinds = ", ".join(type(t).__name__ for t in transforms) or "nothing"
        self.refuse(eqn, f"{what}: a use of the transformed `{ref.name}` whose transforms "
                    f"({kinds}) do not begin with its own ({ref.layout})")
      transforms = transforms[n:]
    return transforms

  def ndindexer(self, env, transforms, ref: Ref, eqn, what: str):
    """The transforms of a ref use -> one NDIndexer's entries (None: no transform), the
    allocation's own undo transforms dropped (user_transforms)."""
    from jax._src.state import indexing  # pylint: disable=import-outside-toplevel
    transforms = self.user_transforms(transforms, ref, eqn, what)
    if not transforms:
      return None
    if any(type(t).__name__ == "ClusterRefTransform" for t in transforms):
      self.refuse(eqn, f"{what}: a ref of `{ref.name}` through plgpu.cluster_ref (a case reaches "
                  "a peer CTA's SMEM only in a vector_store's value or SMEM destination, "
                  "`plgpu.cluster_ref(smem, {axis: idx})[...]`)")
    if any(type(t).__name__ == "TransposeTransform" for t in transforms):
      self.refuse(eqn, f"{what}: a transposed ref of `{ref.name}` (`.transpose(...)`, "
                  "plgpu.transpose_ref); a case transposes only the SMEM side of a copy "
                  "(copy_gmem_to_smem's destination, copy_smem_to_gmem's source)")
    if len(transforms) != 1 or not isinstance(transforms[0], indexing.NDIndexer):
      kinds = ", ".join(type(t).__name__ for t in transforms)
      self.refuse(eqn, f"{what}: the ref of `{ref.name}` is transformed by {kinds}; a case "
                  "indexes a ref once (one `.at[...]`)")
    return transforms[0].indices

  def index_value(self, env, v, eqn, what):
    from jax._src import core  # pylint: disable=import-outside-toplevel
    if isinstance(v, (int,)) and not isinstance(v, bool):
      return v
    if isinstance(v, core.Var) or isinstance(v, core.Literal):
      x = self.value(env, v)
    else:
      x = self.literal(v)
      if x is None:
        x = env.get(v)
    if isinstance(x, (int, Axis)) and not isinstance(x, bool):
      return x
    self.refuse(eqn, f"{what}: an index that is {self.describe(x)} (an index is an integer, "
                "lax.axis_index(axis) * m + a, a lax.fori_loop index i * m + a, a sum of such "
                "terms, or a slot (i * m + a) % k)")
    return None

  def gmem_index(self, env, transforms, ref: Ref, eqn, what: str):
    indices = self.ndindexer(env, transforms, ref, eqn, what)
    if indices is None:
      return []
    return self.index_entries(env, indices, ref, eqn, what)

  def index_entries(self, env, indices, ref: Ref, eqn, what: str) -> list:
    """An NDIndexer's indices (one per dim of `ref`) -> a case's index entries (trailing whole
    dims left out)."""
    from jax._src.state import indexing  # pylint: disable=import-outside-toplevel
    out = []
    dims = list(ref.shape)
    for d, ix in enumerate(indices):
      dim = dims[d] if d < len(dims) else None
      if isinstance(ix, indexing.Slice):
        if ix.stride != 1:
          self.refuse(eqn, f"{what}: a strided slice (stride {ix.stride}) of `{ref.name}`")
        start = self.index_value(env, ix.start, eqn, what)
        size = self.index_value(env, ix.size, eqn, what)
        if not isinstance(size, int):
          self.refuse(eqn, f"{what}: a slice of dynamic size of `{ref.name}`")
        if isinstance(start, int) and start == 0 and size == dim:
          out.append(":")
        elif isinstance(start, int):
          out.append({"start": start, "size": size})
        else:
          out.append({"start": self.dynamic_entry(start, eqn, what), "size": size})
      else:
        x = self.index_value(env, ix, eqn, what)
        out.append(self.dynamic_entry(x, eqn, what) if isinstance(x, Axis) else x)
    while out and out[-1] == ":":
      out.pop()
    return out

  def dynamic_entry(self, x: Axis, eqn, what: str) -> dict:
    """An Axis -> a case's dynamic index object; a sum (`plus` terms) whose factors or constant
    would be negative is refused here (a case's are >= 0)."""
    if x.terms and x.negative():
      self.refuse(eqn, f"{what}: the index {x.spelt()} has a negative factor or constant; an "
                  "index summed over several terms is written with every `* m` and the "
                  "constant >= 0 (mul and add of a case's index are)")
    return x.entry()

  def static_index(self, env, transforms, ref: Ref, eqn, what: str, allow_slice: bool = False):
    """An SMEM ref's index: integers on leading dims, the first one possibly a lax.fori_loop slot
    (`smem.at[i % 2]`: {"loop": NAME, "mul", "add", "mod"}); with `allow_slice` (a copy's SMEM
    side), the last entry may be one slice of the dim after them, {"start": S, "size": N}
    (`smem.at[i, pl.ds(start, size)]`, S static or dynamic as a GMEM slice's start: lax.axis_index
    and loop terms and their sums); a case indexes SMEM no other way."""
    return self.smem_entries(self.gmem_index(env, transforms, ref, eqn, what), ref, eqn, what,
                             allow_slice)

  def smem_entries(self, entries: list, ref: Ref, eqn, what: str, allow_slice: bool) -> list:
    """static_index's check of index entries (gmem_index's or index_entries')."""
    if allow_slice and entries and isinstance(entries[-1], dict) and "start" in entries[-1]:
      sliced = entries.pop()
      if ":" in entries:
        self.refuse(eqn, f"{what}: `{ref.name}` sliced ({sliced!r}) after a whole dim (`:`); a "
                    "case's SMEM slice is of the first dim no integer indexes (`smem.at[i, "
                    "pl.ds(start, size)]`)")
      out = self.static_index_entries(entries, ref, eqn, what)
      return out + [sliced]
    return self.static_index_entries(entries, ref, eqn, what)

  def static_index_entries(self, entries: list, ref: Ref, eqn, what: str) -> list:
    """static_index's integer entries, the first one possibly a loop slot."""
    for d, e in enumerate(entries):
      if isinstance(e, dict) and "plus" in e:
        self.refuse(eqn, f"{what}: `{ref.name}` indexed with a sum of several indices ({e!r}); a "
                    "case indexes SMEM with static integers, the first one possibly a "
                    "lax.fori_loop slot (i * m + a) % k of one loop index")
      if d == 0 and isinstance(e, dict) and "loop" in e:
        continue
      if isinstance(e, dict) and "axis" in e:
        self.refuse(eqn, f"{what}: `{ref.name}` indexed with lax.axis_index ({e!r}); a case "
                    "indexes SMEM with static integers, the first one possibly a lax.fori_loop "
                    "slot (i * m + a) % k")
      if isinstance(e, bool) or not isinstance(e, int):
        self.refuse(eqn, f"{what}: `{ref.name}` indexed with {e!r}; a case indexes SMEM with "
                    "static integers on its leading dims, the first one possibly a "
                    "lax.fori_loop slot (i * m + a) % k, and a copy's SMEM ref with one last "
                    "slice pl.ds(start, size) after them")
    return entries
