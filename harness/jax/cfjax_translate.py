"""Translating a collfuzz case into a Pallas Mosaic GPU kernel (docs/case-format.md).

Every case becomes `plgpu.kernel(body, out_type=..., <mesh kwargs>, compiler_params=...,
interpret=...)` with no scratch_types (every allocation is an explicit `pl.run_scoped`), or, with
`entry: pallas_call`, `pl.pallas_call(body, grid=..., in_specs/out_specs in GMEM)`.

Each op is emitted inside `jax.named_scope(op_label(k))`, where k indexes `Translation.op_paths`.
The label lands in the name stack of every equation the op produces, so the interpret-mode hooks
(cfjax_hooks) can tell which case op a callback belongs to. Name scopes change nothing else.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

import cfjax_smem_layout
from cfjax_cluster_ref import cluster_member
from cfjax_case import (LOOP_OPS, VECTOR_BINARY, Case, CaseError, axis_name, axis_names,
                        cancel_params, carry_key, carry_leaf, const_number, flag, iota_params,
                        loop_carry, loop_key, nd_loop_params, plus_terms, reduction_op,
                        wait_groups)

LABEL_PREFIX = "cfop"
HIDDEN_OUTPUT = "_cfjax_keep_alive"


def op_label(k: int) -> str:
  return f"{LABEL_PREFIX}{k}"


def jnp_dtype(name: str):
  return jnp.dtype(name)


def needs_x64(case: Case) -> bool:
  dtypes = [a["dtype"] for a in case.inputs + case.outputs]
  dtypes += [a["dtype"] for a in case.allocs() if "dtype" in a]
  dtypes += [op["carry"].get("dtype") for _, op, _ in case.walk()
             if op["op"] in LOOP_OPS and isinstance(op.get("carry"), dict)]
  return any(d in ("int64", "uint64", "float64") for d in dtypes)


# ---- small pieces

def cond_value(cond: Any):
  """A condition -> a Python bool (constant) or a traced bool from lax.axis_index comparisons."""
  if isinstance(cond, bool):
    return cond
  if not isinstance(cond, dict):
    raise CaseError(f"not a condition: {cond!r}")
  if "all" in cond or "any" in cond:
    is_all = "all" in cond
    vals = [cond_value(c) for c in cond["all" if is_all else "any"]]
    if all(isinstance(v, bool) for v in vals):
      return all(vals) if is_all else any(vals)
    if not vals:
      return is_all
    combine = jnp.logical_and if is_all else jnp.logical_or
    return functools.reduce(combine, vals)
  if "not" in cond:
    v = cond_value(cond["not"])
    return (not v) if isinstance(v, bool) else jnp.logical_not(v)
  idx = lax.axis_index(cond["axis"])
  for k, f in (("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b),
               ("lt", lambda a, b: a < b), ("le", lambda a, b: a <= b),
               ("gt", lambda a, b: a > b), ("ge", lambda a, b: a >= b)):
    if k in cond:
      return f(idx, int(cond[k]))
  raise CaseError(f"not a condition: {cond!r}")


def _term_index(e: dict, env: dict | None):
  """lax.axis_index(e["axis"]), or the index tracer of the enclosing loop whose `index` is
  e["loop"] (in env under loop_key(NAME), a tuple, which no ref name is)."""
  if "loop" in e:
    key = loop_key(e["loop"])
    if env is None or key not in env:
      raise CaseError(f"no enclosing loop has the index {e['loop']!r}")
    return env[key]
  return lax.axis_index(e["axis"])


def dynamic_index(e: dict, env: dict | None = None):
  """{"axis", "mul", "add"} -> lax.axis_index(axis) * mul + add; {"loop": NAME, "mul", "add"} ->
  i * mul + add, i the index tracer of the enclosing loop whose `index` is NAME (_term_index).
  Each term of `"plus": [{"axis"|"loop", "mul"}, ...]` adds its index * its mul after the own
  term's product and before `add` (lax.axis_index("a") * 128 + lax.axis_index("b") * 64 + add).
  Factors of 1 and 0 are left out. With `"mod": k`, the value is lax.rem(... , k) (a pipeline
  slot: `(i * mul + add) % k`). With `"multiple_of": m`, pl.multiple_of(..., m) around it all
  (the value unchanged; Warpgroup's layout inference takes it as proof)."""
  value = _term_index(e, env)
  if int(e.get("mul", 1)) != 1:
    value = value * int(e["mul"])
  for t in plus_terms(e):
    term = _term_index(t, env)
    if int(t.get("mul", 1)) != 1:
      term = term * int(t["mul"])
    value = value + term
  if int(e.get("add", 0)) != 0:
    value = value + int(e["add"])
  if e.get("mod") is not None:
    k = int(e["mod"])
    if k < 1:
      raise CaseError(f"a dynamic index's mod must be >= 1: {e!r}")
    value = lax.rem(jnp.asarray(value, jnp.int32), jnp.int32(k))
  if e.get("multiple_of") is not None:
    value = pl.multiple_of(value, int(e["multiple_of"]))
  return value


def slot_index(e, env: dict | None, what: str):
  """An SMEM leading index or a barrier index: a static integer, or a loop slot
  {"loop": NAME, "mul", "add", "mod"} (only a loop's index makes a slot)."""
  if isinstance(e, bool):
    raise CaseError(f"{what}: not an index: {e!r}")
  if isinstance(e, dict):
    if "loop" not in e:
      raise CaseError(f"{what}: a dynamic index must be a loop slot {{\"loop\": NAME, ...}}, "
                      f"got {e!r}")
    if "plus" in e:
      raise CaseError(f"{what}: a slot reads one loop index, no sum (no \"plus\"): {e!r}")
    return dynamic_index(e, env)
  return int(e)


def is_smem_slice(e) -> bool:
  """An SMEM index's slice entry {"start": S, "size": N} (S an integer or a dynamic start)."""
  return isinstance(e, dict) and "start" in e


def smem_index(entries: list, env: dict | None = None) -> tuple:
  """An SMEM ref's index entries: static integers, the first one possibly a loop slot, and last
  possibly one slice {"start": S, "size": N} (`pl.ds(S, N)` of the first dim no integer indexes;
  S an integer or a dynamic start as in GMEM entries: `smem.at[i, pl.ds(start, size)]`)."""
  out = []
  for d, e in enumerate(entries):
    if is_smem_slice(e):
      if d != len(entries) - 1:
        raise CaseError(f"an SMEM index's slice entry comes last, got {entries!r}")
      out.append(gmem_index([e], env)[0])
    elif d == 0:
      out.append(slot_index(e, env, "an SMEM index"))
    elif isinstance(e, dict) or isinstance(e, bool):
      raise CaseError(f"an SMEM index past the first is a static integer or a last slice "
                      f"{{\"start\", \"size\"}}, got {e!r}")
    else:
      out.append(int(e))
  return tuple(out)


def smem_copy_ref(use: dict, env: dict, path: str):
  """The SMEM side of a copy ({"alloc", "index", "transpose", "transpose_ref"}: a
  copy_gmem_to_smem's `dst`, a copy_smem_to_gmem's `src`) -> `smem.at[idx]` (smem_index), then
  with a `transpose` `REF.transpose(perm)`, or `plgpu.transpose_ref(REF, perm)` with
  `"transpose_ref": true` (cfjax_smem_layout.copy_transpose; what JAX makes of either, its errors
  included, is JAX's)."""
  ref = env[use["alloc"]]
  if use.get("index"):
    ref = ref.at[smem_index(use["index"], env)]
  perm, spelt_ref = cfjax_smem_layout.copy_transpose(use, path)
  if perm is None:
    return ref
  return plgpu.transpose_ref(ref, perm) if spelt_ref else ref.transpose(perm)


def is_dynamic(e) -> bool:
  """A dynamic index object: {"axis": ...} or {"loop": ...}."""
  return isinstance(e, dict) and ("axis" in e or "loop" in e)


def gmem_index(entries: list, env: dict | None = None) -> tuple:
  """Index entries -> the tuple passed to `ref.at[...]`; `env` holds the enclosing loop's index."""
  out = []
  for e in entries:
    if isinstance(e, bool):
      raise CaseError(f"not an index entry: {e!r}")
    if isinstance(e, int):
      out.append(e)
      continue
    if e == ":":
      out.append(slice(None))
      continue
    if is_dynamic(e):  # a dynamic integer index
      out.append(dynamic_index(e, env))
      continue
    if not isinstance(e, dict) or "start" not in e or "size" not in e:
      raise CaseError(f"not an index entry: {e!r}")
    start = e["start"]
    if isinstance(start, dict):
      start = dynamic_index(start, env)
    else:
      start = int(start)
    out.append(pl.ds(start, int(e["size"])))
  return tuple(out)


def num_barriers(a: dict):
  """num_barriers: an int (a 1-d barrier array), or [] (JAX's default (), a 0-d barrier ref)."""
  n = a.get("num_barriers", 1)
  return () if isinstance(n, list) else int(n)


def alloc_type(a: dict):
  """An allocation -> the JAX type passed to pl.run_scoped."""
  kind = a.get("kind")
  if kind == "smem":
    # `transforms` (tiling, then swizzle; cfjax_smem_layout): plgpu.SMEM(..., transforms=...).
    transforms = cfjax_smem_layout.jax_transforms(a)
    if transforms:
      return plgpu.SMEM(tuple(a["shape"]), jnp_dtype(a["dtype"]), transforms=transforms)
    return plgpu.SMEM(tuple(a["shape"]), jnp_dtype(a["dtype"]))
  if kind == "barrier":
    # num_barriers is always passed: the case format's default is 1 (JAX 0.11.2's is (), a
    # 0-d barrier ref, written `num_barriers: []`); see docs/jax-notes.md.
    return plgpu.Barrier(
        num_arrivals=int(a.get("num_arrivals", 1)),
        num_barriers=num_barriers(a),
        orders_tensor_core=bool(a.get("orders_tensor_core", False)))
  if kind == "cluster_barrier":
    return plgpu.ClusterBarrier(
        collective_axes=axis_names(a["collective_axes"]),
        num_arrivals=int(a.get("num_arrivals", 1)),
        num_barriers=num_barriers(a),
        orders_tensor_core=bool(a.get("orders_tensor_core", False)),
        leader_tracked=bool(a.get("leader_tracked", False)))
  if kind == "acc":
    return plgpu.ACC(tuple(a["shape"]), jnp_dtype(a["dtype"]))
  if kind == "gmem":
    return plgpu.GMEM(tuple(a["shape"]), jnp_dtype(a["dtype"]))
  if kind == "semaphore":
    t = a.get("type")
    if t == "regular":
      return plgpu.SemaphoreType.REGULAR(tuple(a["shape"]))
    if t == "barrier":
      return plgpu.SemaphoreType.BARRIER(tuple(a["shape"]))
    raise CaseError(f"unknown semaphore type {t!r}")
  if kind == "tmem":
    return plgpu.TMEM(tuple(a["shape"]), jnp_dtype(a["dtype"]),
                      collective=bool(a.get("collective", False)))
  raise CaseError(f"unknown allocation kind {kind!r}")


def barrier_ref(env: dict, use: dict):
  """A barrier use -> the ref: `bars.at[k]`, or `bars.at[slot]` for a loop slot index."""
  ref = env[use["alloc"]]
  if "index" in use and use["index"] is not None:
    return ref.at[slot_index(use["index"], env, "a barrier index")]
  return ref


def leader_tracked_value(j: Any):
  if j is None:
    return None
  if j == "replicated":
    return plgpu.CopyPartition.REPLICATED
  if isinstance(j, dict) and "partitioned" in j:
    return plgpu.CopyPartition.PARTITIONED(int(j["partitioned"]))
  raise CaseError(f"unknown leader_tracked {j!r}")


# The vector values whose cfjax_case.VECTOR_BINARY function is numpy's: JAX's own in the kernel.
_JNP_BINARY = {"min": jnp.minimum, "max": jnp.maximum, "shift_left": lax.shift_left,
               "shift_right_logical": lax.shift_right_logical,
               "shift_right_arithmetic": lax.shift_right_arithmetic}


def vector_value(v: Any, env: dict, shape: tuple, dtype, path: str):
  """A vector_store's value (docs/case-format.md "vector_store") -> a traced array of `shape` and
  `dtype`: {"const": c} is jnp.full(shape, c, dtype); {"iota": {"dimension": d, "vec_size": v}} is
  plgpu.layout_cast(lax.broadcasted_iota(dtype, shape, d), plgpu.Layout.WG_STRIDED(shape,
  vec_size=v)), with "layout_cast": false the bare iota; {"broadcast": {"shape": S, "value": a}} is jnp.broadcast_to(a, shape), a of shape
  S, and with "dims": D lax.broadcast_in_dim(a, shape, D); {"load": {"alloc": A, "index": [...]}}
  reads SMEM (`a.at[i, ...][...]`; with "cluster": {AXIS: IDX} another CTA's,
  `plgpu.cluster_ref(a.at[i, ...], {AXIS: IDX})[...]`, cfjax_cluster_ref), {"load": {"input": X,
  "index": [...]}} GMEM
  (`x.at[idx][...]`); {"add"|"sub"|"mul"|"and"|"or"|"xor": [a, b]} is a + b, a - b, a * b,
  a & b, a | b, a ^ b; {"min"|"max": [a, b]}
  is jnp.minimum(a, b), jnp.maximum(a, b) (lax.min_p / lax.max_p); {"shift_left"|
  "shift_right_logical"|"shift_right_arithmetic": [a, b]} is lax.shift_left(a, b), ...; {"convert": {"from": F,
  "value": a}} is a.astype(dtype) (lax.convert_element_type), `a` (its loads, its constants)
  of dtype F; {"carry": name} is env[carry_key(name)] (docs/case-format.md "Loop-carried
  values": the trip's incoming carry inside its loop, the loop's result after it), of `shape` and
  `dtype`."""
  if not isinstance(v, dict) or len(v) != 1:
    raise CaseError(f"{path}: not a vector value: {v!r}")
  (kind, arg), = v.items()
  if kind == "carry":
    name = carry_leaf(arg, path)
    if carry_key(name) not in env:
      raise CaseError(f"{path}.carry: no loop around this value, nor one before it in an "
                      f"enclosing body, carries {name!r}")
    value = env[carry_key(name)]
    if tuple(value.shape) != tuple(shape) or jnp.dtype(value.dtype) != jnp.dtype(dtype):
      raise CaseError(f"{path}.carry: the carry {name!r} is {value.dtype}{list(value.shape)}, "
                      f"here {jnp.dtype(dtype)}{list(shape)} is read")
    return value
  if kind == "const":
    return jnp.full(shape, const_number(arg, dtype, path), dtype)
  if kind == "iota":
    # Lane's iota lowers only with a layout cast right after it (its lowering rule's hint);
    # {"layout_cast": false} leaves it out.
    dim, vec = iota_params(arg, shape, jnp.dtype(dtype).itemsize * 8, path)
    if vec is None:
      return lax.broadcasted_iota(dtype, shape, dim)
    return plgpu.layout_cast(lax.broadcasted_iota(dtype, shape, dim),
                             plgpu.Layout.WG_STRIDED(shape, vec_size=vec))
  if kind == "broadcast":
    if not isinstance(arg, dict) or not {"shape", "value"} <= set(arg) <= {"shape", "dims", "value"}:
      raise CaseError(f"{path}.broadcast: expected {{\"shape\": [...], \"dims\": [...], "
                      f"\"value\": v}}, got {arg!r}")
    a = vector_value(arg["value"], env, tuple(arg["shape"]), dtype, f"{path}.broadcast.value")
    if "dims" in arg:
      return lax.broadcast_in_dim(a, tuple(shape), tuple(int(d) for d in arg["dims"]))
    return jnp.broadcast_to(a, shape)
  if kind == "load":
    if not isinstance(arg, dict):
      raise CaseError(f"{path}.load: not a load: {arg!r}")
    cluster = cluster_member(arg, f"{path}.load")
    if "alloc" in arg:
      ref = env[arg["alloc"]]
      if arg.get("index"):
        ref = ref.at[smem_index(arg["index"], env)]
      if cluster is not None:  # a peer CTA's SMEM (DSMEM): the index first, then cluster_ref
        axis, idx = cluster
        idx = idx if isinstance(idx, int) else dynamic_index(idx, env)
        ref = plgpu.cluster_ref(ref, {axis: idx})
    elif "input" in arg:
      ref = env[arg["input"]]
      if arg.get("index"):
        ref = ref.at[gmem_index(arg["index"], env)]
    else:
      raise CaseError(f"{path}.load: a load names an \"alloc\" or an \"input\": {arg!r}")
    return ref[...]
  if kind in VECTOR_BINARY:
    if not isinstance(arg, list) or len(arg) != 2:
      raise CaseError(f"{path}.{kind}: expected two values, got {arg!r}")
    a = vector_value(arg[0], env, shape, dtype, f"{path}.{kind}[0]")
    b = vector_value(arg[1], env, shape, dtype, f"{path}.{kind}[1]")
    return _JNP_BINARY.get(kind, VECTOR_BINARY[kind])(a, b)
  if kind == "convert":
    if not isinstance(arg, dict) or set(arg) != {"from", "value"} or \
        not isinstance(arg["from"], str):
      raise CaseError(f"{path}.convert: expected {{\"from\": dtype, \"value\": value}}, "
                      f"got {arg!r}")
    src = jnp_dtype(arg["from"])
    a = vector_value(arg["value"], env, shape, src, f"{path}.convert.value")
    return a.astype(dtype)
  raise CaseError(f"{path}: unknown vector value {kind!r}")


def vector_dst(d: Any, env: dict, path: str):
  """A vector_store's `dst`: {"output": O, "index": [entries]} -> `o.at[idx]`, or {"alloc": A,
  "index": [leading ints or a loop slot first]} -> `a.at[i, ...]` (an SMEM ref); with "cluster":
  {AXIS: IDX} the peer CTA's (a DSMEM write, `plgpu.cluster_ref(a.at[i, ...], {AXIS: IDX})`,
  cfjax_cluster_ref), the index first as for a load."""
  if not isinstance(d, dict) or ("output" in d) == ("alloc" in d):
    raise CaseError(f"{path}: a vector_store's dst names an \"output\" or an \"alloc\": {d!r}")
  cluster = cluster_member(d, path)
  if "alloc" in d:
    ref = env[d["alloc"]]
    ref = ref.at[smem_index(d["index"], env)] if d.get("index") else ref
    if cluster is not None:
      axis, idx = cluster
      ref = plgpu.cluster_ref(ref, {axis: idx if isinstance(idx, int) else dynamic_index(idx, env)})
    return ref
  ref = env[d["output"]]
  return ref.at[gmem_index(d["index"], env)] if d.get("index") else ref


_OOB = {"undefined": "UNDEFINED", "promise_in_bounds": "PROMISE_IN_BOUNDS", "zeros": "ZEROS"}


# ---- the translation

def loop_carry_type(op: dict, path: str):
  """A loop's or nd_loop's carry (None without one) with its shape and JAX dtype (None, None)."""
  carry = loop_carry(op, path)
  if carry is None:
    return None, None, None
  try:
    return carry, tuple(carry["shape"]), jnp_dtype(carry["dtype"])
  except TypeError as e:
    raise CaseError(f"{path}.carry.dtype: unknown dtype {carry['dtype']!r}") from e


@dataclasses.dataclass
class Translation:
  case: Case
  interpret: Any  # InterpretGPUParams or None
  # Lowering a kernel without outputs for a real GPU: jit drops the effect-free kernel call, so
  # nothing is lowered. keep_alive adds one hidden output (float32[1], never written) then.
  keep_alive: bool = False
  op_paths: list = dataclasses.field(default_factory=list)  # label index -> JSON path
  run_scoped_allocs: dict = dataclasses.field(default_factory=dict)  # path -> [alloc dicts]

  # -- ops

  def emit_body(self, ops: list, env: dict, path: str):
    # The body's own env: a loop's result (carry_key) bound by one of its ops is seen by the ops
    # after it and the bodies nested in them, and not past the body.
    env = dict(env)
    for i, op in enumerate(ops):
      p = f"{path}[{i}]"
      k = len(self.op_paths)
      self.op_paths.append(p)
      try:
        with jax.named_scope(op_label(k)):
          self.emit_op(op, env, p)
      except Exception as e:
        if not hasattr(e, "_cfjax_op"):
          try:
            e._cfjax_op = p  # the innermost case op that raised it  # pylint: disable=protected-access
          except Exception:  # pylint: disable=broad-except
            pass
        raise

  def emit_op(self, op: dict, env: dict, path: str):
    kind = op.get("op")
    if kind == "run_scoped":
      allocs = op.get("allocs", [])
      self.run_scoped_allocs[path] = allocs
      types = [alloc_type(a) for a in allocs]
      names = [a["name"] for a in allocs]

      def scoped(*refs):
        inner = dict(env)
        inner.update(zip(names, refs))
        self.emit_body(op.get("body", []), inner, path + ".body")

      kwargs = {}
      if "collective_axes" in op:
        kwargs["collective_axes"] = axis_names(op["collective_axes"])
      pl.run_scoped(scoped, *types, **kwargs)
    elif kind == "copy_gmem_to_smem":
      src = env[op["src"]["input"]]
      if op["src"].get("index"):
        src = src.at[gmem_index(op["src"]["index"], env)]
      dst = smem_copy_ref(op["dst"], env, path + ".dst")
      kwargs = {}
      if op.get("collective_axes") is not None:
        kwargs["collective_axes"] = axis_names(op["collective_axes"])
      if op.get("leader_tracked") is not None:
        kwargs["leader_tracked"] = leader_tracked_value(op["leader_tracked"])
      if op.get("oob_mode") is not None:
        kwargs["oob_mode"] = getattr(plgpu.OOBFillMode, _OOB[op["oob_mode"]])
      if op.get("predicate") is not None:
        kwargs["predicate"] = cond_value(op["predicate"])
      if op.get("barrier") is not None:
        plgpu.copy_gmem_to_smem(src, dst, barrier_ref(env, op["barrier"]), **kwargs)
      else:
        plgpu.copy_gmem_to_smem(src, dst, **kwargs)
    elif kind == "copy_smem_to_gmem":
      src = smem_copy_ref(op["src"], env, path + ".src")
      dst = env[op["dst"]["output"]]
      if op["dst"].get("index"):
        dst = dst.at[gmem_index(op["dst"]["index"], env)]
      kwargs = {}
      r = reduction_op(op, path)
      if r is not None:  # a reducing TMA store (cp.reduce.async.bulk.tensor): dst = op(dst, src)
        kwargs["reduction_op"] = r
      if op.get("predicate") is not None:  # the store is issued where it holds (as a copy's)
        kwargs["predicate"] = cond_value(op["predicate"])
      if not flag(op, "commit_group", True, path):  # left for a later commit to group
        kwargs["commit_group"] = False
      wait = flag(op, "wait", True, path)  # false: no wait_smem_to_gmem(0) after the store
      if flag(op, "commit_smem", True, path):  # false: no fence before the store
        plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(src, dst, **kwargs)
      if wait:
        plgpu.wait_smem_to_gmem(0)
    elif kind == "vector_store":
      # A synchronous vector store of the warpgroup (Lane): `dst.at[idx][...] = value`, JAX's
      # `swap` primitive (its returned old value dropped); every load and constant has the
      # destination slice's shape and dtype (the C++ parser checks it). The destination is an
      # output slice ({"output", "index"}) or an SMEM ref ({"alloc", "index"}: leading integer
      # indices or a loop slot, as a store's src), with "cluster" a peer CTA's (a DSMEM write,
      # `plgpu.cluster_ref(ref, {AXIS: IDX})[...] = value`: Lane only, Warpgroup's dialect
      # lowering refuses the smem_cluster memory space).
      dst = vector_dst(op.get("dst"), env, path + ".dst")
      dst[...] = vector_value(op.get("value"), env, tuple(dst.shape), dst.dtype, path + ".value")
    elif kind == "commit_smem":
      # fence.proxy.async.shared::cta: the thread's earlier SMEM vector stores become visible to
      # the async proxy (a later TMA store reading them).
      plgpu.commit_smem()
    elif kind == "commit_smem_to_gmem_group":
      plgpu.commit_smem_to_gmem_group()
    elif kind == "wait_smem_to_gmem":
      # n passes through as it is: a negative n is JAX's ValueError at trace.
      plgpu.wait_smem_to_gmem(wait_groups(op, path),
                              wait_read_only=flag(op, "wait_read_only", False, path))
    elif kind == "barrier_arrive":
      plgpu.barrier_arrive(barrier_ref(env, op["barrier"]))
    elif kind == "barrier_wait":
      plgpu.barrier_wait(barrier_ref(env, op["barrier"]))
    elif kind == "barrier_arrive_and_wait":
      # New in JAX 0.12.0.1: on 0.11.2 the attribute lookup raises AttributeError while tracing.
      plgpu.barrier_arrive_and_wait(barrier_ref(env, op["barrier"]))
    elif kind == "try_cluster_cancel":
      # Cluster launch control (Blackwell): every thread arrives on the barrier (the first along
      # the thread axis, when it is collective, with 16 bytes of expect_tx); the first CTA along
      # the collective cluster axes issues the try_cancel, whose 16-byte response is multicast to
      # the result's offset in every CTA of the cluster (docs/case-format.md). A result index
      # is `res.at[i, ...]`: static integers on the allocation's leading dims.
      res, index, axes = cancel_params(op, path)
      ref = env[res].at[index] if index else env[res]
      plgpu.try_cluster_cancel(ref, barrier_ref(env, op["barrier"]), collective_axes=axes)
    elif kind == "when":
      body = op.get("body", [])
      pl.when(cond_value(op["cond"]))(lambda: self.emit_body(body, env, path + ".body"))
    elif kind == "loop":
      self.emit_loop(op, env, path)
    elif kind == "nd_loop":
      self.emit_nd_loop(op, env, path)
    elif kind == "warp_map":
      # The warp-level context: pl.core_map over plgpu.WarpMesh; lax.axis_index(axis) is the warp.
      body = op.get("body", [])

      @pl.core_map(plgpu.WarpMesh(axis_name=op["axis"]))
      def _():
        self.emit_body(body, env, path + ".body")
    else:
      raise CaseError(f"{path}: unknown op {kind!r}")

  def emit_loop(self, op: dict, env: dict, path: str):
    """A static trip count: lax.fori_loop (a scan the Mosaic GPU lowering turns into scf.for);
    the body is traced once, and barrier phases carry across iterations. With an `index`, the
    body sees the index tracer (0..n-1) as env[loop_key(index)]. Without a `carry` the loop
    carries None; with one (docs/case-format.md "Loop-carried values") `init` is evaluated
    before the loop, the body sees the trip's incoming carry as env[carry_key(name)], `next`
    (evaluated after the body's ops) is what a trip returns, and the loop's result is bound to
    env[carry_key(name)] for the ops after the loop (`env` is the enclosing body's own)."""
    body = op.get("body", [])
    index = op.get("index")
    carry, shape, dtype = loop_carry_type(op, path)

    def iteration(i, value):
      inner = dict(env)
      if index is not None:
        inner[loop_key(index)] = i
      if carry is None:
        self.emit_body(body, inner, path + ".body")
        return value
      inner[carry_key(carry["name"])] = value
      self.emit_body(body, inner, path + ".body")
      return vector_value(carry["next"], inner, shape, dtype, path + ".carry.next")

    if carry is None:
      lax.fori_loop(0, int(op["trip_count"]), iteration, None)
      return
    outer = {k: v for k, v in env.items() if k != carry_key(carry["name"])}
    init = vector_value(carry["init"], outer, shape, dtype, path + ".carry.init")
    env[carry_key(carry["name"])] = lax.fori_loop(0, int(op["trip_count"]), iteration, init)

  def emit_nd_loop(self, op: dict, env: dict, path: str):
    """plgpu.nd_loop(grid, collective_axes=..., tiling=...) (docs/case-format.md "nd_loop"): the
    body function takes the NDLoopInfo; each named `index` entry binds loop_info.index[d], and
    `local_index` loop_info.local_index, as env[loop_key(NAME)] (as emit_loop's index). JAX runs
    each thread's own trips (a dynamic trip count) and raises its own errors (a tiling of another
    length or that does not divide the grid, ValueError at trace). With a `carry` (as emit_loop's)
    `init` is evaluated before the call, passed as init_carry; nd_loop calls the body with the
    carry as the keyword `carry` and returns the last trip's, bound to env[carry_key(name)]."""
    grid, axes, tiling, names, local = nd_loop_params(op, path)
    body = op.get("body", [])
    carry, shape, dtype = loop_carry_type(op, path)

    def iteration(loop_info, carry=None):  # pylint: disable=redefined-outer-name
      inner = dict(env)
      for name, value in zip(names, loop_info.index):
        if name is not None:
          inner[loop_key(name)] = value
      if local is not None:
        inner[loop_key(local)] = loop_info.local_index
      if op.get("carry") is None:
        self.emit_body(body, inner, path + ".body")
        return None
      inner[carry_key(op["carry"]["name"])] = carry
      self.emit_body(body, inner, path + ".body")
      return vector_value(op["carry"]["next"], inner, shape, dtype, path + ".carry.next")

    if carry is None:
      plgpu.nd_loop(grid, collective_axes=axes, tiling=tiling)(iteration)
      return
    outer = {k: v for k, v in env.items() if k != carry_key(carry["name"])}
    init = vector_value(carry["init"], outer, shape, dtype, path + ".carry.init")
    env[carry_key(carry["name"])] = plgpu.nd_loop(
        grid, collective_axes=axes, tiling=tiling, init_carry=init)(iteration)

  # -- the kernel

  def body(self, *refs):
    c = self.case
    names = [a["name"] for a in c.inputs] + [a["name"] for a in c.outputs]
    if self.hidden_output():
      names.append(HIDDEN_OUTPUT)
    if len(refs) != len(names):
      raise CaseError(f"the kernel got {len(refs)} refs for {len(names)} arrays")
    self.op_paths.clear()
    self.run_scoped_allocs.clear()
    self.emit_body(c.program, dict(zip(names, refs)), "$.program")

  def compiler_params(self):
    sem = self.case.target["semantics"]
    semantics = (plgpu.LoweringSemantics.Lane if sem == "lane"
                 else plgpu.LoweringSemantics.Warpgroup)
    return plgpu.CompilerParams(lowering_semantics=semantics)

  def hidden_output(self) -> bool:
    return self.keep_alive and not self.case.outputs

  def out_type(self) -> tuple:
    out = tuple(jax.ShapeDtypeStruct(tuple(o["shape"]), jnp_dtype(o["dtype"]))
                for o in self.case.outputs)
    if self.hidden_output():
      out += (jax.ShapeDtypeStruct((1,), jnp.float32),)
    return out

  def make_kernel(self) -> Callable:
    """The kernel function of the inputs. Raises what plgpu.kernel / plgpu.Mesh raise."""
    c = self.case
    m = c.mesh
    if c.target["entry"] == "pallas_call":
      # pl.pallas_call has no grid names; mesh.grid_names is not passed.
      gmem = pl.BlockSpec(memory_space=plgpu.GMEM)
      return pl.pallas_call(
          self.body,
          out_shape=self.out_type(),
          grid=tuple(m.grid),
          in_specs=[gmem] * len(c.inputs),
          out_specs=tuple(gmem for _ in self.out_type()),
          compiler_params=self.compiler_params(),
          interpret=self.interpret,
      )
    return plgpu.kernel(
        self.body,
        out_type=self.out_type(),
        grid=tuple(m.grid),
        grid_names=tuple(m.grid_names),
        cluster=tuple(m.cluster),
        cluster_names=tuple(m.cluster_names),
        num_threads=m.num_threads,
        thread_name=m.thread_name,
        compiler_params=self.compiler_params(),
        interpret=self.interpret,
    )


def reduced_grid_case(case: Case) -> Case:
  """The same case with every grid dim set to 1 (nothing in a case depends on the grid index)."""
  raw = dict(case.raw)
  mesh = dict(raw["mesh"])
  if "grid" in mesh:
    mesh["grid"] = [1] * len(mesh["grid"])
  raw["mesh"] = mesh
  return Case.from_json(raw)


__all__ = ["Translation", "needs_x64", "op_label", "LABEL_PREFIX", "reduced_grid_case",
           "axis_name"]
