"""The case, as the JAX executor reads it (docs/case-format.md), without importing JAX.

The C++ parser (harness/core/case_json.cpp) is the strict one; this module only normalises what
the adapter needs and raises CaseError on anything it cannot make sense of (the executor turns
that into a `crash` outcome, since the harness sends only cases its parser accepted).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import operator
from typing import Any, Iterator


class CaseError(ValueError):
  """A case the adapter cannot read (malformed JSON object, unknown field values)."""


# JAX's TMAReductionOp (mosaic/gpu/launch_context.py): a copy_smem_to_gmem's `reduction_op`.
REDUCTION_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor",
                 "umin", "umax", "smin", "smax")


def reduction_op(op: dict, path: str = "$") -> str | None:
  """A copy_smem_to_gmem's `reduction_op` (None: absent or null, a plain store); anything but one
  of REDUCTION_OPS is a CaseError naming the field."""
  r = op.get("reduction_op")
  if r is None:
    return None
  if not isinstance(r, str) or r not in REDUCTION_OPS:
    raise CaseError(f"{path}.reduction_op: unknown reduction op {r!r} (one of "
                    f"{', '.join(REDUCTION_OPS)})")
  return r


def flag(op: dict, name: str, default: bool, path: str = "$") -> bool:
  """A boolean field of an op (`commit_group`, `wait`, `wait_read_only`): absent (or null) is
  `default`; anything but a JSON boolean is a CaseError naming the field."""
  v = op.get(name)
  if v is None:
    return default
  if not isinstance(v, bool):
    raise CaseError(f"{path}.{name}: expected a boolean, got {v!r}")
  return v


def wait_groups(op: dict, path: str = "$") -> int:
  """A wait_smem_to_gmem's `n` (required; an integer, passed to JAX as it is: a negative one is
  JAX's own ValueError at trace)."""
  n = op.get("n")
  if not isinstance(n, int) or isinstance(n, bool):
    raise CaseError(f"{path}.n: expected an integer, got {n!r}")
  return n


def _minimum(a, b):
  import numpy as np  # pylint: disable=import-outside-toplevel
  return np.minimum(a, b)


def _maximum(a, b):
  import numpy as np  # pylint: disable=import-outside-toplevel
  return np.maximum(a, b)


def _as_signedness(a, signed: bool):
  """`a`'s bits as the integer dtype of its width and the given signedness."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  return a.view(np.dtype(f"{'i' if signed else 'u'}{a.dtype.itemsize}"))


def _shift_left(a, b):
  return (_as_signedness(a, False) << _as_signedness(b, False)).view(a.dtype)


def _shift_right_logical(a, b):
  return (_as_signedness(a, False) >> _as_signedness(b, False)).view(a.dtype)


def _shift_right_arithmetic(a, b):
  return (_as_signedness(a, True) >> _as_signedness(b, True)).view(a.dtype)


# A vector_store's binary values (docs/case-format.md "vector_store"): the function each applies to
# two numpy arrays of the dtype (min/max: np.minimum/np.maximum, jnp.minimum/jnp.maximum in the
# kernel, cfjax_translate.vector_value; integers compare as the dtype signs them; and/or/xor:
# a & b, a | b, a ^ b, lax.and_p/or_p/xor_p, integer dtypes only; the shifts: by a constant below
# the width, on the bits as unsigned (left, logical) or signed (arithmetic) integers,
# lax.shift_left_p/shift_right_logical_p/shift_right_arithmetic_p, integer dtypes only).
VECTOR_BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
                 "min": _minimum, "max": _maximum,
                 "and": operator.and_, "or": operator.or_, "xor": operator.xor,
                 "shift_left": _shift_left, "shift_right_logical": _shift_right_logical,
                 "shift_right_arithmetic": _shift_right_arithmetic}


def iota_params(arg: Any, shape: tuple, dtype_bits: int, path: str) -> tuple[int, int | None]:
  """A vector value's {"iota": {"dimension": d, "vec_size": v}} (docs/case-format.md
  "vector_store") -> (d, v): `plgpu.layout_cast(lax.broadcasted_iota(dtype, shape, d),
  plgpu.Layout.WG_STRIDED(shape, vec_size=v))`; `vec_size` absent is the strided layout's of the
  dtype and count (WGStridedFragLayout.from_shaped_type: min(64 // bits, n // 128), halved until
  128 * v divides n; 1 where n is no multiple of 128). {"dimension": d, "layout_cast": false}
  -> (d, None): `lax.broadcasted_iota(dtype, shape, d)` with no cast."""
  if not isinstance(arg, dict) or not set(arg) <= {"dimension", "vec_size", "layout_cast"} or \
      not isinstance(arg.get("dimension"), int) or not 0 <= arg["dimension"] < len(shape) or \
      "layout_cast" in arg and (arg["layout_cast"] is not False or "vec_size" in arg):
    raise CaseError(f"{path}.iota: expected {{\"dimension\": 0..{len(shape) - 1}, "
                    f"\"vec_size\": v}} or {{\"dimension\": d, \"layout_cast\": false}}, "
                    f"got {arg!r}")
  if arg.get("layout_cast", True) is False:
    return arg["dimension"], None
  if "vec_size" in arg:
    return arg["dimension"], int(arg["vec_size"])
  n = math.prod(shape)
  vec = min(64 // dtype_bits, n // 128) if n % 128 == 0 else 0
  while vec > 0 and n % (vec * 128):
    vec //= 2
  return arg["dimension"], max(vec, 1)


def iota_crosses_rows(shape: tuple, vec_size: int) -> bool:
  """Whether an iota's register vectors of `vec_size` elements cross rows of the minor dimension:
  Mosaic GPU's FragmentedArray.foreach adds an element's place in its vector to the minor index
  only, so such an iota's values are wrong (known JAX bug iota_strided_vector_crosses_rows, ci/
  known-jax-bugs.json); the case language refuses it (docs/case-format.md "vector_store")."""
  return shape[-1] % vec_size != 0


# The dtypes a vector_store's {"convert": {"from": F, "value": V}} converts between
# (docs/case-format.md "vector_store", "Conversions").
CONVERT_DTYPES = ("float32", "float16", "bfloat16", "int8", "int16", "int32", "uint8", "uint16",
                  "uint32")


def converted_const(c: Any, src: str, dst: str):
  """The number c (a value of dtype src) as a constant of dtype dst when dst holds it exactly (a
  zero's sign included): what `jnp.full(shape, c, src).astype(dst)` folds to (`collfuzz import`,
  tools/import_roundtrip.py); None when the conversion would round, truncate, wrap or overflow,
  or for a dtype outside CONVERT_DTYPES. Pure Python (struct's `f` and `e` formats)."""
  import struct  # pylint: disable=import-outside-toplevel
  if src not in CONVERT_DTYPES or dst not in CONVERT_DTYPES or isinstance(c, bool) or \
      not isinstance(c, (int, float)) or (isinstance(c, float) and not math.isfinite(c)):
    return None
  if dst.startswith(("int", "uint")):
    if isinstance(c, float) and (not c.is_integer() or (c == 0 and math.copysign(1.0, c) < 0)):
      return None  # truncated, or -0.0 (its sign lost)
    bits = int(dst.lstrip("uint"))
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dst[0] == "i" else (0, (1 << bits) - 1)
    return int(c) if lo <= int(c) <= hi else None
  fmt = "e" if dst == "float16" else "f"
  try:
    (f,) = struct.unpack(fmt, struct.pack(fmt, float(c)))
  except (OverflowError, struct.error):
    return None
  if f != c or (dst == "bfloat16" and struct.unpack("<I", struct.pack("<f", f))[0] & 0xFFFF):
    return None
  return c


def const_number(c: Any, dtype, path: str = "$"):
  """A vector value's {"const": c}: a JSON number, an int for an integer dtype (`dtype` a name,
  "int32", or a dtype object with that `name`); the parser checked that the dtype holds it
  exactly."""
  name = getattr(dtype, "name", None) or str(dtype)
  if isinstance(c, bool) or not isinstance(c, (int, float)):
    raise CaseError(f"{path}.const: expected a number, got {c!r}")
  if name.startswith(("int", "uint")):
    if isinstance(c, float) and not c.is_integer():
      raise CaseError(f"{path}.const: {c!r} is no integer of {name}")
    return int(c)
  return float(c)


def index_shape(shape, index) -> tuple:
  """The shape of `ref.at[index]` for a GMEM ref of `shape`: an integer entry (static or dynamic)
  drops its dim, `":"` keeps it, `{"start", "size"}` makes it `size`; dims past the entries
  stay."""
  out = []
  for d, dim in enumerate(shape):
    if d >= len(index):
      out.append(int(dim))
      continue
    e = index[d]
    if isinstance(e, bool):
      raise CaseError(f"not an index entry: {e!r}")
    if isinstance(e, int) or (isinstance(e, dict) and ("axis" in e or "loop" in e)):
      continue
    if e == ":":
      out.append(int(dim))
    elif isinstance(e, dict) and "size" in e:
      out.append(int(e["size"]))
    else:
      raise CaseError(f"not an index entry: {e!r}")
  return tuple(out)


def axis_name(j: Any):
  """A JSON axis name -> the Python value JAX sees: "x" -> "x", ["x", "y"] -> ("x", "y")."""
  if isinstance(j, str):
    return j
  if isinstance(j, list) and j and all(isinstance(p, str) for p in j):
    return tuple(j)
  raise CaseError(f"not an axis name: {j!r}")


def axis_names(j: Any) -> tuple:
  """A JSON list of axis names -> a tuple; a single string "x" means ("x",), as in Python."""
  if isinstance(j, str):
    return (j,)
  if not isinstance(j, list):
    raise CaseError(f"not a list of axis names: {j!r}")
  return tuple(axis_name(a) for a in j)


def cancel_params(op: dict, path: str = "$") -> tuple[str, tuple, tuple]:
  """A try_cluster_cancel's (result allocation's name, result index as a tuple of ints,
  collective axes as a tuple of names) (docs/case-format.md): `result` is {"alloc": NAME} or
  {"alloc": NAME, "index": [i, ...]}, static non-negative integers on the allocation's leading
  dims (`res.at[i, ...]`; absent or [] the whole allocation); `collective_axes` absent, null or
  [] is (), a string one name, else a list of names. Anything else is a CaseError naming the
  field."""
  res = op.get("result")
  if not isinstance(res, dict) or "alloc" not in res or not set(res) <= {"alloc", "index"} or \
      not isinstance(res["alloc"], str):
    raise CaseError(f"{path}.result: expected {{\"alloc\": NAME}} or {{\"alloc\": NAME, "
                    f"\"index\": [ints]}} (an SMEM allocation), got {res!r}")
  index = res.get("index", [])
  if not isinstance(index, list) or not all(
      isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in index):
    raise CaseError(f"{path}.result.index: expected an array of non-negative integers (static "
                    f"indices on the allocation's leading dims), got {index!r}")
  index = tuple(index)
  axes = op.get("collective_axes")
  if axes is None:
    return res["alloc"], index, ()
  if isinstance(axes, str):
    return res["alloc"], index, (axes,)
  if isinstance(axes, list) and all(isinstance(a, str) for a in axes):
    return res["alloc"], index, tuple(axes)
  raise CaseError(f"{path}.collective_axes: expected an axis name or an array of them, "
                  f"got {axes!r}")


def without_scratch_shapes(j: dict) -> dict:
  """`scratch_shapes` as what JAX makes of it (harness/core/scratch_shapes.h): one run_scoped around
  the program, collective over the thread axis for plgpu.kernel (JAX 0.11.2 wraps the kernel body
  in `run_scoped(body, *scratch_types, collective_axes=thread_name)`), with none for pallas_call."""
  if not isinstance(j, dict) or "scratch_shapes" not in j:
    return j
  out = {k: v for k, v in j.items() if k != "scratch_shapes"}
  scope = {"op": "run_scoped"}
  thread = (j.get("mesh") or {}).get("thread_name")
  if (j.get("target") or {}).get("entry", "kernel") != "pallas_call" and isinstance(thread, str):
    scope["collective_axes"] = [thread]
  scope["allocs"] = j["scratch_shapes"]
  scope["body"] = j.get("program", [])
  out["program"] = [scope]
  return out


# The ops that hold a body of ops (docs/case-format.md "Ops").
BODY_OPS = ("run_scoped", "when", "loop", "nd_loop", "warp_map")
# The ops that loop: a fori loop (`loop`) and plgpu.nd_loop (`nd_loop`); both may carry a value.
LOOP_OPS = ("loop", "nd_loop")


@dataclasses.dataclass
class Mesh:
  grid: tuple = ()
  grid_names: tuple = ()
  cluster: tuple = ()
  cluster_names: tuple = ()
  num_threads: int | None = None
  thread_name: str | None = None

  @staticmethod
  def from_json(j: dict) -> "Mesh":
    if not isinstance(j, dict):
      raise CaseError("mesh must be an object")
    return Mesh(
        grid=tuple(int(d) for d in j.get("grid", [])),
        grid_names=axis_names(j.get("grid_names", [])),
        cluster=tuple(int(d) for d in j.get("cluster", [])),
        cluster_names=axis_names(j.get("cluster_names", [])),
        num_threads=None if j.get("num_threads") is None else int(j["num_threads"]),
        thread_name=j.get("thread_name"),
    )

  @property
  def num_ctas(self) -> int:
    return math.prod(self.cluster) if self.cluster else 1

  def cta_coords(self) -> list[tuple[int, ...]]:
    """Coordinates of every CTA of one cluster, in CUDA rank order (row-major, first most major)."""
    return list(itertools.product(*(range(d) for d in self.cluster)))

  def threads(self) -> int:
    return self.num_threads or 1


@dataclasses.dataclass
class Case:
  raw: dict
  name: str
  mesh: Mesh
  target: dict
  inputs: list
  outputs: list
  program: list

  @staticmethod
  def from_json(j: Any) -> "Case":
    if not isinstance(j, dict):
      raise CaseError("a case must be a JSON object")
    j = without_scratch_shapes(j)
    for key in ("format", "name", "mesh", "target", "program"):
      if key not in j:
        raise CaseError(f"the case has no {key!r}")
    if j["format"] != 1:
      raise CaseError(f"unsupported case format {j['format']!r}")
    target = dict(j["target"])
    target.setdefault("semantics", "warpgroup")
    target.setdefault("entry", "kernel")
    target.setdefault("profile", "mosaic")
    if target.get("arch") not in ("sm_80", "sm_90a", "sm_100a"):
      raise CaseError(f"unknown arch {target.get('arch')!r}")
    if not isinstance(j["program"], list):
      raise CaseError("program must be an array of ops")
    c = Case(
        raw=j,
        name=str(j["name"]),
        mesh=Mesh.from_json(j["mesh"]),
        target=target,
        inputs=list(j.get("inputs", [])),
        outputs=list(j.get("outputs", [])),
        program=j["program"],
    )
    for a in c.inputs + c.outputs:
      if not isinstance(a, dict) or "name" not in a or "shape" not in a or "dtype" not in a:
        raise CaseError(f"malformed array: {a!r}")
    return c

  # ---- walking the program

  def walk(self) -> Iterator[tuple[str, dict, list[dict]]]:
    """Every op in program order (pre-order), as (path, op, enclosing ops outermost first)."""
    def rec(body, path, parents):
      if not isinstance(body, list):
        raise CaseError(f"{path}: expected an array of ops")
      for i, op in enumerate(body):
        p = f"{path}[{i}]"
        if not isinstance(op, dict) or "op" not in op:
          raise CaseError(f"{p}: expected an op object")
        yield p, op, parents
        if op["op"] in BODY_OPS:
          yield from rec(op.get("body", []), p + ".body", parents + [op])
    yield from rec(self.program, "$.program", [])

  def allocs(self) -> list[dict]:
    """Every allocation, in program order."""
    out = []
    for _, op, _ in self.walk():
      if op["op"] == "run_scoped":
        out.extend(op.get("allocs", []))
    return out

  def alloc(self, name: str) -> dict:
    for a in self.allocs():
      if a.get("name") == name:
        return a
    raise CaseError(f"no allocation named {name!r}")

  def array(self, name: str, outputs: bool = False) -> dict:
    for a in (self.outputs if outputs else self.inputs):
      if a["name"] == name:
        return a
    raise CaseError(f"no {'output' if outputs else 'input'} named {name!r}")


# ---- conditions, evaluated statically for one (CTA, thread)

_CMP = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
}


def eval_cond(cond: Any, index: dict) -> bool:
  """A condition (docs/case-format.md "Conditions") for the axis indices in `index`."""
  if isinstance(cond, bool):
    return cond
  if not isinstance(cond, dict):
    raise CaseError(f"not a condition: {cond!r}")
  if "all" in cond:
    return all(eval_cond(c, index) for c in cond["all"])
  if "any" in cond:
    return any(eval_cond(c, index) for c in cond["any"])
  if "not" in cond:
    return not eval_cond(cond["not"], index)
  ops = [k for k in _CMP if k in cond]
  if "axis" not in cond or len(ops) != 1:
    raise CaseError(f"not a condition: {cond!r}")
  if cond["axis"] not in index:
    raise CaseError(f"unknown axis in condition: {cond['axis']!r}")
  return _CMP[ops[0]](index[cond["axis"]], int(cond[ops[0]]))


def axis_indices(mesh: Mesh, coords: tuple[int, ...], thread: int) -> dict:
  """Axis name -> index for one CTA (coords along the Pallas cluster axes) and Pallas thread."""
  index = {}
  for name, c in zip(mesh.cluster_names, coords):
    if isinstance(name, str):
      index[name] = c
  if mesh.thread_name is not None:
    index[mesh.thread_name] = thread
  return index


def executes(parents: list[dict], index: dict) -> bool:
  """Whether an op under `parents` runs for the thread with these axis indices."""
  return all(eval_cond(p["cond"], index) for p in parents if p["op"] == "when")


# ---- written output ranges

def loop_key(name: str) -> tuple:
  """The key of a loop's index among axis indices (a tuple: no axis name is one)."""
  return ("loop", name)


def carry_key(name: str) -> tuple:
  """The key of a loop-carried value among a translation's refs and loop indices (a tuple: no
  ref name is one): inside the loop's body and its `next`, the trip's incoming carry (the body
  function's argument); in the ops after the loop (the same body and those nested in it), the
  loop's result."""
  return ("carry", name)


# A loop's `carry` object (docs/case-format.md "Loop-carried values").
CARRY_FIELDS = ("name", "dtype", "shape", "init", "next")


def loop_carry(op: dict, path: str = "$") -> dict | None:
  """A loop's `carry` (None: absent or null, a loop that carries nothing): an object of exactly
  CARRY_FIELDS, `name` an identifier, `dtype` a name, `shape` a list of positive integers, `init`
  and `next` vector values (checked where they are read). Anything else is a CaseError naming
  the field."""
  c = op.get("carry")
  if c is None:
    return None
  p = f"{path}.carry"
  if not isinstance(c, dict) or set(c) != set(CARRY_FIELDS):
    raise CaseError(f"{p}: expected {{\"name\", \"dtype\", \"shape\", \"init\", \"next\"}}, "
                    f"got {c!r}")
  if not isinstance(c["name"], str) or not c["name"].isidentifier():
    raise CaseError(f"{p}.name: expected an identifier, got {c['name']!r}")
  if not isinstance(c["dtype"], str):
    raise CaseError(f"{p}.dtype: expected a dtype name, got {c['dtype']!r}")
  shape = c["shape"]
  if not isinstance(shape, list) or not shape or not all(
      isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape):
    raise CaseError(f"{p}.shape: expected a list of positive integers, got {shape!r}")
  return c


def carry_leaf(arg: Any, path: str) -> str:
  """A vector value's {"carry": name} -> the name (a CaseError naming the node for anything but
  a string)."""
  if not isinstance(arg, str):
    raise CaseError(f"{path}.carry: expected the name of a loop's carry, got {arg!r}")
  return arg


def rem(v: int, k: int) -> int:
  """lax.rem(v, k): the remainder truncated toward zero (its sign is v's), not Python's %."""
  r = abs(v) % k
  return -r if v < 0 else r


def _term_value(e: dict, axes: dict) -> int:
  """The index a term names: axes[e["axis"]], or the loop's under loop_key(e["loop"])."""
  if "loop" in e:
    key = loop_key(e["loop"])
    if key not in axes:
      raise CaseError(f"no enclosing loop has the index {e['loop']!r}")
    return axes[key]
  if e.get("axis") not in axes:
    raise CaseError(f"unknown axis {e.get('axis')!r} in a dynamic index")
  return axes[e["axis"]]


def plus_terms(e: dict) -> list:
  """The `plus` terms of a dynamic index ([] without them): each {"axis"|"loop", "mul"}."""
  terms = e.get("plus")
  if terms is None:
    return []
  if not isinstance(terms, list) or not all(
      isinstance(t, dict) and ("axis" in t) != ("loop" in t) for t in terms):
    raise CaseError(f"a dynamic index's plus is a list of {{\"axis\" or \"loop\", \"mul\"}} "
                    f"terms: {e!r}")
  return terms


def dynamic_value(e: dict, axes: dict) -> int:
  """{"axis", "mul", "add"} or {"loop", "mul", "add"} for the thread whose axis indices (and
  enclosing loops' indices, under loop_key) are `axes`, plus each `plus` term's index * its mul;
  with `"mod": k`, lax.rem of that by k."""
  v = _term_value(e, axes) * int(e.get("mul", 1)) + int(e.get("add", 0))
  for t in plus_terms(e):
    v += _term_value(t, axes) * int(t.get("mul", 1))
  if e.get("mod") is not None:
    k = int(e["mod"])
    if k < 1:
      raise CaseError(f"a dynamic index's mod must be >= 1: {e!r}")
    v = rem(v, k)
  return v


def is_slot(e: Any) -> bool:
  """A loop slot: an SMEM ref's first index or a barrier's index that is {"loop": NAME, "mul",
  "add", "mod"} (`smem.at[i % 2]`, `bars.at[i % 2]`) rather than a static integer."""
  return isinstance(e, dict) and "loop" in e


def slot_value(e: Any, loops: dict) -> int:
  """An SMEM or barrier index (a static integer or a loop slot) for the enclosing loops' indices
  `loops` (loop_key(NAME) -> index)."""
  if is_slot(e):
    if "plus" in e:
      raise CaseError(f"a slot reads one loop index, no sum (no \"plus\"): {e!r}")
    return dynamic_value(e, loops)
  if isinstance(e, bool) or not isinstance(e, int):
    raise CaseError(f"an SMEM or barrier index is an integer or a loop slot, got {e!r}")
  return e


def slice_ranges(shape, index, axes=None) -> list[tuple[int, int]]:
  """Row-major element ranges [begin, end) covered by `ref.at[index]`: static entries, ":",
  and dynamic integer indices and slice starts resolved with `axes` (axis name -> index, and
  loop_key(NAME) -> a loop's index)."""
  shape = [int(d) for d in shape]
  per_dim = []
  for d, dim in enumerate(shape):
    if d < len(index):
      e = index[d]
      if isinstance(e, bool):
        raise CaseError(f"not an index entry: {e!r}")
      if isinstance(e, int):
        per_dim.append((e, 1))
      elif e == ":":
        per_dim.append((0, dim))
      elif isinstance(e, dict) and ("axis" in e or "loop" in e) and axes is not None:
        per_dim.append((dynamic_value(e, axes), 1))
      elif isinstance(e, dict) and isinstance(e.get("start"), int):
        per_dim.append((int(e["start"]), int(e["size"])))
      elif isinstance(e, dict) and isinstance(e.get("start"), dict) and axes is not None:
        per_dim.append((dynamic_value(e["start"], axes), int(e["size"])))
      else:
        raise CaseError(f"copy_smem_to_gmem takes static index entries, got {e!r}")
    else:
      per_dim.append((0, dim))
  # The trailing dims taken whole form contiguous runs; merge them.
  strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
  k = len(shape)
  while k > 0 and per_dim[k - 1] == (0, shape[k - 1]):
    k -= 1
  if k == 0:
    return [(0, math.prod(shape))]
  run = per_dim[k - 1][1] * strides[k - 1]
  outer = [range(s, s + n) for s, n in per_dim[:k - 1]]
  ranges = []
  for idx in itertools.product(*outer):
    base = sum(i * strides[d] for d, i in enumerate(idx)) + per_dim[k - 1][0] * strides[k - 1]
    ranges.append((base, base + run))
  return ranges


def merge_ranges(ranges) -> list[list[int]]:
  out: list[list[int]] = []
  for b, e in sorted(ranges):
    if out and b <= out[-1][1]:
      out[-1][1] = max(out[-1][1], e)
    else:
      out.append([b, e])
  return out


def nd_loop_params(op: dict, path: str = "$") -> tuple:
  """An nd_loop's (grid, collective axes as JAX takes them (a name, or a tuple for an array),
  tiling (a tuple, or None), index names (one per grid dim, None for an unnamed one), local index
  name (or None)) (docs/case-format.md "nd_loop"); a CaseError naming the field for anything
  malformed (the C++ parser is the strict one)."""
  grid = op.get("grid")
  if not isinstance(grid, list) or not 1 <= len(grid) <= 4 or not all(
      isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in grid):
    raise CaseError(f"{path}.grid: expected 1 to 4 integers >= 1, got {grid!r}")
  axes = op.get("collective_axes")
  if isinstance(axes, str):
    jaxes = axes
  elif isinstance(axes, list) and axes and all(isinstance(a, str) for a in axes):
    jaxes = tuple(axes)
  else:
    raise CaseError(f"{path}.collective_axes: expected an axis name or an array of them, "
                    f"got {axes!r}")
  tiling = op.get("tiling")
  if tiling is not None:
    if not isinstance(tiling, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) for d in tiling):
      raise CaseError(f"{path}.tiling: expected an array of integers, got {tiling!r}")
    tiling = tuple(tiling)
  index = op.get("index")
  if index is None:
    index = [None] * len(grid)
  if not isinstance(index, list) or len(index) != len(grid) or not all(
      n is None or (isinstance(n, str) and n.isidentifier()) for n in index):
    raise CaseError(f"{path}.index: expected one identifier (or null) per grid dim, "
                    f"got {index!r}")
  local = op.get("local_index")
  if local is not None and not (isinstance(local, str) and local.isidentifier()):
    raise CaseError(f"{path}.local_index: expected an identifier, got {local!r}")
  return tuple(grid), jaxes, tiling, list(index), local


def axis_size(mesh: "Mesh", name: str) -> int:
  """The size of a cluster axis or of the thread axis (lax.axis_size)."""
  for n, d in zip(mesh.cluster_names, mesh.cluster):
    if n == name:
      return int(d)
  if mesh.thread_name is not None and name == mesh.thread_name:
    return mesh.threads()
  raise CaseError(f"an nd_loop's collective axis {name!r} is no cluster axis nor the thread axis "
                  "of the mesh")


def nd_loop_steps(op: dict, mesh: "Mesh", axes: dict) -> list[tuple[int, tuple]]:
  """What plgpu.nd_loop gives the thread with these axis indices (jax/_src/pallas/mosaic_gpu/
  helpers.py): [(t, index)] for each of its trips t, S = lax.axis_size(collective_axes) and
  a = lax.axis_index(collective_axes) (row-major over the axes): G // S + (a < G % S) trips
  (G the grid's size), trip t taking step t * S + a unravelled over the grid, or with a tiling over
  (*grid / tiling, *tiling), index[d] = sub[d] + tile[d] * tiling[d]."""
  grid, jaxes, tiling, _, _ = nd_loop_params(op)
  names = (jaxes,) if isinstance(jaxes, str) else jaxes
  size, a = 1, 0
  for n in names:
    s = axis_size(mesh, n)
    if n not in axes:
      raise CaseError(f"unknown axis {n!r} in an nd_loop's collective_axes")
    size, a = size * s, a * s + axes[n]
  full = grid
  if tiling:
    if len(tiling) != len(grid) or any(t < 1 or g % t for g, t in zip(grid, tiling)):
      return []  # JAX raises at trace: nothing is written
    full = tuple(g // t for g, t in zip(grid, tiling)) + tiling
  total = math.prod(full)
  out = []
  for t in range(total // size + (1 if a < total % size else 0)):
    step, digits = t * size + a, []
    for d in reversed(full):
      digits.append(step % d)
      step //= d
    digits.reverse()
    if tiling:
      n = len(grid)
      digits = [digits[n + d] + digits[d] * tiling[d] for d in range(n)]
    out.append((t, tuple(digits)))
  return out


def loop_indices(parents: list[dict], mesh: "Mesh | None" = None,
                 axes: dict | None = None) -> list[dict]:
  """Every binding of the indices of the loops around an op (loop_key(NAME) -> 0..n-1): one
  empty binding when no enclosing loop has an `index`. An nd_loop's (its `index` names and its
  `local_index`, for the thread whose axis indices are `axes` in `mesh`: nd_loop_steps) take only
  the thread's own trips: none, when it runs none."""
  out = [{}]
  for p in parents:
    if p["op"] == "loop" and p.get("index") is not None:
      out = [{**b, loop_key(p["index"]): i} for b in out
             for i in range(int(p["trip_count"]))]
    elif p["op"] == "nd_loop":
      if mesh is None or axes is None:
        raise CaseError("an nd_loop's indices need the thread's axis indices")
      _, _, _, names, local = nd_loop_params(p)
      trips = []
      for t, index in nd_loop_steps(p, mesh, axes):
        b = {loop_key(n): v for n, v in zip(names, index) if n is not None}
        if local is not None:
          b[loop_key(local)] = t
        trips.append(b)
      out = [{**b, **tb} for b in out for tb in trips]
  return out


def written_ranges(case: Case) -> dict[str, list[list[int]]]:
  """Output name -> element ranges that some executed copy_smem_to_gmem or vector_store into an
  output writes (a store in a loop whose index it uses: its range for every trip; a vector_store
  into SMEM writes none). A reducing store (`reduction_op`) writes
  nothing of its own: it combines with the element's prior contents, so an element only
  reductions reach holds op(uninitialised, src), undefined; an element a plain store also writes
  is written by that store. A store with a `predicate` writes only for the threads where it holds
  (as under a `when`: the copy is issued there only)."""
  ranges: dict[str, list] = {o["name"]: [] for o in case.outputs}
  for path, op, parents in case.walk():
    if op["op"] not in ("copy_smem_to_gmem", "vector_store") or \
        reduction_op(op, path) is not None or "output" not in op.get("dst", {}):
      continue  # a vector_store into SMEM ({"alloc"}) writes no output
    dst = op["dst"]
    out = case.array(dst["output"], outputs=True)
    for coords in case.mesh.cta_coords():
      for t in range(case.mesh.threads()):
        axes = axis_indices(case.mesh, coords, t)
        if executes(parents, axes) and (op.get("predicate") is None
                                        or eval_cond(op["predicate"], axes)):
          for loops in loop_indices(parents, case.mesh, axes):
            ranges[out["name"]].extend(slice_ranges(out["shape"], dst.get("index", []),
                                                    {**axes, **loops}))
  return {k: merge_ranges(v) for k, v in ranges.items()}


def grid_reducible(raw: dict) -> bool:
  """Whether a grid of ones runs the case as its own grid would: no op names a grid axis (as a
  collective axis, whose size then becomes 1 and changes a partitioned copy's shapes, or in a
  condition or an index). A 120-s campaign (2026-12-04) found the adapter's grid of ones raising
  copy.src_shape at trace where JAX, on the case's own grid, raises an interpret-stage error."""
  names = raw.get("mesh", {}).get("grid_names", [])
  flat = []
  for n in names:
    flat.extend(n if isinstance(n, list) else [n])
  program = json.dumps(_without_loop_names(raw.get("program", [])))
  return not any(json.dumps(n) in program for n in flat)


def _without_loop_names(j):
  """The program without the names of loop indices (a loop's `index`, an nd_loop's `index` and
  `local_index`, a dynamic entry's `loop`) and of loop-carried values (a carry's `name`, a
  `{"carry": name}` leaf): they name no mesh axis, so a grid axis of the same name is not used by
  them."""
  if isinstance(j, list):
    return [_without_loop_names(x) for x in j]
  if isinstance(j, dict):
    is_loop = j.get("op") in LOOP_OPS
    out = {}
    for k, v in j.items():
      if k == "loop" or (is_loop and k in ("index", "local_index")) or \
          (k == "carry" and isinstance(v, str)):
        continue
      if is_loop and k == "carry" and isinstance(v, dict):
        v = {ck: cv for ck, cv in v.items() if ck != "name"}
      out[k] = _without_loop_names(v)
    return out
  return j
