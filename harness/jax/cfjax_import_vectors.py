"""Vector stores: `ref[...] = value` into an output or SMEM (`collfuzz import`, cfjax_import.py).

VectorsMixin reads a `swap` equation (`o_ref.at[idx][...] = value`; the old value it returns is
dropped) on an output ref (dst {"output", "index"}) or an SMEM allocation (`smem.at[0][...] =
value`: dst {"alloc", "index"}; a peer CTA's, `plgpu.cluster_ref(smem.at[0], {"x": 1 -
lax.axis_index("x")})[...] = value`, adds the dst's "cluster") into a case's `vector_store`
(docs/case-format.md "vector_store"), its value followed back through the equations that made it
(vector_eqn binds each to a Vec, the value's JSON): `get` of an SMEM allocation (`smem.at[0][...]`:
{"load": {"alloc", "index"}}) or of an input (`x_ref.at[idx][...]`: {"load": {"input", "index"}}), a
peer CTA's SMEM (`plgpu.cluster_ref(smem.at[0], {"x": 1 - lax.axis_index("x")})[...]`: the load's
"cluster",
VectorsMixin.cluster_peer); `add`, `sub`, `mul`, `min`,
`max`, `and`, `or`, `xor` of two such values ({"add": [a, b]}, ...; `min`/`max` are
jnp.minimum/maximum); `shift_left`, `shift_right_logical`, `shift_right_arithmetic` (`v << 3`,
`v >> 3`, `v << w`, lax.shift_*) by any value of the dtype, a constant one below the width (a
constant past it is an Unknown); constants:
`broadcast_in_dim` of a scalar literal (`jnp.full`, `jnp.ones_like`, `jnp.zeros_like`) and a
scalar literal operand of a binary op (`v + 1`, `jnp.maximum(v, 0)`),
each {"const": c}; `convert_element_type` (`v.astype(jnp.float16)`): {"convert": {"from": the
operand's dtype, "value": v}} between two of CONVERT_DTYPES (vector_convert: one that keeps the
dtype, a weak type's change, is v itself; a constant's conversion that keeps its value is the
constant, {"const": c} in the new dtype). A vector value used twice is written out twice (the
case has no variables). Anything else a value holds (another primitive, a load of an output, a
conversion to a dtype no case holds, a broadcast of a vector, an operand of another shape) is an
Unknown that the
store refuses, naming it and its line; so is a load whose vector is used by another kind of op.
`broadcast_in_dim` of a vector along new leading dims (`jnp.broadcast_to(v, (k, *v.shape))`):
{"broadcast": {"shape": v's shape, "value": v}}.
`iota` (`lax.broadcasted_iota`) with `plgpu.layout_cast(..., plgpu.Layout.WG_STRIDED(shape,
vec_size=v))` right after it: {"iota": {"dimension": d, "vec_size": v}}; with none,
{"iota": {"dimension": d, "layout_cast": false}} (an iota whose vectors would cross rows, or a
cast to another layout, is an Unknown).
The array a lax.fori_loop carries (in its body) and its result (after it) are bound by
cfjax_import_control to {"carry": NAME} Vecs, read as any other value.
Each Vec carries the SMEM loads it holds (Vec.loads, an input's load is never written): the store
refuses a value whose loaded ref an op the importer emitted has written since the load, as the
case would read the new contents there (cfjax_import_stale); the store records its own write.
Scalar (0-d) equations are left to IndexMixin.scalar_eqn.
A transformed (tiled, swizzled) SMEM allocation is loaded and stored as an untransformed one, in
logical coordinates (`o_ref[...] = smem[...]`, `smem[...] = smem[...] + 1`: the load or dst stays
{"alloc": NAME, ...}, the allocation keeps its "transforms"; its own undo transforms are dropped
by IndexMixin.ndindexer); an integer into a tiled (or, with a swizzle alone, the minor) dim is
refused (transformed_index), as is any slice of SMEM in a vector load or store.
"""

from __future__ import annotations

import json
import math
import re

from cfjax_case import (CONVERT_DTYPES, VECTOR_BINARY, converted_const, iota_crosses_rows,
                        iota_params)
from cfjax_cluster_ref import split_cluster
from cfjax_import_stale import union
from cfjax_import_values import Axis, Ref, Unknown, user_line

_BINARY = tuple(VECTOR_BINARY)  # the case format's binary ops, each lax.<name>_p


class Vec:
  """A vector value of a vector_store: its JSON (docs/case-format.md), shape and dtype name, and
  the loads of SMEM allocations it holds (cfjax_import_stale.Load: checked where it is used)."""

  def __init__(self, j, shape: tuple, dtype: str, loads: tuple = ()):
    self.j = j
    self.shape = tuple(shape)
    self.dtype = dtype
    self.loads = tuple(loads)


def _aval(var):
  aval = getattr(var, "aval", None)
  return tuple(getattr(aval, "shape", ())), str(getattr(aval, "dtype", ""))


def _number(v):
  """A scalar literal's (or numpy scalar's) Python number (int or float), or None."""
  from jax._src import core  # pylint: disable=import-outside-toplevel
  import numpy as np  # pylint: disable=import-outside-toplevel
  if isinstance(v, core.Literal):
    v = v.val
  try:
    a = np.asarray(v)
  except Exception:  # pylint: disable=broad-except
    return None
  if a.shape != () or a.dtype == np.bool_:
    return None
  if np.issubdtype(a.dtype, np.integer):
    return int(a)
  if np.issubdtype(a.dtype, np.floating) or a.dtype.name == "bfloat16":
    f = float(a)
    return int(f) if f.is_integer() and abs(f) < 2 ** 53 and str(f) != "-0.0" else f
  return None


def _small_amount(j, dtype: str) -> bool:
  """Whether the vector value `j` is a constant shift amount below the width of `dtype`."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  c = j.get("const") if isinstance(j, dict) else None
  return isinstance(c, int) and 0 <= c < 8 * np.dtype(dtype).itemsize


class VectorsMixin:
  """Vector loads, arithmetic and stores, for cfjax_import.Importer."""

  def operand(self, env: dict, v, shape: tuple, dtype: str):
    """An operand of a vector op: its Vec, a scalar literal as {"const": c}, or what it is."""
    from jax._src import core  # pylint: disable=import-outside-toplevel
    if isinstance(v, core.Literal) or not isinstance(v, core.Var):
      c = _number(v)
      return Vec({"const": c}, shape, dtype) if c is not None else Unknown(
          f"the constant {v!r}", "")
    x = env.get(v)
    if isinstance(x, Vec):
      return x
    if isinstance(x, (int, float)) and not isinstance(x, bool) and _aval(v)[0] == ():
      return Vec({"const": x}, shape, dtype)  # a scalar known statically
    return x

  def vector_eqn(self, eqn, env: dict) -> bool:
    """Binds the outputs of a vector equation (one whose first output has rank >= 1, or a
    get/swap) to Vec or Unknown values; False for anything else (scalar arithmetic, ops)."""
    name = eqn.primitive.name
    if name == "swap" or not eqn.outvars:
      return False
    shape, dtype = _aval(eqn.outvars[0])
    if name != "get" and shape == ():
      return False
    where = user_line(eqn, self.user_file, self.kernel_line)
    out = None
    if name == "get":
      out = self.vector_load(eqn, env, shape, dtype, where)
    elif name in _BINARY and len(eqn.invars) == 2:
      a, b = (self.operand(env, v, shape, dtype) for v in eqn.invars)
      if name.startswith("shift_") and isinstance(b, Vec) and "const" in b.j and \
          not _small_amount(b.j, dtype):
        out = Unknown(f"`{name}` by {json.dumps(b.j)[:80]} (a vector_store shifts by a constant "
                      f"from 0 to the width of {dtype} less one, or by a computed amount: past "
                      "the width LLVM's shift is poison while XLA's shifts every bit out)", where)
      elif isinstance(a, Vec) and isinstance(b, Vec) and a.shape == b.shape == shape and \
          a.dtype == b.dtype == dtype:
        out = Vec({name: [a.j, b.j]}, shape, dtype, union(a.loads, b.loads))
      elif isinstance(a, Unknown) or isinstance(b, Unknown):
        out = a if isinstance(a, Unknown) else b  # the innermost cause, with its line
      else:
        bad = a if not isinstance(a, Vec) else b
        why = self.describe(bad) if not isinstance(bad, Vec) else \
            f"operands of shapes {a.shape} and {b.shape} ({a.dtype}, {b.dtype})"
        out = Unknown(f"`{name}` of {why} (a vector_store's operands are loads, constants and "
                      f"their sums, differences, products, minima, maxima, bitwise ops and "
                      f"shifts, of the stored "
                      f"slice's shape {list(shape)} and dtype {dtype})", where)
    elif name in ("broadcast_in_dim", "convert_element_type") and \
        isinstance(self.operand(env, eqn.invars[0], shape, dtype), Unknown):
      out = self.operand(env, eqn.invars[0], shape, dtype)  # the innermost cause, its line
    elif name == "broadcast_in_dim" and len(eqn.invars) == 1:
      src_shape = _aval(eqn.invars[0])[0]
      c = self.operand(env, eqn.invars[0], src_shape if src_shape else shape, dtype)
      if isinstance(c, Vec) and "const" in c.j and src_shape == ():
        out = Vec(c.j, shape, dtype, c.loads)
      else:
        out = self.vector_broadcast(eqn, c, src_shape, shape, dtype, where)
    elif name == "iota":
      # Lane's iota lowers only with a layout cast right after it (its lowering rule's hint):
      # a cast right after it makes the value (below); without one it is the bare iota,
      # {"layout_cast": false} (Lane refuses it, Warpgroup's layout inference lays it out).
      self.iotas[eqn.outvars[0]] = (eqn, eqn.params["dimension"])
      dim = int(eqn.params["dimension"])
      _, vec = iota_params({"dimension": dim}, shape, int(re.search(r"\d+$", dtype).group()),
                           where)
      if iota_crosses_rows(shape, vec):
        out = Unknown(f"an iota of shape {tuple(shape)} with no layout cast: the strided layout "
                      f"Warpgroup infers for it (vec_size {vec}) crosses rows of the minor "
                      "dimension, where JAX's FragmentedArray.foreach computes wrong indices "
                      "(known JAX bug iota_strided_vector_crosses_rows)", where)
      else:
        out = Vec({"iota": {"dimension": dim, "layout_cast": False}}, shape, dtype)
    elif name == "layout_cast" and len(eqn.invars) == 1:
      out = self.iota_cast(eqn, shape, dtype, where)
    elif name == "convert_element_type" and len(eqn.invars) == 1:
      out = self.vector_convert(self.operand(env, eqn.invars[0], shape, dtype),
                                _aval(eqn.invars[0])[1], shape, dtype, where)
    else:
      out = Unknown(f"`{name}` (a vector_store's value is made of loads of SMEM allocations "
                    "and inputs, constants, iotas cast to a strided layout, add, sub, mul, min, "
                    "max, &, |, ^, shifts by a constant and astype)", where)
    for o in eqn.outvars:
      env[o] = out
    return True

  def vector_broadcast(self, eqn, x, src_shape: tuple, shape: tuple, dtype: str, where: str):
    """`jnp.broadcast_to(x, shape)` (broadcast_in_dim along new leading dims, the operand's
    dims the trailing ones, size-1 dims broadcast too): {"broadcast": {"shape": x's shape,
    "value": x}}; along other dims (`lax.broadcast_in_dim(x, shape, dims)`, `x[:, None]`) with
    "dims" too."""
    dims = tuple(eqn.params.get("broadcast_dimensions", ()))
    n = len(src_shape)
    if n == 0 and not isinstance(x, Unknown):  # a scalar constant is the caller's
      return Unknown("`broadcast_in_dim` of a scalar that is not a constant (a vector_store's "
                     "constants are jnp.full / a scalar literal)", where)
    if not isinstance(x, Vec):
      return x if isinstance(x, Unknown) else Unknown(
          f"`broadcast_in_dim` of {self.describe(x)}", where)
    expands = any(s != shape[d] for d, s in zip(dims, src_shape))
    if not 0 < n <= len(shape) or (n == len(shape) and not expands) or len(dims) != n or \
        any(shape[d] != s and s != 1 for d, s in zip(dims, src_shape)):
      return Unknown(f"`broadcast_in_dim` of {tuple(src_shape)} to {tuple(shape)} along "
                     f"{dims} (a vector_store broadcasts to a higher rank, or the same with a "
                     "dim of 1 broadcast, each operand dim onto a dim of its size or from 1)",
                     where)
    leading = dims == tuple(range(len(shape) - n, len(shape)))
    if leading and math.prod(src_shape) % 128:
      return Unknown(f"`broadcast_in_dim` of {tuple(src_shape)} (a vector_store's broadcast "
                     "along new leading dims holds a multiple of 128 elements)", where)
    b = {"shape": list(src_shape), "value": x.j}
    if not leading:
      b["dims"] = list(dims)
    return Vec({"broadcast": b}, shape, dtype, x.loads)

  def iota_cast(self, eqn, shape: tuple, dtype: str, where: str):
    """`plgpu.layout_cast(iota, plgpu.Layout.WG_STRIDED(shape, vec_size=v))` right after the iota:
    {"iota": {"dimension": d, "vec_size": v}}; any other layout cast an Unknown."""
    iota, dim = self.iotas.get(eqn.invars[0], (None, None))
    layout = eqn.params.get("new_layout")
    cls = getattr(getattr(layout, "layout_cls", None), "name", None)
    args = tuple(getattr(layout, "args", ()))
    kwargs = dict(getattr(layout, "kwargs", {}))
    vec = kwargs.get("vec_size", args[1] if len(args) > 1 else None)
    lshape = kwargs.get("shape", args[0] if args else None)
    if iota is None or self.previous_eqn is not iota:
      return Unknown("`layout_cast` of a value that is not the iota right before it (a "
                     "vector_store casts an iota only, right after it)", where)
    if cls != "WG_STRIDED" or not isinstance(vec, int) or \
        tuple(lshape or ()) != tuple(shape):
      return Unknown(f"`layout_cast` of an iota to {layout!r} (a vector_store casts an iota to "
                     f"plgpu.Layout.WG_STRIDED({tuple(shape)}, vec_size=v))", where)
    bits = int(re.search(r"\d+$", dtype).group())  # int8 .. float32, bfloat16
    if vec < 1 or vec > 64 // bits or vec & (vec - 1):
      return Unknown(f"`layout_cast` of an iota to vec_size {vec} (the case language casts to 1, "
                     f"2, ... up to {64 // bits} elements a vector on {dtype})", where)
    if iota_crosses_rows(shape, vec):
      return Unknown(f"an iota of shape {tuple(shape)} cast to vec_size {vec}: its register "
                     "vectors cross rows of the minor dimension, where JAX's "
                     "FragmentedArray.foreach computes wrong indices (known JAX bug "
                     "iota_strided_vector_crosses_rows); a vector_store's iota takes a vec_size "
                     f"that divides {shape[-1]}", where)
    return Vec({"iota": {"dimension": int(dim), "vec_size": vec}}, shape, dtype)

  def vector_convert(self, x, src: str, shape: tuple, dtype: str, where: str):
    """`convert_element_type` (`x.astype(dtype)`, lax.convert_element_type) of the Vec x, of
    dtype src: x itself when the dtype stays (a weak type's change); a constant's number when
    the dtype holds it exactly (`jnp.full(s, 3, jnp.float32).astype(jnp.float16)`: {"const": 3},
    as a scalar literal JAX has converted already); otherwise {"convert": {"from": src, "value":
    x}} between two of CONVERT_DTYPES."""
    if not isinstance(x, Vec):
      return Unknown(f"`convert_element_type` of {self.describe(x)}", where)
    if x.dtype == dtype:
      return Vec(x.j, shape, dtype, x.loads)
    if "const" in x.j:
      c = converted_const(x.j["const"], x.dtype, dtype)
      if c is not None:
        return Vec({"const": c}, shape, dtype, x.loads)
    if x.dtype not in CONVERT_DTYPES or dtype not in CONVERT_DTYPES:
      return Unknown(f"`convert_element_type` from {x.dtype} to {dtype} (a vector_store's "
                     f"{{\"convert\": ...}} converts between {', '.join(CONVERT_DTYPES)})",
                     where)
    return Vec({"convert": {"from": x.dtype, "value": x.j}}, shape, dtype, x.loads)

  def vector_load(self, eqn, env: dict, shape: tuple, dtype: str, where: str):
    """A `get`: {"load": {"alloc"|"input": NAME, "index": [...]}} of an SMEM allocation or an
    input; of anything else an Unknown."""
    ref_var, *flat = eqn.invars
    r = env.get(ref_var)
    transforms, cluster = split_cluster(eqn.params["tree"].unflatten(flat))
    smem = isinstance(r, Ref) and r.kind == "alloc" and r.alloc["kind"] == "smem"
    if cluster is not None and not smem:
      what = f"`{r.name}`" if isinstance(r, Ref) else "a ref the importer does not follow"
      return Unknown(f"a load (`get`) through plgpu.cluster_ref of {what} (a vector_store reads "
                     "a peer CTA's SMEM allocation only)", where)
    if smem:
      load = {"alloc": r.name}
      index = self.static_index(env, transforms, r, eqn, "a vector load")
      if r.alloc.get("transforms"):
        bad = self.transformed_index(r, index)
        if bad:
          return Unknown(f"a load (`get`) of the transformed (tiled or swizzled) SMEM allocation "
                         f"`{r.name}` {bad}", where)
      if cluster is not None:  # a peer CTA's SMEM (cfjax_cluster_ref): {"cluster": {AXIS: IDX}}
        peer = self.cluster_peer(env, cluster)
        if isinstance(peer, str):
          return Unknown(peer, where)
    elif isinstance(r, Ref) and r.kind == "input":
      load = {"input": r.name}
      index = self.gmem_index(env, transforms, r, eqn, "a vector load")
    else:
      what = (f"the output `{r.name}`" if isinstance(r, Ref) and r.kind == "output" else
              f"`{r.name}`" if isinstance(r, Ref) else "a ref the importer does not follow")
      return Unknown(f"a load (`get`) of {what} (a vector_store loads SMEM allocations and "
                     "inputs)", where)
    if index:
      load["index"] = index
    if cluster is not None:
      load["cluster"] = peer
    # An input is never written (inputs are read-only): only an SMEM load can go stale.
    loads = (self.loaded(r.name, index, where),) if r.kind == "alloc" else ()
    return Vec({"load": load}, shape, dtype, loads)

  @staticmethod
  def transformed_index(r: Ref, index: list) -> str | None:
    """What a case cannot say of a vector load or store of a transformed SMEM allocation's
    `index` (static_index's: integers on leading dims, a slice already refused), or None: an
    integer (or a loop slot) into a tiled dim, or into the swizzled minor dim (docs/case-format.md,
    "SMEM transforms")."""
    tiling = next((t["tiling"] for t in r.alloc["transforms"] if "tiling" in t), None)
    rank = len(r.alloc["shape"])
    free = rank - (len(tiling) if tiling else 1)
    if len(index) > free:
      return (f"indexed with {index!r}, an integer into a {'tiled' if tiling else 'swizzled'} "
              "dim (a case indexes a transformed allocation on its leading untransformed dims "
              "only)")
    return None

  def cluster_peer(self, env: dict, t):
    """A load's or a store's ClusterRefTransform (`plgpu.cluster_ref(ref, {AXIS: IDX})`) -> its
    "cluster" JSON, {AXIS: IDX}, or a str saying what a case cannot express (the caller makes it an
    Unknown at the load's line, or refuses the store). AXIS: one cluster axis of the mesh. IDX: an
    integer (a literal, or an integer known statically), or lax.axis_index(A) * m + a of one cluster
    axis A or the thread axis (`1 - lax.axis_index("x")`: {"axis": "x", "mul": -1, "add": 1};
    `lax.axis_index("x")`: {"axis": "x"}); a loop index, a sum, a `%` / lax.rem or pl.multiple_of is
    refused."""
    if isinstance(t, list):
      return ("plgpu.cluster_ref applied twice to one ref (a case's load or store names one peer "
              "CTA)")
    dims, idxs = tuple(t.dims), tuple(t.idxs)
    if len(dims) != 1 or len(idxs) != 1:
      return (f"plgpu.cluster_ref over {len(dims)} cluster axes {dims!r} (a case's load or "
              "store overrides one cluster axis; Mosaic GPU lowers only one too)")
    axis = dims[0]
    names = [n for n in self.mesh.get("cluster_names", []) if isinstance(n, str)]
    if not isinstance(axis, str) or axis not in names:
      return (f"plgpu.cluster_ref along {axis!r}, which is not a cluster axis of the kernel's "
              f"mesh ({', '.join(map(repr, names)) or 'none'})")
    v = idxs[0]
    x = v if isinstance(v, int) else self.value(env, v)
    if x is None and not hasattr(v, "aval"):
      x = self.literal(v)
    if isinstance(x, int) and not isinstance(x, bool):
      return {axis: x}
    thread = self.mesh.get("thread_name")
    if isinstance(x, Axis) and not x.loop and not x.terms and x.mod is None and \
        x.multiple_of is None and (x.axis in names or (thread is not None and x.axis == thread)):
      e = {"axis": x.axis}
      if x.mul != 1:
        e["mul"] = x.mul
      if x.add != 0:
        e["add"] = x.add
      return {axis: e}
    what = (f"the lax.axis_index of {x.axis!r}, which is neither a cluster axis nor the thread "
            "axis" if
            isinstance(x, Axis) and not x.loop and not x.terms and x.mod is None and
            x.multiple_of is None else self.describe(x))
    return (f"plgpu.cluster_ref along {axis!r} to the CTA {what} (a case's peer CTA is an "
            "integer or lax.axis_index(axis) * m + a of one cluster axis, e.g. "
            "1 - lax.axis_index('x'))")

  def swap(self, eqn, env: dict, ops: list):
    """`ref.at[idx][...] = value` on a kernel output ({"output", "index"}) or on an SMEM
    allocation (`smem.at[i][...] = value`: {"alloc", "index"}, leading integers or a loop slot;
    a peer CTA's, `plgpu.cluster_ref(smem.at[i], {AXIS: IDX})[...] = value`, adds the dst's
    "cluster" as cluster_peer reads it): a vector_store. The write is recorded as one of the
    allocation (cfjax_import_stale) whichever CTA's SMEM it reaches."""
    ref_var, val, *flat = eqn.invars
    d = env.get(ref_var)
    smem = isinstance(d, Ref) and d.kind == "alloc" and d.alloc["kind"] == "smem"
    if not isinstance(d, Ref) or (d.kind != "output" and not smem):
      self.refuse(eqn, "a vector store (`swap`, `ref[...] = value`) into a ref that is neither a "
                  "kernel output nor an SMEM allocation (a vector_store writes one of them)")
    transforms, cluster = split_cluster(eqn.params["tree"].unflatten(flat))
    if cluster is not None and not smem:
      self.refuse(eqn, f"a vector store through plgpu.cluster_ref into the output `{d.name}` (a "
                  "vector_store writes a peer CTA's SMEM allocation only)")
    if smem:
      index = self.static_index(env, transforms, d, eqn, "a vector store's destination")
      bad = self.transformed_index(d, index) if d.alloc.get("transforms") else None
      if bad:
        self.refuse(eqn, f"a vector store into the transformed (tiled or swizzled) SMEM "
                    f"allocation `{d.name}` {bad}")
    else:
      index = self.gmem_index(env, transforms, d, eqn, "a vector store's destination")
    shape, dtype = _aval(val)
    v = self.operand(env, val, shape, dtype)
    if not isinstance(v, Vec):
      self.refuse(eqn, f"a vector store of a value the importer does not follow: "
                  f"{self.describe(v)}")
    if v.shape != shape or v.shape == ():
      self.refuse(eqn, f"a vector store of a value of shape {list(v.shape)} (a vector_store "
                  "writes a slice of rank 1 or more)")
    self.check_fresh(eqn, v, "store")  # its loads read the refs here (cfjax_import_stale)
    op = {"op": "vector_store", "dst": {"alloc" if smem else "output": d.name}, "value": v.j}
    if index:
      op["dst"]["index"] = index
    if cluster is not None:  # a DSMEM write, into the peer CTA's SMEM: {"cluster": {AXIS: IDX}}
      peer = self.cluster_peer(env, cluster)
      if isinstance(peer, str):
        self.refuse(eqn, peer)
      op["dst"]["cluster"] = peer
    where = user_line(eqn, self.user_file, self.kernel_line)
    for o in eqn.outvars:  # the old value swap returns
      env[o] = Unknown("the old value a vector store returns", where)
    self.wrote("alloc" if smem else "output", d.name, index, where, "the vector store")
    ops.append(op)
