#!/usr/bin/env python3
"""A Pallas Mosaic GPU kernel in a Python file -> a collfuzz case (`collfuzz import`, docs/python.md).

    cfjax_import.py FILE NAME ARCH PROFILE JAX    answers one JSON line on stdout:
        {"case": CASE, "warnings": [...]}  or  {"error": "...", "code": 2|3}

FILE is loaded as a module (not as __main__). NAME (empty: `collfuzz_case`) names a top-level
function of it that takes no arguments and returns `(kernel, args)` or `(kernel, args, fills)`:
`kernel` is what `plgpu.kernel(...)` or `pl.pallas_call(...)` returned (or any function that calls
exactly one such kernel), `args` the arrays (or `jax.ShapeDtypeStruct`s) it is called with, and
`fills` (optional) one collfuzz fill per argument (`{"pattern": "iota"}`, ...; None: inferred). The
scripts `collfuzz repro` writes define `collfuzz_case` this way.

The kernel is traced (`jax.make_jaxpr`, nothing is compiled or run), the kernel call's equation is
found in the jaxpr, and its body's equations are walked: `run_scoped` (its allocations and
`collective_axes`), `copy_gmem_to_smem`, `copy_smem_to_gmem` (with its `commit_smem` and
`wait_smem_to_gmem`), `barrier_arrive`, `barrier_wait`, `cond` from `pl.when`, `scan` from a
`lax.fori_loop` with a static trip count, and the scalar arithmetic of `lax.axis_index(...) * m + a`
and comparisons that indices and conditions are made of. Anything else is refused with the
primitive's name and the user's source line (the equation's source_info), exit code 2.

Fills: an argument whose values are a collfuzz fill (iota, or a constant) gets it; otherwise the
fill given in `fills`, else the case's default (iota) with a warning.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DEFAULT_NAME = "collfuzz_case"


class ImportRefused(Exception):
  """The file or its kernel holds something a case cannot (the message names it and where)."""


# ---- where an equation comes from

def _user_line(eqn, user_file: str) -> str:
  """'FILE:LINE' of the user's frame that made `eqn` (innermost frame in the user's file)."""
  try:
    from jax._src import source_info_util  # pylint: disable=import-outside-toplevel
    frames = list(source_info_util.user_frames(eqn.source_info.traceback))
    for fr in frames:
      if os.path.abspath(fr.file_name) == os.path.abspath(user_file):
        return f"{fr.file_name}:{fr.start_line}"
    if frames:
      return f"{frames[0].file_name}:{frames[0].start_line}"
  except Exception:  # pylint: disable=broad-except
    pass
  return "an unknown line"


# ---- symbolic values of the kernel body

class Ref:
  """A ref of the kernel: an input, an output or an allocation, by its case name."""

  def __init__(self, kind: str, name: str, shape: tuple, alloc: dict | None = None):
    self.kind = kind
    self.name = name
    self.shape = tuple(shape)
    self.alloc = alloc


class Axis:
  """lax.axis_index(axis) * mul + add."""

  def __init__(self, axis, mul=1, add=0):
    self.axis = axis
    self.mul = mul
    self.add = add

  def entry(self) -> dict:
    e = {"axis": self.axis}
    if self.mul != 1:
      e["mul"] = self.mul
    if self.add != 0:
      e["add"] = self.add
    return e


class Cond:
  """A case condition (JSON), as the jaxpr computed it."""

  def __init__(self, j):
    self.j = j


class Unknown:
  """A value the importer does not follow (used by an op, it is refused then)."""

  def __init__(self, what: str, where: str):
    self.what = what
    self.where = where


_CMP = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}
_FLIP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _axis_name_json(a):
  if isinstance(a, tuple):
    return list(a)
  return a


def _axis_names_json(axes) -> list:
  if axes is None:
    return None
  if isinstance(axes, (str, tuple)) and not isinstance(axes, tuple):
    axes = (axes,)
  return [_axis_name_json(a) for a in axes]


class Importer:

  def __init__(self, user_file: str):
    self.user_file = user_file
    self.warnings: list[str] = []
    self.used_names: set[str] = set()
    self.counters: dict[str, int] = {}
    # plgpu.warp_map names its WarpMesh axis with a fresh object(): such an axis gets a name.
    self.axis_names: dict[int, str] = {}

  def axis_name(self, axis) -> str:
    if isinstance(axis, str):
      return axis
    if id(axis) not in self.axis_names:
      self.axis_names[id(axis)] = self.fresh("warp", "warp")
    return self.axis_names[id(axis)]

  # -- names

  def fresh(self, prefix: str, wanted: str | None = None) -> str:
    if wanted and wanted.isidentifier() and wanted not in self.used_names and len(wanted) <= 64:
      self.used_names.add(wanted)
      return wanted
    while True:
      k = self.counters.get(prefix, 0)
      self.counters[prefix] = k + 1
      name = f"{prefix}{k}"
      if name not in self.used_names:
        self.used_names.add(name)
        return name

  # -- values

  def refuse(self, eqn, what: str):
    raise ImportRefused(f"{_user_line(eqn, self.user_file)}: {what}")

  @staticmethod
  def literal(v):
    """A jaxpr Literal's (or numpy scalar's) Python value, or None."""
    from jax._src import core  # pylint: disable=import-outside-toplevel
    if isinstance(v, core.Literal):
      v = v.val
    try:
      import numpy as np  # pylint: disable=import-outside-toplevel
      a = np.asarray(v)
      if a.shape == ():
        if a.dtype == np.bool_:
          return bool(a)
        if np.issubdtype(a.dtype, np.integer):
          return int(a)
    except Exception:  # pylint: disable=broad-except
      return None
    return None

  def value(self, env: dict, v):
    from jax._src import core  # pylint: disable=import-outside-toplevel
    if isinstance(v, core.Literal):
      return self.literal(v)
    return env.get(v)

  def as_int(self, env, v, eqn, what: str):
    x = self.value(env, v)
    if isinstance(x, bool) or not isinstance(x, int):
      self.refuse(eqn, f"{what}: not a static integer ({self.describe(x)})")
    return x

  @staticmethod
  def describe(x) -> str:
    if isinstance(x, Unknown):
      return f"it comes from {x.what} at {x.where}"
    if isinstance(x, Axis):
      return "a lax.axis_index expression"
    if isinstance(x, Cond):
      return "a condition"
    return repr(x)

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
    elif name in ("mul", "add", "sub") and len(ins) == 2:
      a, b = ins
      if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        out = {"mul": a * b, "add": a + b, "sub": a - b}[name]
      elif name == "mul" and isinstance(a, Axis) and isinstance(b, int) and a.add == 0:
        out = Axis(a.axis, a.mul * b, 0)
      elif name == "mul" and isinstance(b, Axis) and isinstance(a, int) and b.add == 0:
        out = Axis(b.axis, b.mul * a, 0)
      elif name == "add" and isinstance(a, Axis) and isinstance(b, int):
        out = Axis(a.axis, a.mul, a.add + b)
      elif name == "add" and isinstance(b, Axis) and isinstance(a, int):
        out = Axis(b.axis, b.mul, b.add + a)
      elif name == "sub" and isinstance(a, Axis) and isinstance(b, int):
        out = Axis(a.axis, a.mul, a.add - b)
      else:
        out = Unknown(f"`{name}` of {self.describe(a)} and {self.describe(b)}",
                      _user_line(eqn, self.user_file))
    elif name in _CMP and len(ins) == 2:
      a, b = ins
      op = name
      if isinstance(b, Axis) and isinstance(a, int):
        a, b, op = b, a, _FLIP[name]
      if isinstance(a, Axis) and isinstance(b, int) and a.mul == 1 and a.add == 0:
        out = Cond({"axis": _axis_name_json(a.axis), op: b})
      elif isinstance(a, int) and isinstance(b, int):
        out = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
               "ge": a >= b}[name]
      else:
        out = Unknown(f"the comparison `{name}` of {self.describe(ins[0])} and "
                      f"{self.describe(ins[1])} (a condition compares lax.axis_index(axis) "
                      "with an integer)", _user_line(eqn, self.user_file))
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
                      _user_line(eqn, self.user_file))
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
        out = Unknown(f"`not` of {self.describe(x)}", _user_line(eqn, self.user_file))
    else:
      return False
    for o in eqn.outvars:
      env[o] = out
    return True

  # -- indices

  def ndindexer(self, env, transforms, ref: Ref, eqn, what: str):
    """The transforms of a ref use -> one NDIndexer's entries (None: no transform)."""
    from jax._src.state import indexing  # pylint: disable=import-outside-toplevel
    if not transforms:
      return None
    transforms = list(transforms)
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
    self.refuse(eqn, f"{what}: an index that is {self.describe(x)} (an index is an integer or "
                "lax.axis_index(axis) * m + a)")
    return None

  def gmem_index(self, env, transforms, ref: Ref, eqn, what: str):
    from jax._src.state import indexing  # pylint: disable=import-outside-toplevel
    indices = self.ndindexer(env, transforms, ref, eqn, what)
    if indices is None:
      return []
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
          out.append({"start": start.entry(), "size": size})
      else:
        x = self.index_value(env, ix, eqn, what)
        out.append(x.entry() if isinstance(x, Axis) else x)
    while out and out[-1] == ":":
      out.pop()
    return out

  def static_index(self, env, transforms, ref: Ref, eqn, what: str):
    """An SMEM ref's index: integers on leading dims (a case indexes SMEM no other way)."""
    entries = self.gmem_index(env, transforms, ref, eqn, what)
    for e in entries:
      if isinstance(e, bool) or not isinstance(e, int):
        self.refuse(eqn, f"{what}: `{ref.name}` indexed with {e!r}; a case indexes SMEM with "
                    "static integers on its leading dims")
    return entries

  def barrier_use(self, env, ref, transforms, eqn, what: str) -> dict:
    if not isinstance(ref, Ref) or ref.kind != "alloc" or \
        ref.alloc["kind"] not in ("barrier", "cluster_barrier"):
      self.refuse(eqn, f"{what}: the barrier is not a barrier allocation in scope")
    use = {"alloc": ref.name}
    entries = self.gmem_index(env, transforms, ref, eqn, what)
    if entries:
      if len(entries) != 1 or isinstance(entries[0], bool) or not isinstance(entries[0], int):
        self.refuse(eqn, f"{what}: barrier `{ref.name}` indexed with {entries!r}; a case "
                    "indexes a barrier array with one static integer")
      use["index"] = entries[0]
    elif isinstance(ref.alloc.get("num_barriers"), int) and transforms:
      use["index"] = 0  # .at[:] of a 1-barrier array
    return use

  # -- allocations

  def alloc_of(self, aval, eqn, wanted: str | None) -> dict:
    from jax._src.pallas.mosaic_gpu import core as gpu_core  # pylint: disable=import-outside-toplevel
    inner = getattr(aval, "inner_aval", aval)
    dtype = getattr(inner, "dtype", None)
    shape = tuple(getattr(inner, "shape", ()))
    space = str(getattr(aval, "memory_space", ""))
    if isinstance(dtype, gpu_core.BarrierType):
      a = {"name": self.fresh("bar", wanted), "kind": "barrier",
           "num_arrivals": int(dtype.num_arrivals)}
    elif isinstance(dtype, gpu_core.ClusterBarrierType):
      a = {"name": self.fresh("cbar", wanted), "kind": "cluster_barrier",
           "collective_axes": _axis_names_json(dtype.collective_axes),
           "num_arrivals": int(dtype.num_arrivals)}
      if dtype.leader_tracked:
        a["leader_tracked"] = True
    elif "smem" in space.lower() and dtype is not None and not hasattr(dtype, "num_arrivals"):
      if not shape:
        self.refuse(eqn, "a shape-() SMEM allocation (a case's SMEM allocations have rank 1 or more)")
      return {"name": self.fresh("smem", wanted), "kind": "smem", "shape": list(shape),
              "dtype": str(dtype)}
    elif str(dtype) in ("semaphore", "barrier_semaphore"):
      return {"name": self.fresh("sem", wanted), "kind": "semaphore",
              "type": "regular" if str(dtype) == "semaphore" else "barrier",
              "shape": list(shape)}
    elif "gmem" in space.lower():
      return {"name": self.fresh("gmem", wanted), "kind": "gmem", "shape": list(shape),
              "dtype": str(dtype)}
    elif "regs" in space.lower():
      return {"name": self.fresh("acc", wanted), "kind": "acc", "shape": list(shape),
              "dtype": str(dtype)}
    elif "tmem" in space.lower():
      return {"name": self.fresh("tmem", wanted), "kind": "tmem", "shape": list(shape),
              "dtype": str(dtype), "collective": bool(getattr(aval, "collective", False))}
    else:
      self.refuse(eqn, f"an allocation of type {aval} (a case allocates smem, barrier, "
                  "cluster_barrier, acc, gmem, semaphore and tmem)")
      return {}
    if dtype.orders_tensor_core:
      a["orders_tensor_core"] = True
    if shape == ():
      a["num_barriers"] = []
    elif len(shape) == 1:
      if shape[0] != 1:
        a["num_barriers"] = int(shape[0])
    else:
      self.refuse(eqn, f"a barrier array of shape {shape} (a case's barrier arrays are 1-d)")
    return a

  # -- the body

  def walk(self, jaxpr, env: dict) -> list:
    ops = []
    for eqn in jaxpr.eqns:
      self.eqn(eqn, env, ops)
    return ops

  def eqn(self, eqn, env: dict, ops: list):
    name = eqn.primitive.name
    if self.scalar_eqn(eqn, env):
      return
    if name == "run_scoped":
      ops.append(self.run_scoped(eqn, env))
    elif name == "copy_gmem_to_smem":
      ops.append(self.copy_gmem_to_smem(eqn, env))
    elif name == "copy_smem_to_gmem":
      ops.append(self.copy_smem_to_gmem(eqn, env))
    elif name == "commit_smem":
      pass  # part of copy_smem_to_gmem (the case's op is commit, copy, wait)
    elif name == "wait_smem_to_gmem":
      if eqn.params.get("n", 0) != 0:
        self.refuse(eqn, f"wait_smem_to_gmem({eqn.params.get('n')}) (a case waits for every "
                    "SMEM-to-GMEM copy at once: 0)")
    elif name in ("barrier_arrive", "barrier_wait"):
      barrier, *flat = eqn.invars
      if eqn.params.get("has_user_predicate"):
        self.refuse(eqn, f"{name} with a predicate (a case guards an arrival with `when`)")
      transforms = eqn.params["transforms_treedef"].unflatten(flat)
      ops.append({"op": name, "barrier": self.barrier_use(env, env.get(barrier), transforms,
                                                          eqn, name)})
    elif name == "cond":
      ops.append(self.when(eqn, env))
    elif name == "scan":
      ops.append(self.loop(eqn, env))
    elif name == "mpmd_map":
      ops.append(self.warp_map(eqn, env))
    elif name in ("pjit", "closed_call", "core_call", "jit"):
      sub = eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr")
      inner = getattr(sub, "jaxpr", sub)
      sub_env = dict(zip(inner.constvars, getattr(sub, "consts", [])))
      for iv, ov in zip(inner.invars, eqn.invars):
        sub_env[iv] = self.value(env, ov)
      ops.extend(self.walk(inner, sub_env))
      for outer, o in zip(eqn.outvars, inner.outvars):
        env[outer] = self.value(sub_env, o)
    elif name == "while":
      self.refuse(eqn, "unsupported primitive `while`: a loop whose trip count is not static (a "
                  "case's loop is a lax.fori_loop with Python int bounds)")
    else:
      self.refuse(eqn, f"unsupported primitive `{name}` (a case holds run_scoped, "
                  "copy_gmem_to_smem, copy_smem_to_gmem, barrier_arrive, barrier_wait, "
                  "pl.when, lax.fori_loop with a static trip count, pl.core_map over "
                  "plgpu.WarpMesh and lax.axis_index arithmetic)")

  def warp_map(self, eqn, env: dict) -> dict:
    """pl.core_map(plgpu.WarpMesh(axis_name=A)) inside a kernel -> a case's warp_map."""
    p = eqn.params
    jaxprs, meshes = p.get("jaxprs", ()), p.get("meshes", ())
    if len(jaxprs) != 1 or len(meshes) != 1 or type(meshes[0]).__name__ != "WarpMesh":
      self.refuse(eqn, "a kernel inside the kernel that is not pl.core_map(plgpu.WarpMesh(...)) "
                  "(a case nests only warp_map)")
    body = jaxprs[0]
    inner = getattr(body, "jaxpr", body)
    sub = dict(env)
    for cv, c in zip(inner.constvars, getattr(body, "consts", [])):
      sub[cv] = c
    for iv, ov in zip(inner.invars, eqn.invars):
      sub[iv] = self.value(env, ov)
    axis = self.axis_name(meshes[0].axis_name)
    return {"op": "warp_map", "axis": axis, "body": self.walk(inner, sub)}

  def run_scoped(self, eqn, env: dict) -> dict:
    jaxpr = eqn.params["jaxpr"]
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    if any(t for t in eqn.params.get("ref_transforms", ()) if t):
      self.refuse(eqn, "run_scoped of transformed allocation types (tiling, swizzle)")
    sub = dict(env)
    for cv, ov in zip(inner.constvars, eqn.invars):
      sub[cv] = self.value(env, ov)
    names = list(getattr(getattr(inner, "debug_info", None), "arg_names", None) or [])
    allocs = []
    for k, v in enumerate(inner.invars):
      wanted = names[k] if k < len(names) else None
      a = self.alloc_of(v.aval, eqn, wanted)
      allocs.append(a)
      sub[v] = Ref("alloc", a["name"], a.get("shape", ()), a)
    op = {"op": "run_scoped"}
    axes = eqn.params.get("collective_axes", ())
    if axes:
      op["collective_axes"] = _axis_names_json(axes)
    op["allocs"] = allocs
    op["body"] = self.walk(inner, sub)
    return op

  def copy_gmem_to_smem(self, eqn, env: dict) -> dict:
    p = eqn.params
    args = list(eqn.invars)
    src, dst = args[0], args[1]
    rest = args[2:]
    barrier = None
    if p["has_barrier"]:
      barrier, rest = rest[0], rest[1:]
    n_src = p["src_transforms_treedef"].num_leaves
    n_dst = p["dst_transforms_treedef"].num_leaves
    n_bar = p["barrier_transforms_treedef"].num_leaves
    src_t = p["src_transforms_treedef"].unflatten(rest[:n_src])
    dst_t = p["dst_transforms_treedef"].unflatten(rest[n_src:n_src + n_dst])
    bar_t = p["barrier_transforms_treedef"].unflatten(rest[n_src + n_dst:n_src + n_dst + n_bar])
    pred = rest[n_src + n_dst + n_bar:]
    s, d = env.get(src), env.get(dst)
    if not isinstance(s, Ref) or s.kind != "input":
      self.refuse(eqn, "copy_gmem_to_smem from a ref that is not a kernel input (a case "
                   "copies from an input)")
    if not isinstance(d, Ref) or d.kind != "alloc" or d.alloc["kind"] != "smem":
      self.refuse(eqn, "copy_gmem_to_smem to a ref that is not an SMEM allocation in scope")
    op = {"op": "copy_gmem_to_smem",
          "src": {"input": s.name}, "dst": {"alloc": d.name}}
    si = self.gmem_index(env, src_t, s, eqn, "copy_gmem_to_smem's source")
    if si:
      op["src"]["index"] = si
    di = self.static_index(env, dst_t, d, eqn, "copy_gmem_to_smem's destination")
    if di:
      op["dst"]["index"] = di
    if barrier is not None:
      op["barrier"] = self.barrier_use(env, env.get(barrier), bar_t, eqn,
                                       "copy_gmem_to_smem's barrier")
    if p.get("collective_axes") is not None:
      op["collective_axes"] = _axis_names_json(p["collective_axes"])
    lt = p.get("leader_tracked")
    if lt is not None:
      kind = type(lt).__name__.lower()
      axis = getattr(lt, "axis", None)
      if axis is None and "partitioned" not in str(lt).lower():
        op["leader_tracked"] = "replicated"
      else:
        op["leader_tracked"] = {"partitioned": int(axis)}
      del kind
    if p.get("oob_mode") is not None:
      op["oob_mode"] = p["oob_mode"].name.lower()
    if p.get("has_user_predicate"):
      x = self.value(env, pred[0])
      if isinstance(x, bool):
        op["predicate"] = x
      elif isinstance(x, Cond):
        op["predicate"] = x.j
      else:
        self.refuse(eqn, f"copy_gmem_to_smem's predicate is {self.describe(x)} (a predicate "
                    "is a condition on lax.axis_index)")
    return op

  def copy_smem_to_gmem(self, eqn, env: dict) -> dict:
    p = eqn.params
    if p.get("has_user_predicate"):
      self.refuse(eqn, "copy_smem_to_gmem with a predicate")
    if p.get("reduction_op") is not None:
      self.refuse(eqn, f"copy_smem_to_gmem with reduction_op={p['reduction_op']}")
    src, dst, *rest = eqn.invars
    n_src = p["src_transforms_treedef"].num_leaves
    src_t = p["src_transforms_treedef"].unflatten(rest[:n_src])
    dst_t = p["dst_transforms_treedef"].unflatten(rest[n_src:])
    s, d = env.get(src), env.get(dst)
    if not isinstance(s, Ref) or s.kind != "alloc" or s.alloc["kind"] != "smem":
      self.refuse(eqn, "copy_smem_to_gmem from a ref that is not an SMEM allocation")
    if not isinstance(d, Ref) or d.kind != "output":
      self.refuse(eqn, "copy_smem_to_gmem to a ref that is not a kernel output")
    op = {"op": "copy_smem_to_gmem", "src": {"alloc": s.name}, "dst": {"output": d.name}}
    si = self.static_index(env, src_t, s, eqn, "copy_smem_to_gmem's source")
    if si:
      op["src"]["index"] = si
    di = self.gmem_index(env, dst_t, d, eqn, "copy_smem_to_gmem's destination")
    if di:
      op["dst"]["index"] = di
    return op

  def when(self, eqn, env: dict) -> dict:
    branches = eqn.params["branches"]
    index, *operands = eqn.invars
    c = self.value(env, index)
    if len(branches) != 2 or (branches[0].jaxpr.eqns):
      self.refuse(eqn, "a lax.cond with an else branch (a case has pl.when only)")
    if isinstance(c, Cond):
      cond = c.j
    elif isinstance(c, bool):
      cond = c
    elif isinstance(c, int):
      cond = bool(c)
    else:
      self.refuse(eqn, f"pl.when of {self.describe(c)} (a condition compares "
                  "lax.axis_index(axis) with an integer)")
    true = branches[1]
    sub = dict(env)
    sub.update(zip(true.jaxpr.constvars, true.consts))
    for iv, ov in zip(true.jaxpr.invars, operands):
      sub[iv] = self.value(env, ov)
    return {"op": "when", "cond": cond, "body": self.walk(true.jaxpr, sub)}

  def loop(self, eqn, env: dict) -> dict:
    p = eqn.params
    if p.get("reverse"):
      self.refuse(eqn, "a reversed scan")
    body = p["jaxpr"]
    if "num_consts" in p:
      n_consts = p["num_consts"]
    else:  # JAX 0.11: ft_in is a FlatTree of (consts, carry, xs)
      n_consts = len(p["ft_in"].unpack()[0])
    consts = list(getattr(body, "consts", []))
    body_jaxpr = getattr(body, "jaxpr", body)
    sub = dict(env)
    sub.update(zip(body_jaxpr.constvars, consts))
    for k, (iv, ov) in enumerate(zip(body_jaxpr.invars, eqn.invars)):
      if k < n_consts:
        sub[iv] = self.value(env, ov)
      else:
        sub[iv] = Unknown("the loop's index or carry (a case's loop body has no access to them)",
                          _user_line(eqn, self.user_file))
    ops = self.walk(body_jaxpr, sub)
    return {"op": "loop", "trip_count": int(p["length"]), "body": ops}


# ---- the kernel call

_KERNEL_PRIMS = ("pallas_call", "mpmd_map")


def _find_kernel_eqns(jaxpr, out: list):
  from jax._src import core  # pylint: disable=import-outside-toplevel
  for eqn in jaxpr.eqns:
    if eqn.primitive.name in _KERNEL_PRIMS:
      out.append(eqn)
      continue
    for v in eqn.params.values():
      for j in (v if isinstance(v, (list, tuple)) else [v]):
        if isinstance(j, core.ClosedJaxpr):
          _find_kernel_eqns(j.jaxpr, out)
        elif isinstance(j, core.Jaxpr):
          _find_kernel_eqns(j, out)
  return out


def _dtype_name(dt) -> str:
  return str(dt)


def _infer_fill(arr, dtype: str):
  """A collfuzz fill whose values `arr` holds, or None."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  import cfjax_fill  # pylint: disable=import-outside-toplevel
  try:
    a = np.asarray(arr)
  except Exception:  # pylint: disable=broad-except
    return None
  if dtype not in cfjax_fill.DTYPE_BITS or a.size == 0:
    return None
  want = cfjax_fill.fill_array({"shape": list(a.shape), "dtype": dtype,
                                "fill": {"pattern": "iota"}})
  if np.array_equal(np.asarray(want).astype(np.float64), a.astype(np.float64)):
    return {"pattern": "iota"}
  flat = a.reshape(-1).astype(np.float64)
  lo, hi = cfjax_fill.value_range(dtype)
  if np.all(flat == flat[0]) and float(flat[0]).is_integer() and lo <= flat[0] <= hi:
    return {"pattern": "constant", "value": int(flat[0])}
  return None


def _axis_tuple(names):
  return [_axis_name_json(n) for n in names]


def import_kernel(file: str, name: str, arch: str, profile: str, jax_pin: str):
  imp = Importer(file)
  spec = importlib.util.spec_from_file_location("collfuzz_imported_kernel", file)
  if spec is None or spec.loader is None:
    raise ImportRefused(f"{file}: not a Python file")
  module = importlib.util.module_from_spec(spec)
  with contextlib.redirect_stdout(sys.stderr):
    try:
      spec.loader.exec_module(module)
    except Exception as e:  # pylint: disable=broad-except
      raise ImportRefused(f"{file}: loading it raised {type(e).__name__}: {e}"
                          f"{_where(e, file)}") from e
  fn_name = name or DEFAULT_NAME
  fn = getattr(module, fn_name, None)
  if fn is None or not callable(fn):
    candidates = sorted(n for n, v in vars(module).items()
                        if callable(v) and getattr(v, "__module__", None) == module.__name__
                        and not n.startswith("_"))
    raise ImportRefused(
        f"{file}: no function `{fn_name}` (FILE.py:NAME names a top-level function that takes no "
        f"arguments and returns (kernel, args) or (kernel, args, fills); the file defines: "
        f"{', '.join(candidates) or 'none'})")
  import jax  # pylint: disable=import-outside-toplevel
  with contextlib.redirect_stdout(sys.stderr):
    try:
      got = fn()
    except Exception as e:  # pylint: disable=broad-except
      raise ImportRefused(f"{file}: {fn_name}() raised {type(e).__name__}: {e}"
                          f"{_where(e, file)}") from e
  if not isinstance(got, tuple) or len(got) not in (2, 3) or not callable(got[0]):
    raise ImportRefused(f"{file}: {fn_name}() returned {type(got).__name__}; expected "
                        "(kernel, args) or (kernel, args, fills)")
  kernel, args = got[0], list(got[1])
  fills = list(got[2]) if len(got) == 3 and got[2] is not None else [None] * len(args)
  if len(fills) != len(args):
    raise ImportRefused(f"{file}: {fn_name}() returned {len(fills)} fills for {len(args)} args")
  with contextlib.redirect_stdout(sys.stderr):
    try:
      closed = jax.make_jaxpr(kernel)(*args)
    except Exception as e:  # pylint: disable=broad-except
      raise ImportRefused(f"{file}: tracing the kernel raised {type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}{_where(e, file)}") from e
  calls = _find_kernel_eqns(closed.jaxpr, [])
  if len(calls) != 1:
    raise ImportRefused(f"{file}: {fn_name}()'s kernel makes {len(calls)} Pallas kernel calls; "
                        "a case is one plgpu.kernel or pl.pallas_call")
  call = calls[0]
  return imp, build_case(imp, call, args, fills, name or os.path.splitext(os.path.basename(file))[0],
                         arch, profile, jax_pin)


def _where(e: BaseException, file: str) -> str:
  tb = traceback.extract_tb(e.__traceback__)
  for fr in reversed(tb):
    if os.path.abspath(fr.filename) == os.path.abspath(file):
      return f" (at {fr.filename}:{fr.lineno})"
  return ""


def build_case(imp: Importer, call, args, fills, name, arch, profile, jax_pin) -> dict:
  import numpy as np  # pylint: disable=import-outside-toplevel
  p = call.params
  if call.primitive.name == "mpmd_map":  # plgpu.kernel
    if len(p["jaxprs"]) != 1:
      raise ImportRefused(f"an MPMD kernel of {len(p['jaxprs'])} bodies (a case has one)")
    body, mesh_obj = p["jaxprs"][0], p["meshes"][0]
    n_out = None  # every ref after the inputs is an output (scratch_types are a run_scoped)
  else:  # pl.pallas_call
    body, mesh_obj = p["jaxpr"], p.get("mesh")
    n_out = len(p.get("out_avals", ()))
    if mesh_obj is not None:
      raise ImportRefused("a pl.pallas_call with a mesh (a case's pallas_call has a grid)")
  body = getattr(body, "jaxpr", body)
  gm = p.get("grid_mapping")
  interpret = p.get("interpret")
  cp = p.get("compiler_params")
  entry = "kernel" if call.primitive.name == "mpmd_map" else "pallas_call"
  mesh = {}
  if mesh_obj is not None:
    grid = tuple(getattr(mesh_obj, "grid", ()))
    if grid:
      mesh["grid"] = [int(d) for d in grid]
      mesh["grid_names"] = _axis_tuple(mesh_obj.grid_names)
    cluster = tuple(getattr(mesh_obj, "cluster", ()))
    if cluster:
      mesh["cluster"] = [int(d) for d in cluster]
      mesh["cluster_names"] = _axis_tuple(mesh_obj.cluster_names)
    if mesh_obj.num_threads is not None:
      mesh["num_threads"] = int(mesh_obj.num_threads)
    if mesh_obj.thread_name is not None:
      mesh["thread_name"] = mesh_obj.thread_name
  elif gm is not None:
    grid = tuple(int(d) for d in gm.grid)
    if grid:
      mesh["grid"] = list(grid)
  # semantics
  semantics = "warpgroup"
  gpu_params = None
  if isinstance(cp, dict):
    gpu_params = cp.get("mosaic_gpu")
  elif cp is not None:
    gpu_params = cp
  sem = getattr(gpu_params, "lowering_semantics", None)
  if sem is not None and "lane" in str(sem).lower():
    semantics = "lane"
  if not profile:
    profile = "interpret" if interpret not in (None, False) else "mosaic"
  target = {"arch": arch or "sm_90a", "semantics": semantics, "entry": entry, "profile": profile}
  if jax_pin:
    target["jax"] = jax_pin
  # the kernel's refs: inputs, outputs (and for pallas_call, scratch)
  invars = list(body.invars)
  n_in = len(args)
  arg_names = list(getattr(getattr(body, "debug_info", None), "arg_names", None) or [])
  inputs, outputs = [], []
  env = {}
  if n_out is None:
    n_out = len(invars) - n_in
  if len(invars) < n_in + n_out:
    raise ImportRefused(f"the kernel body takes {len(invars)} refs for {n_in} inputs and "
                        f"{n_out} outputs")
  for k, v in enumerate(invars[:n_in]):
    a = args[k]
    dtype = _dtype_name(np.dtype(a.dtype)) if not str(a.dtype).startswith("int4") else str(a.dtype)
    dtype = str(a.dtype)
    nm = imp.fresh("in", _clean_name(arg_names, k))
    spec = {"name": nm, "shape": [int(d) for d in a.shape], "dtype": dtype}
    fill = fills[k] if fills[k] is not None else _infer_fill(a, dtype)
    if fill is None:
      if not isinstance(a, jax_ShapeDtypeStruct()):
        imp.warnings.append(f"input {k} ({nm}) holds values that are not a collfuzz fill; "
                            "the case fills it with iota")
      fill = {"pattern": "iota"}
    spec["fill"] = fill
    inputs.append(spec)
    env[v] = Ref("input", nm, a.shape)
  for k, v in enumerate(invars[n_in:n_in + n_out]):
    aval = v.aval
    nm = imp.fresh("out", _clean_name(arg_names, n_in + k))
    outputs.append({"name": nm, "shape": [int(d) for d in aval.shape],
                    "dtype": str(aval.dtype)})
    env[v] = Ref("output", nm, aval.shape)
  scratch = invars[n_in + n_out:]
  program = []
  if scratch:
    # pallas_call's scratch_shapes: allocated at kernel entry, for the whole kernel, with no
    # collective axes: the same as one run_scoped around the body.
    allocs = []
    for k, v in enumerate(scratch):
      a = imp.alloc_of(v.aval, call, _clean_name(arg_names, n_in + n_out + k))
      allocs.append(a)
      env[v] = Ref("alloc", a["name"], a.get("shape", ()), a)
    program = [{"op": "run_scoped", "allocs": allocs, "body": imp.walk(body, env)}]
  else:
    program = imp.walk(body, env)
  if entry == "kernel":
    program = _unwrap_kernel_scope(program, mesh)
  case = {"format": 1, "name": name, "mesh": mesh, "target": target, "inputs": inputs}
  if outputs:
    case["outputs"] = outputs
  case["program"] = program
  return case


def jax_ShapeDtypeStruct():
  import jax  # pylint: disable=import-outside-toplevel
  return jax.ShapeDtypeStruct


def _clean_name(names, k):
  if k < len(names):
    n = names[k]
    if isinstance(n, str) and n.isidentifier():
      return n
  return None


def _unwrap_kernel_scope(program: list, mesh: dict) -> list:
  """plgpu.kernel wraps the body in run_scoped(body, *scratch_types, collective_axes=thread_name).
  Without scratch_types that scope allocates nothing: the body is the case's program. With
  scratch_types it is kept: a run_scoped whose collective_axes is the thread axis, which is what
  scratch_types is."""
  if len(program) == 1 and program[0].get("op") == "run_scoped":
    top = program[0]
    thread = mesh.get("thread_name")
    axes = top.get("collective_axes", [])
    if axes == ([thread] if thread is not None else []) and not top["allocs"]:
      return top["body"]
  return program


def _answer(req: dict) -> dict:
  try:
    imp, case = import_kernel(req["file"], req.get("name", ""), req.get("arch", ""),
                              req.get("profile", ""), req.get("jax", ""))
    return {"case": case, "warnings": imp.warnings}
  except ImportRefused as e:
    return {"error": str(e), "code": 2}
  except Exception as e:  # pylint: disable=broad-except
    tb = traceback.extract_tb(e.__traceback__)
    at = f" ({tb[-1].filename}:{tb[-1].lineno})" if tb else ""
    return {"error": f"the importer failed: {type(e).__name__}: {e}{at}", "code": 3}


def serve() -> int:
  """--serve: one JSON request {"file", "name", "arch", "profile", "jax"} per line on stdin, one
  answer per line (tools/import_roundtrip.py imports many files in one process this way)."""
  import jax  # pylint: disable=import-outside-toplevel
  real_stdout = sys.stdout
  for line in sys.stdin:
    if not line.strip():
      continue
    jax.config.update("jax_enable_x64", False)  # a file may have turned it on
    with contextlib.redirect_stdout(sys.stderr):
      out = _answer(json.loads(line))
    real_stdout.write(json.dumps(out) + "\n")
    real_stdout.flush()
  return 0


def main(argv) -> int:
  if len(argv) == 2 and argv[1] == "--serve":
    return serve()
  if len(argv) != 6:
    sys.stdout.write(json.dumps({"error": "usage: cfjax_import.py FILE NAME ARCH PROFILE JAX",
                                 "code": 3}) + "\n")
    return 0
  _, file, name, arch, profile, jax_pin = argv
  real_stdout = sys.stdout
  with contextlib.redirect_stdout(sys.stderr):
    out = _answer({"file": file, "name": name, "arch": arch, "profile": profile, "jax": jax_pin})
  real_stdout.write(json.dumps(out) + "\n")
  real_stdout.flush()
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv))
