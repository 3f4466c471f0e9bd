#!/usr/bin/env python3
"""Writes a collfuzz case as a standalone JAX script (`collfuzz repro`, docs/python.md).

    cfjax_repro.py            reads JSON lines {"case", "mode", "expected", "match", "collfuzz",
                              "jax", "command"} on stdin, answers one JSON line {"script"} or
                              {"error"} per request

The script builds the kernel exactly as the JAX executor's adapter does (cfjax_translate.py:
`plgpu.kernel` or `pl.pallas_call`, the mesh, one `pl.run_scoped` per scope, the copies, barriers,
waits and `pl.when` blocks, inputs filled as cfjax_fill.py fills them, `jax.enable_x64` around
everything when a 64-bit dtype appears, the case's arch for lower mode), runs it the way
cfjax_execute.py runs it (stage by stage), and asserts the outcome that collfuzz's reference
predicts for that mode: the exception's class and message, or the written output elements and the
completion of every wait. What it cannot see without the adapter's instrumentation (SMEM contents,
barrier counts) is stated in a comment, not asserted.

Only the standard library, numpy and ml_dtypes are used here (no JAX import): generating is fast.
"""

from __future__ import annotations

import json
import keyword
import math
import re
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import cfjax_fill  # noqa: E402
from cfjax_case import without_scratch_shapes  # noqa: E402
from cfjax_execute import AOT_SMEM_CAPACITY, ARCH_VERSION, SMEM_CAPACITY  # noqa: E402

# Names the script itself uses; a case name equal to one gets another identifier.
_RESERVED = {"jax", "lax", "jnp", "np", "pl", "plgpu", "re", "sys", "threading", "functools",
             "main", "kernel_body", "make_kernel", "make_inputs", "raised", "check", "run",
             "InterpretGPUParams", "INTERPRET", "mgpu_utils", "mgpu_core", "contextlib"}

_OOB = {"undefined": "UNDEFINED", "promise_in_bounds": "PROMISE_IN_BOUNDS", "zeros": "ZEROS"}

# Output elements up to this many are written as literal values; larger ones as hex.
MAX_LITERAL_ELEMENTS = 64

# Seconds a predicted deadlock is given before the script concludes the kernel hangs.
DEADLOCK_SECONDS = 20



def num_barriers_src(a: dict) -> str:
  """cfjax_translate.num_barriers: an int, or `()` for the case's `[]` (a 0-d barrier ref)."""
  n = a.get("num_barriers", 1)
  return "()" if isinstance(n, list) else str(int(n))

class Unsupported(ValueError):
  """Something in the case the generator cannot write (named in the message)."""


def ident(name: str) -> str:
  """A Python identifier for a case name (kept as is where it already is one)."""
  if name.isidentifier() and not keyword.iskeyword(name) and name not in _RESERVED \
      and not name.startswith("v_"):
    return name
  return "v_" + "".join(c if c.isalnum() else f"_{ord(c):x}_" for c in name)


def axis_name_src(j) -> str:
  if isinstance(j, str):
    return repr(j)
  if isinstance(j, list) and j and all(isinstance(p, str) for p in j):
    return repr(tuple(j))
  raise Unsupported(f"not an axis name: {j!r}")


def axis_names_src(j) -> str:
  if isinstance(j, str):
    return repr((j,))
  if not isinstance(j, list):
    raise Unsupported(f"not a list of axis names: {j!r}")
  parts = [axis_name_src(a) for a in j]
  return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def dtype_src(name: str) -> str:
  return f"jnp.{name}"


def shape_src(shape) -> str:
  t = tuple(int(d) for d in shape)
  return repr(t)


class Writer:
  """Python source of one case's kernel, mirroring cfjax_translate.Translation op by op."""

  def __init__(self, case: dict, mode: str):
    self.case = case
    self.mode = mode
    self.lines: list[str] = []
    self.scopes = 0
    self.loops = 0

  def emit(self, depth: int, text: str):
    self.lines.append("  " * depth + text)

  # -- conditions and indices (cfjax_translate.cond_value, gmem_index)

  def cond(self, c):
    """(source, is_constant_bool)."""
    if isinstance(c, bool):
      return repr(c), True
    if not isinstance(c, dict):
      raise Unsupported(f"not a condition: {c!r}")
    if "all" in c or "any" in c:
      is_all = "all" in c
      vals = [self.cond(x) for x in c["all" if is_all else "any"]]
      if all(b for _, b in vals):
        consts = [s == "True" for s, _ in vals]
        return repr(all(consts) if is_all else any(consts)), True
      fn = "jnp.logical_and" if is_all else "jnp.logical_or"
      src = vals[0][0]
      for s, _ in vals[1:]:
        src = f"{fn}({src}, {s})"
      return src, False
    if "not" in c:
      s, b = self.cond(c["not"])
      if b:
        return repr(s != "True"), True
      return f"jnp.logical_not({s})", False
    if "axis" not in c:
      raise Unsupported(f"not a condition: {c!r}")
    for k, op in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"),
                  ("ge", ">=")):
      if k in c:
        return f"lax.axis_index({c['axis']!r}) {op} {int(c[k])}", False
    raise Unsupported(f"not a condition: {c!r}")

  def gmem_index(self, entries) -> str:
    out = []
    for e in entries:
      if isinstance(e, bool):
        raise Unsupported(f"not an index entry: {e!r}")
      if isinstance(e, int):
        out.append(str(e))
        continue
      if e == ":":  # a whole dimension
        out.append(":")
        continue
      if isinstance(e, dict) and "axis" in e:  # a dynamic integer index
        out.append(self.dynamic_index(e))
        continue
      if not isinstance(e, dict) or "start" not in e or "size" not in e:
        raise Unsupported(f"index entry {e!r} (the generator writes integers, \":\", "
                          "lax.axis_index entries and {start, size} entries)")
      start = e["start"]
      if isinstance(start, dict):
        s = self.dynamic_index(start)
      else:
        s = str(int(start))
      out.append(f"pl.ds({s}, {int(e['size'])})")
    return ", ".join(out) + ("," if len(out) == 1 else "")

  @staticmethod
  def dynamic_index(e: dict) -> str:
    """cfjax_translate.dynamic_index: lax.axis_index(axis) * mul + add, factors of 1 and 0 left out."""
    s = f"lax.axis_index({e['axis']!r})"
    if int(e.get("mul", 1)) != 1:
      s = f"{s} * {int(e['mul'])}"
    if int(e.get("add", 0)) != 0:
      s = f"{s} + {int(e['add'])}"
    return s

  @staticmethod
  def static_index(entries) -> str:
    parts = [":" if i == ":" else str(int(i)) for i in entries]
    return ", ".join(parts) + ("," if len(parts) == 1 else "")

  # -- allocations (cfjax_translate.alloc_type)

  def alloc_src(self, a: dict) -> str:
    kind = a.get("kind")
    if kind == "smem":
      return f"plgpu.SMEM({shape_src(a['shape'])}, {dtype_src(a['dtype'])})"
    if kind == "barrier":
      s = (f"plgpu.Barrier(num_arrivals={int(a.get('num_arrivals', 1))}, "
           f"num_barriers={num_barriers_src(a)}")
      if a.get("orders_tensor_core"):
        s += ", orders_tensor_core=True"
      return s + ")"
    if kind == "cluster_barrier":
      s = (f"plgpu.ClusterBarrier(collective_axes={axis_names_src(a['collective_axes'])}, "
           f"num_arrivals={int(a.get('num_arrivals', 1))}, "
           f"num_barriers={num_barriers_src(a)}")
      if a.get("orders_tensor_core"):
        s += ", orders_tensor_core=True"
      if a.get("leader_tracked"):
        s += ", leader_tracked=True"
      return s + ")"
    if kind == "acc":
      return f"plgpu.ACC({shape_src(a['shape'])}, {dtype_src(a['dtype'])})"
    if kind == "gmem":
      return f"plgpu.GMEM({shape_src(a['shape'])}, {dtype_src(a['dtype'])})"
    if kind == "semaphore":
      t = a.get("type")
      if t not in ("regular", "barrier"):
        raise Unsupported(f"semaphore type {t!r}")
      return f"plgpu.SemaphoreType.{t.upper()}({shape_src(a['shape'])})"
    if kind == "tmem":
      s = f"plgpu.TMEM({shape_src(a['shape'])}, {dtype_src(a['dtype'])}"
      if a.get("collective"):
        s += ", collective=True"
      return s + ")"
    raise Unsupported(f"allocation kind {kind!r}")

  @staticmethod
  def barrier_src(use: dict) -> str:
    ref = ident(use["alloc"])
    if "index" in use and use["index"] is not None:
      return f"{ref}.at[{int(use['index'])}]"
    return ref

  # -- ops (cfjax_translate.Translation.emit_op)

  def body(self, ops: list, depth: int, path: str):
    if not isinstance(ops, list):
      raise Unsupported(f"{path}: expected an array of ops")
    if not ops:
      self.emit(depth, "pass")
    for i, op in enumerate(ops):
      self.op(op, depth, f"{path}[{i}]")

  def op(self, op: dict, depth: int, path: str):
    kind = op.get("op") if isinstance(op, dict) else None
    known = {"run_scoped", "copy_gmem_to_smem", "copy_smem_to_gmem", "barrier_arrive",
             "barrier_wait", "when", "loop", "warp_map"}
    if kind not in known:
      raise Unsupported(f"{path}: op {kind!r} (the generator writes {', '.join(sorted(known))})")
    if kind == "run_scoped":
      allocs = op.get("allocs", [])
      name = f"scope{self.scopes}"
      self.scopes += 1
      params = ", ".join(ident(a["name"]) for a in allocs)
      self.emit(depth, f"def {name}({params}):  # {path}")
      self.body(op.get("body", []), depth + 1, path + ".body")
      args = [name] + [self.alloc_src(a) for a in allocs]
      if "collective_axes" in op:
        args.append(f"collective_axes={axis_names_src(op['collective_axes'])}")
      self.emit(depth, f"pl.run_scoped({', '.join(args)})")
    elif kind == "copy_gmem_to_smem":
      src = ident(op["src"]["input"])
      if op["src"].get("index"):
        src += f".at[{self.gmem_index(op['src']['index'])}]"
      dst = ident(op["dst"]["alloc"])
      if op["dst"].get("index"):
        dst += f".at[{self.static_index(op['dst']['index'])}]"
      args = [src, dst]
      if op.get("barrier") is not None:
        args.append(self.barrier_src(op["barrier"]))
      if op.get("collective_axes") is not None:
        args.append(f"collective_axes={axis_names_src(op['collective_axes'])}")
      lt = op.get("leader_tracked")
      if lt is not None:
        if lt == "replicated":
          args.append("leader_tracked=plgpu.CopyPartition.REPLICATED")
        elif isinstance(lt, dict) and "partitioned" in lt:
          args.append(f"leader_tracked=plgpu.CopyPartition.PARTITIONED({int(lt['partitioned'])})")
        else:
          raise Unsupported(f"{path}.leader_tracked: {lt!r}")
      if op.get("oob_mode") is not None:
        args.append(f"oob_mode=plgpu.OOBFillMode.{_OOB[op['oob_mode']]}")
      if op.get("predicate") is not None:
        args.append(f"predicate={self.cond(op['predicate'])[0]}")
      self.emit(depth, f"plgpu.copy_gmem_to_smem({', '.join(args)})  # {path}")
    elif kind == "copy_smem_to_gmem":
      src = ident(op["src"]["alloc"])
      if op["src"].get("index"):
        src += f".at[{self.static_index(op['src']['index'])}]"
      dst = ident(op["dst"]["output"])
      if op["dst"].get("index"):
        dst += f".at[{self.gmem_index(op['dst']['index'])}]"
      self.emit(depth, f"plgpu.commit_smem()  # {path}")
      self.emit(depth, f"plgpu.copy_smem_to_gmem({src}, {dst})")
      self.emit(depth, "plgpu.wait_smem_to_gmem(0)")
    elif kind == "barrier_arrive":
      self.emit(depth, f"plgpu.barrier_arrive({self.barrier_src(op['barrier'])})  # {path}")
    elif kind == "barrier_wait":
      self.emit(depth, f"plgpu.barrier_wait({self.barrier_src(op['barrier'])})  # {path}")
    elif kind == "when":
      src, _ = self.cond(op["cond"])
      self.emit(depth, f"@pl.when({src})  # {path}")
      self.emit(depth, "def _():")
      self.body(op.get("body", []), depth + 1, path + ".body")
    elif kind == "loop":
      # cfjax_translate: lax.fori_loop over a static trip count; barrier phases carry across trips.
      if not isinstance(op.get("trip_count"), int) or isinstance(op.get("trip_count"), bool):
        raise Unsupported(f"{path}.trip_count: expected an integer")
      name = f"trip{self.loops}"
      self.loops += 1
      self.emit(depth, f"def {name}(_, carry):  # {path}")
      self.body(op.get("body", []), depth + 1, path + ".body")
      self.emit(depth + 1, "return carry")
      self.emit(depth, f"lax.fori_loop(0, {int(op['trip_count'])}, {name}, None)")
    elif kind == "warp_map":
      # cfjax_translate: the warp-level context; lax.axis_index(axis) is the warp (0..3).
      self.emit(depth, f"@pl.core_map(plgpu.WarpMesh(axis_name={op['axis']!r}))  # {path}")
      self.emit(depth, "def _():")
      self.body(op.get("body", []), depth + 1, path + ".body")


def _tuple_src(items: list) -> str:
  return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def needs_x64(case: dict) -> bool:
  dtypes = [a["dtype"] for a in case.get("inputs", []) + case.get("outputs", [])]

  def allocs(ops):
    for op in ops:
      if isinstance(op, dict):
        if op.get("op") == "run_scoped":
          for a in op.get("allocs", []):
            yield a
        if op.get("op") in ("run_scoped", "when", "loop", "warp_map"):
          yield from allocs(op.get("body", []))

  dtypes += [a["dtype"] for a in allocs(case["program"]) if "dtype" in a]
  return any(d in ("int64", "uint64", "float64") for d in dtypes)


# ---- the expected outcome

def _values(spec: dict, data: bytes) -> np.ndarray:
  """Bytes of an array (outcome hex) -> its flat element values."""
  dtype = spec["dtype"]
  n = math.prod(int(d) for d in spec["shape"])
  if cfjax_fill.DTYPE_BITS[dtype] == 4:
    raw = np.frombuffer(data, np.uint8)
    nib = np.empty(raw.size * 2, np.uint8)
    nib[0::2] = raw & 0xF
    nib[1::2] = raw >> 4
    nib = nib[:n].astype(np.int16)
    if dtype == "int4":
      nib = np.where(nib >= 8, nib - 16, nib)
    return nib
  return np.frombuffer(data, cfjax_fill.numpy_dtype(dtype))[:n]


def _element_bytes(spec: dict) -> int:
  return max(1, cfjax_fill.DTYPE_BITS[spec["dtype"]] // 8)


def _compared_ranges(spec: dict, rec: dict, data: bytes) -> tuple[list, int]:
  """The written element ranges, less elements whose predicted bytes are all the SMEM sentinel
  (collfuzz's reference fills unwritten SMEM with 0xA5; JAX leaves it uninitialised)."""
  eb = _element_bytes(spec)
  bits = cfjax_fill.DTYPE_BITS[spec["dtype"]]
  skipped = 0
  out = []
  for b, e in rec.get("written", []):
    cur = None
    for i in range(int(b), int(e)):
      if bits == 4:
        byte = data[i // 2]
        sentinel = ((byte >> (4 * (i % 2))) & 0xF) == (cfjax_fill.SMEM_SENTINEL & 0xF) and \
            False  # a nibble cannot be told from a value: compare it
      else:
        sentinel = all(x == cfjax_fill.SMEM_SENTINEL for x in data[i * eb:(i + 1) * eb])
      if sentinel:
        skipped += 1
        cur = None
        continue
      if cur is not None and cur[1] == i:
        cur[1] = i + 1
      else:
        cur = [i, i + 1]
        out.append(cur)
  return out, skipped


def _input_slice(inputs: list, spec: dict, want: bytes):
  """(input index, element offset) of an input whose filled contents hold `want` contiguously."""
  if cfjax_fill.DTYPE_BITS[spec["dtype"]] == 4 or not want:
    return None
  eb = _element_bytes(spec)
  for k, a in enumerate(inputs):
    if a["dtype"] != spec["dtype"]:
      continue
    have = cfjax_fill.fill_bytes(a)
    at = have.find(want)
    while at != -1 and at % eb:
      at = have.find(want, at + 1)
    if at != -1:
      return k, at // eb
  return None


def _literal(v) -> str:
  if isinstance(v, (float, np.floating)):
    f = float(v)
    if math.isnan(f):
      return "np.nan"
    if math.isinf(f):
      return "np.inf" if f > 0 else "-np.inf"
    return repr(f)
  return repr(int(v))


# ---- the script

_HELPERS = '''
def fill_values(n, lo, hi, pattern="iota", seed=0, value=0):
  """collfuzz's fills (docs/case-format.md "Fills"): small integers, element i row-major."""
  span = hi - lo + 1
  if pattern == "iota":
    v = lo + np.mod(np.arange(n, dtype=np.int64) + 1 - lo, span)
    return np.where(v == 0, 1 if hi > 0 else -1, v)
  if pattern == "random":  # splitmix64(seed ^ (i * 0xD1B54A32D192ED03)) mod span
    with np.errstate(over="ignore"):
      x = np.uint64(seed) ^ (np.arange(n, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03))
      x = x + np.uint64(0x9E3779B97F4A7C15)
      x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
      x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
      x = x ^ (x >> np.uint64(31))
    return lo + (x % np.uint64(span)).astype(np.int64)
  return np.full(n, min(max(value, lo), hi), dtype=np.int64)  # constant


def as_array(v, dtype, shape):
  """Small integers -> an array of `dtype` holding them exactly."""
  dtype = jnp.dtype(dtype)
  if jnp.issubdtype(dtype, jnp.floating):
    v = v.astype(np.float32) if dtype == jnp.float32 else v.astype(np.float64).astype(dtype)
  elif dtype in (jnp.dtype(jnp.int4), jnp.dtype(jnp.uint4)):
    v = v.astype(np.int8 if dtype == jnp.dtype(jnp.int4) else np.uint8).astype(dtype)
  else:
    v = v.astype(dtype)  # wraps modulo 2^bits
  return jnp.asarray(v.reshape(shape))
'''

_RAISED = '''

def raised(e):
  """(class name, message) of the exception JAX raised, unwrapped as collfuzz's adapter does.

  An exception raised inside an interpret-mode callback reaches Python inside an XlaRuntimeError
  whose text ends with the original traceback: its last "Name: message" line (or a bare "Name")."""
  seen = set()
  x = e
  while x is not None and id(x) not in seen:
    seen.add(id(x))
    if type(x).__name__ not in ("XlaRuntimeError", "JaxRuntimeError", "RuntimeError"):
      return type(x).__name__, str(x)
    x = x.__cause__ or x.__context__
  text = str(e)
  found = [m for m in re.finditer(r"^([A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception))(: |$)", text, re.M)
           if m.group(1).split(".")[-1] not in ("XlaRuntimeError", "JaxRuntimeError")]
  if found:
    return found[-1].group(1).split(".")[-1], text[found[-1].end():].rstrip("\\n")
  return type(e).__name__, text


def normalize(message):
  """Object addresses and interpret-mode barrier ids differ from run to run."""
  message = re.sub(r"<object object at 0x[0-9a-fA-F]+>", "<object object at 0x...>", message)
  return re.sub(r"\\bbarrier [0-9]+\\b", "barrier <id>", message)
'''


def _comment_block(text: str, width: int = 96) -> list[str]:
  out = []
  for para in text.split("\n"):
    line = "#"
    for word in para.split(" "):
      if len(line) + 1 + len(word) > width and line != "#":
        out.append(line)
        line = "#  "
      line += " " + word
    out.append(line)
  return out


_STEP_OF_STAGE = {
    "mesh": "mesh", "trace": "trace", "interpret": "interpret", "run": "run",
    "estimate": "lower", "module": "lower", "lower": "lower", "verify": "lower",
    "dialect": "lower", "finalize": "lower", "compile": "launch", "launch": "launch",
}


def _collfuzz_case(E, grid: list, inputs: list, x64: bool):
  """`collfuzz import THIS_FILE.py` reads the case back through this function (docs/python.md)."""
  fills = [a.get("fill") or {"pattern": "iota"} for a in inputs]
  E("def collfuzz_case():")
  E('  """For `collfuzz import THIS_FILE.py`: the kernel, its arguments and their collfuzz fills."""')
  if x64:
    E("  jax.config.update('jax_enable_x64', True)")
  E(f"  return make_kernel({tuple(grid)!r}), make_inputs(), {fills!r}")
  E("")
  E("")


def generate(req: dict) -> str:
  # scratch_shapes: the run_scoped JAX makes of it (cfjax_case.without_scratch_shapes); collfuzz
  # sends the case in that form already.
  case = without_scratch_shapes(req["case"])
  mode = req.get("mode", "interpret")
  if mode not in ("interpret", "gpu", "lower"):
    raise Unsupported(f"mode {mode!r}")
  expected = req["expected"]
  kind = expected.get("kind")
  undefined = None  # lower mode: undefined behaviour comes only when the kernel runs
  if mode == "lower" and kind == "undefined":
    undefined = expected.get("undefined") or {}
    kind = "completed"
  if kind not in ("completed", "rejected", "deadlock"):
    raise Unsupported(f"a predicted outcome of kind {kind!r}")
  later = None  # lower mode: a predicted error of compile or launch, which lowering does not reach
  if mode == "lower" and kind == "rejected" and \
      _STEP_OF_STAGE.get(expected["diagnostic"].get("stage", "")) == "launch":
    later = expected["diagnostic"]
    kind = "completed"
  target = dict(case.get("target", {}))
  entry = target.get("entry", "kernel")
  semantics = target.get("semantics", "warpgroup")
  arch = target.get("arch")
  mesh = case.get("mesh", {})
  inputs = case.get("inputs", [])
  outputs = case.get("outputs", [])
  for a in inputs + outputs:
    if a["dtype"] not in cfjax_fill.DTYPE_BITS:
      raise Unsupported(f"dtype {a['dtype']!r}")
  keep_alive = mode != "interpret" and not outputs
  x64 = needs_x64(case)
  grid = [int(d) for d in mesh.get("grid", [])]
  points = math.prod(grid) if grid else 1
  reduce_grid = mode == "interpret" and points > 4

  w = Writer(case, mode)
  w.body(case["program"], 1, "$.program")
  body_lines = w.lines

  L: list[str] = []
  E = L.append
  jax_version = req.get("jax") or "0.11.2"
  what = {"interpret": "JAX's GPU interpret mode (InterpretGPUParams, runs on the CPU)",
          "gpu": "the Mosaic GPU compiler on a real GPU (Hopper or Blackwell)",
          "lower": "the Mosaic GPU compiler, lowering for CUDA without a GPU"}[mode]
  if kind == "rejected":
    d = expected["diagnostic"]
    shows = (f"{d['exception']} at stage {d['stage']}: {d['message']!r}"
             + (f" (collfuzz rule {d['rule']})" if d.get("rule") else ""))
  elif kind == "deadlock":
    shows = "the kernel never finishes: a barrier wait never completes"
  else:
    shows = "the kernel runs to completion" + (
        "; the outputs hold the values asserted below" if outputs and mode != "lower" else "")
    if mode == "lower":
      shows = "the kernel lowers for CUDA without an error"
      if later is not None:
        shows += (f" (the compiler's {later['exception']} {later['message']!r} comes at stage "
                  f"{later['stage']}, after lowering: run --mode gpu to see it)")
      if undefined is not None:
        shows += (f"; running it is undefined behaviour ({undefined.get('code', '?')} at "
                  f"{undefined.get('op', '?')}): do not run it on a GPU")
  E(f'"""collfuzz case {case.get("name", "")!r} as a JAX script: {what}.')
  E("")
  for line in _comment_block(f"collfuzz predicts: {shows}."):
    E(line[2:] if line.startswith("# ") else line[1:])
  E('"""')
  E(f"# Targets JAX {jax_version} (pip install jax=={jax_version}); needs only JAX.")
  E(f"# Generated by {req.get('collfuzz', 'collfuzz')}: {req.get('command', 'collfuzz repro')}")
  if req.get("fix"):
    for line in _comment_block(f"How to fix the kernel: {req['fix']}"):
      E(line)
  E("# Run: python THIS_FILE.py  -> exits 0 when JAX does what collfuzz predicts, else raises")
  E("# AssertionError saying what differs.")
  E("")
  E("import re")
  if kind == "deadlock":
    E("import threading")
  E("")
  E("import numpy as np")
  E("import jax")
  E("from jax import lax")
  E("import jax.numpy as jnp")
  E("from jax.experimental import pallas as pl")
  E("from jax.experimental.pallas import mosaic_gpu as plgpu")
  if mode == "interpret":
    E("from jax._src.pallas.mosaic_gpu.interpret.params import InterpretGPUParams")
    E("from jax._src.pallas.mosaic_gpu.interpret import gpu_callbacks")
  if mode == "lower":
    E("from jax.experimental.mosaic.gpu import core as mgpu_core")
    E("from jax.experimental.mosaic.gpu import utils as mgpu_utils")
  E("")
  E(f"JAX_VERSION = {jax_version!r}")
  E(f"MODE = {mode!r}")
  E("")
  E("")
  # the kernel body
  names = [ident(a["name"]) for a in inputs] + [ident(a["name"]) for a in outputs]
  if keep_alive:
    names.append("keep_alive")
  E(f"def kernel_body({', '.join(names)}):")
  L.extend(body_lines)
  E("")
  E("")
  # the kernel
  out_types = [f"jax.ShapeDtypeStruct({shape_src(o['shape'])}, {dtype_src(o['dtype'])})"
               for o in outputs]
  if keep_alive:
    out_types.append("jax.ShapeDtypeStruct((1,), jnp.float32)")
  interp = "InterpretGPUParams()" if mode == "interpret" else "False"
  semantics_src = ("plgpu.LoweringSemantics.Lane" if semantics == "lane"
                   else "plgpu.LoweringSemantics.Warpgroup")
  E("def make_kernel(grid):")
  if keep_alive:
    E("  # No outputs: one hidden float32[1] output (never written) keeps jit from dropping the")
    E("  # effect-free kernel call, as collfuzz's adapter does.")
  if entry == "pallas_call":
    E("  gmem = pl.BlockSpec(memory_space=plgpu.GMEM)")
    E("  return pl.pallas_call(")
    E("      kernel_body,")
    E(f"      out_shape={_tuple_src(out_types)},")
    E("      grid=grid,")
    E(f"      in_specs=[gmem] * {len(inputs)},")
    E(f"      out_specs={_tuple_src(['gmem'] * len(out_types))},")
    E(f"      compiler_params=plgpu.CompilerParams(lowering_semantics={semantics_src}),")
    E(f"      interpret={interp},")
    E("  )")
  else:
    E("  return plgpu.kernel(")
    E("      kernel_body,")
    E(f"      out_type={_tuple_src(out_types)},")
    E("      grid=grid,")
    E(f"      grid_names={axis_names_src(mesh.get('grid_names', []))},")
    E(f"      cluster={shape_src(mesh.get('cluster', []))},")
    E(f"      cluster_names={axis_names_src(mesh.get('cluster_names', []))},")
    E(f"      num_threads={mesh.get('num_threads')!r},")
    E(f"      thread_name={mesh.get('thread_name')!r},")
    E(f"      compiler_params=plgpu.CompilerParams(lowering_semantics={semantics_src}),")
    E(f"      interpret={interp},")
    E("  )")
  E("")
  E("")
  # inputs
  E(_HELPERS.strip("\n"))
  E("")
  E("")
  E("def make_inputs():")
  if not inputs:
    E("  return []")
  else:
    E("  return [")
    for a in inputs:
      fill = a.get("fill") or {"pattern": "iota"}
      lo, hi = cfjax_fill.value_range(a["dtype"])
      n = math.prod(int(d) for d in a["shape"])
      pattern = fill.get("pattern", "iota")
      extra = ""
      if pattern == "random":
        extra = f", pattern='random', seed={int(fill.get('seed', 0)) & ((1 << 64) - 1)}"
      elif pattern == "constant":
        extra = f", pattern='constant', value={int(fill.get('value', 0))}"
      elif pattern != "iota":
        raise Unsupported(f"fill pattern {pattern!r}")
      E(f"      as_array(fill_values({n}, {lo}, {hi}{extra}), {dtype_src(a['dtype'])}, "
        f"{shape_src(a['shape'])}),  # {a['name']}")
    E("  ]")
  E(_RAISED.rstrip("\n"))
  E("")
  E("")
  # the expected outcome
  if kind == "rejected":
    d = expected["diagnostic"]
    step = _STEP_OF_STAGE.get(d.get("stage", ""), d.get("stage", ""))
    E(f"EXPECTED_EXCEPTION = {d['exception']!r}")
    E(f"EXPECTED_MESSAGE = {d['message']!r}")
    E(f"# JAX's message {'contains' if req.get('match') == 'contains' else 'is'} this text"
      + (f" (rule {d['rule']}, stage {d['stage']})" if d.get("rule") else ""))
    E(f"MESSAGE_MATCH = {req.get('match', 'exact')!r}")
    E(f"EXPECTED_STEP = {step!r}")
    E("")
    E("")
    E("def check_raised(e, step):")
    E("  name, message = raised(e)")
    E("  assert name == EXPECTED_EXCEPTION, (")
    E("      f\"expected {EXPECTED_EXCEPTION} at {EXPECTED_STEP}, got {name} at {step}: {message}\")")
    E("  got, want = normalize(message), normalize(EXPECTED_MESSAGE)")
    E("  same = want in got if MESSAGE_MATCH == 'contains' else got == want")
    E("  assert same, f\"expected message {EXPECTED_MESSAGE!r}, got {message!r}\"")
    E("  assert step == EXPECTED_STEP, f\"expected it at {EXPECTED_STEP}, raised at {step}\"")
    E("  print(f\"as predicted: {name} at {step}: {message}\")")
    E("")
    E("")
  elif kind == "completed" and mode != "lower":
    E("def check_outputs(results, inputs):")
    n_checks = 0
    for k, (spec, rec) in enumerate(zip(outputs, expected.get("outputs", []))):
      data = bytes.fromhex(rec.get("hex", ""))
      ranges, skipped = _compared_ranges(spec, rec, data)
      vals = _values(spec, data)
      ne = sum(e - b for b, e in ranges)
      E(f"  {ident(spec['name'])} = np.asarray(results[{k}]).reshape(-1)")
      if skipped:
        E(f"  # {skipped} written element(s) hold SMEM that no copy wrote: collfuzz predicts its "
          "sentinel 0xA5, JAX leaves it uninitialised; not compared.")
      if ne == 0:
        E(f"  # no element of {spec['name']} is written")
        continue
      if ne <= MAX_LITERAL_ELEMENTS or cfjax_fill.DTYPE_BITS[spec["dtype"]] == 4:
        idx = [i for b, e in ranges for i in range(b, e)]
        E(f"  want = np.array([{', '.join(_literal(vals[i]) for i in idx)}]).astype({dtype_src(spec['dtype'])})")
        E(f"  got = {ident(spec['name'])}[np.array({idx!r}, dtype=np.int64)]")
      else:
        eb = _element_bytes(spec)
        parts = []
        for b, e in ranges:
          src = _input_slice(inputs, spec, data[b * eb:e * eb])
          if src is not None:
            k_in, off = src
            parts.append(f"np.asarray(inputs[{k_in}]).reshape(-1)[{off}:{off + e - b}]"
                         f"  # {inputs[k_in]['name']}'s elements [{off}, {off + e - b})")
          else:
            parts.append(f"np.frombuffer(bytes.fromhex({data[b * eb:e * eb].hex()!r}), "
                         f"{dtype_src(spec['dtype'])})")
        E(f"  # the written elements {ranges!r} ([begin, end), row-major) are predicted to hold:")
        E("  want = np.concatenate([")
        for part in parts:
          E(f"      {part.replace('  #', ',  #', 1) if '  #' in part else part + ','}")
        E("  ])")
        E(f"  got = np.concatenate([{ident(spec['name'])}[b:e] for b, e in {ranges!r}])")
      E(f"  np.testing.assert_array_equal(got, want, err_msg={'output ' + spec['name']!r})")
      n_checks += 1
    E(f"  print('as predicted: the kernel completed; {n_checks} output(s) hold the predicted values')")
    E("")
    E("")
  _collfuzz_case(E, grid, inputs, x64)
  E("def main():")
  if mode == "interpret":
    E("  gpu_callbacks.reset_gpu_interpret_mode_state()  # JAX asks for this after a failed run")
  ind = "  "
  if x64:
    E("  # A 64-bit dtype appears in the case: collfuzz's adapter runs it with x64 enabled, globally.")
    E("  # (The scoped `with jax.enable_x64(True):` does not reach interpret mode's worker threads,")
    E("  # which then allocate 32-bit SMEM for a 64-bit copy: docs/jax-divergences.md.)")
    E("  jax.config.update('jax_enable_x64', True)")
  if mode == "lower":
    arch_t = ARCH_VERSION.get(arch)
    if arch_t is None:
      raise Unsupported(f"arch {arch!r}")
    E(f"{ind}# No GPU to ask: lower for the case's arch, {arch}, and its SMEM capacity per block")
    E(f"{ind}# (shared_memory_per_block_optin; with no device Mosaic GPU assumes {AOT_SMEM_CAPACITY}).")
    E(f"{ind}mgpu_utils._infer_arch = lambda: {arch_t!r}")
    E(f"{ind}mgpu_core._SMEM_SIZE_BOUND = {SMEM_CAPACITY[arch]}")
  E(f"{ind}inputs = make_inputs()")
  E(f"{ind}step = 'mesh'")
  E(f"{ind}try:")
  i2 = ind + "  "
  E(f"{i2}kernel = make_kernel({tuple(grid)!r})")
  E(f"{i2}step = 'trace'")
  E(f"{i2}traced = jax.jit(kernel).trace(*inputs)")
  if mode == "interpret":
    if reduce_grid:
      E(f"{i2}# collfuzz's adapter traces and builds the grid as given and runs a grid of ones")
      E(f"{i2}# (nothing depends on the grid index; {points} points would run {points} times slower).")
      E(f"{i2}step = 'interpret'")
      E(f"{i2}traced.lower().compile()")
      E(f"{i2}step = 'trace'")
      E(f"{i2}traced = jax.jit(make_kernel({tuple([1] * len(grid))!r})).trace(*inputs)")
    E(f"{i2}step = 'interpret'")
    E(f"{i2}compiled = traced.lower().compile()")
    E(f"{i2}step = 'run'")
  elif mode == "lower":
    E(f"{i2}step = 'lower'")
    E(f"{i2}traced.lower(lowering_platforms=('cuda',))")
  else:
    E(f"{i2}step = 'lower'")
    E(f"{i2}lowered = traced.lower()")
    E(f"{i2}step = 'launch'")
    E(f"{i2}compiled = lowered.compile()")
  if mode != "lower":
    if kind == "deadlock":
      E(f"{i2}done = threading.Event()")
      E(f"{i2}worker = threading.Thread(target=lambda: (jax.block_until_ready(compiled(*inputs)), done.set()), daemon=True)")
      E(f"{i2}worker.start()")
      E(f"{i2}finished = done.wait({DEADLOCK_SECONDS})")
    else:
      E(f"{i2}results = jax.block_until_ready(compiled(*inputs))")
  E(f"{ind}except Exception as e:  # pylint: disable=broad-except")
  if kind == "rejected":
    E(f"{ind}  check_raised(e, step)")
    E(f"{ind}  return")
    E(f"{ind}raise AssertionError(f'expected {{EXPECTED_EXCEPTION}} at {{EXPECTED_STEP}}: "
      "{EXPECTED_MESSAGE!r}; the kernel ' + ('lowered' if MODE == 'lower' else 'ran') + ' without an error')")
  else:
    E(f"{ind}  name, message = raised(e)")
    E(f"{ind}  raise AssertionError(f'expected the kernel to {'lower' if mode == 'lower' else 'run'}; "
      "got {name} at {step}: {message}') from e")
    if mode == "lower":
      E(f"{ind}print('as predicted: the kernel lowered for CUDA without an error')")
    elif kind == "deadlock":
      E(f"{ind}assert not finished, 'expected a deadlock (a wait that never completes); the kernel finished'")
      E(f"{ind}print('as predicted: the kernel is still waiting after {DEADLOCK_SECONDS} s')")
    else:
      E(f"{ind}check_outputs(jax.tree.leaves(results), inputs)")
  E("")
  E("")
  E('if __name__ == "__main__":')
  E("  main()")
  return "\n".join(L) + "\n"


def main() -> int:
  for line in sys.stdin:
    line = line.strip()
    if not line:
      continue
    try:
      req = json.loads(line)
      out = {"script": generate(req)}
    except Unsupported as e:
      out = {"error": str(e)}
    except (KeyError, TypeError, ValueError) as e:
      out = {"error": f"the case cannot be written as a script: {type(e).__name__}: {e}"}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
  return 0


if __name__ == "__main__":
  sys.exit(main())
