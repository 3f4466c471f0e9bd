"""The kernel and its arguments in a `collfuzz repro` script (cfjax_repro.py; docs/python.md).

emit_kernel writes `kernel_body` (the lines cfjax_repro_body.Writer wrote) and `make_kernel(grid)`:
the `plgpu.kernel` or `pl.pallas_call` call with the case's mesh (grid, cluster, threads and their
names), lowering semantics, interpret params and, with no outputs outside interpret mode, a hidden
output. emit_inputs writes the fill helpers (HELPERS: cfjax_fill.py's arithmetic) and
`make_inputs()`; emit_collfuzz_case the `collfuzz_case()` that `collfuzz import` reads back.
"""

from __future__ import annotations

import math

import cfjax_fill
from cfjax_repro_src import Unsupported, axis_names_src, dtype_src, ident, shape_src, tuple_src


def emit_kernel(E, r, body_lines: list):
  """kernel_body and make_kernel; `r` is the cfjax_repro_modes.Request."""
  inputs, outputs, keep_alive, mode, semantics, entry, mesh = r.inputs, r.outputs, r.keep_alive, \
      r.mode, r.semantics, r.entry, r.mesh
  # the kernel body
  names = [ident(a["name"]) for a in inputs] + [ident(a["name"]) for a in outputs]
  if keep_alive:
    names.append("keep_alive")
  E(f"def kernel_body({', '.join(names)}):")
  for line in body_lines:
    E(line)
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
    E(f"      out_shape={tuple_src(out_types)},")
    E("      grid=grid,")
    E(f"      in_specs=[gmem] * {len(inputs)},")
    E(f"      out_specs={tuple_src(['gmem'] * len(out_types))},")
    E(f"      compiler_params=plgpu.CompilerParams(lowering_semantics={semantics_src}),")
    E(f"      interpret={interp},")
    E("  )")
  else:
    E("  return plgpu.kernel(")
    E("      kernel_body,")
    E(f"      out_type={tuple_src(out_types)},")
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


def emit_inputs(E, r):
  """The fill helpers and make_inputs()."""
  inputs = r.inputs
  E(HELPERS.strip("\n"))
  E("")
  E("")
  E("def make_inputs():")
  if not inputs:
    E("  return []")
  else:
    E("  return [")
    for a in inputs:
      E(f"      {input_src(a)},  # {a['name']}")
    E("  ]")


def input_src(a: dict) -> str:
  """The expression make_inputs() builds one input with: `jnp.arange(...)` for an arange fill,
  the listed numbers for an explicit values fill, collfuzz's fill arithmetic for the others."""
  fill = a.get("fill") or {"pattern": "iota"}
  dtype, shape = dtype_src(a["dtype"]), shape_src(a["shape"])
  n = math.prod(int(d) for d in a["shape"])
  pattern = fill.get("pattern", "iota")
  if pattern == "arange":
    start, step = int(fill.get("start", 0)), int(fill.get("step", 1))
    if step == 0 or n == 1:
      return f"jnp.full({shape}, {start}, dtype={dtype})"
    stop = start + step * (n - 1) + (1 if step > 0 else -1)  # inside the dtype, unlike start + n*step
    return f"jnp.arange({start}, {stop}, {step}, dtype={dtype}).reshape({shape})"
  if pattern == "values":
    return f"explicit_values({_values_src(fill.get('values', []))}, {dtype}, {shape})"
  if pattern == "jax_random":
    return jax_random_src(fill, dtype, shape)
  lo, hi = cfjax_fill.value_range(a["dtype"])
  extra = ""
  if pattern == "random":
    extra = f", pattern='random', seed={int(fill.get('seed', 0)) & ((1 << 64) - 1)}"
  elif pattern == "constant":
    extra = f", pattern='constant', value={int(fill.get('value', 0))}"
  elif pattern != "iota":
    raise Unsupported(f"fill pattern {pattern!r}")
  return f"as_array(fill_values({n}, {lo}, {hi}{extra}), {dtype}, {shape})"


def jax_random_src(fill: dict, dtype: str, shape: str) -> str:
  """`jax.random.uniform(key, shape, dtype)` or `jax.random.bits(...)` of the fill's key:
  `jax.random.key(seed)`, each split written `jax.random.split(key, n)[i]`."""
  key = f"jax.random.key({int(fill.get('seed', 0))})"
  for n, i in fill.get("split", ()):
    key = f"jax.random.split({key}, {int(n)})[{int(i)}]"
  fn = "uniform" if fill.get("distribution") == "uniform" else "bits"
  return f"jax.random.{fn}({key}, {shape}, {dtype})"


def _values_src(values: list) -> str:
  """The numbers of a values fill as a list literal, wrapped at about 100 columns."""
  lines, line = [], []
  width = 0
  for v in values:
    t = repr(v)
    if line and width + len(t) + 2 > 88:
      lines.append(", ".join(line))
      line, width = [], 0
    line.append(t)
    width += len(t) + 2
  if line:
    lines.append(", ".join(line))
  return "[\n          " + ",\n          ".join(lines) + "]" if len(lines) > 1 else "[" + "".join(lines) + "]"


HELPERS = '''
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


def explicit_values(values, dtype, shape):
  """An explicit `values` fill: the numbers the kernel was called with, row-major, each exactly
  a value of `dtype`."""
  dtype = jnp.dtype(dtype)
  if jnp.issubdtype(dtype, jnp.floating):
    v = np.asarray(values, dtype=np.float64)
  elif dtype in (jnp.dtype(jnp.int4), jnp.dtype(jnp.uint4)):
    v = np.asarray(values, dtype=np.int8 if dtype == jnp.dtype(jnp.int4) else np.uint8)
  else:
    v = np.asarray(values, dtype=dtype)
  return jnp.asarray(v.astype(dtype).reshape(shape))
'''


def emit_collfuzz_case(E, grid: list, inputs: list, x64: bool):
  """`collfuzz import THIS_FILE.py` reads the case back through this function (docs/python.md)."""
  # A values fill is inferred back from make_inputs()'s array (the same numbers), not repeated.
  fills = [None if (a.get("fill") or {}).get("pattern") == "values" else
           (a.get("fill") or {"pattern": "iota"}) for a in inputs]
  E("def collfuzz_case():")
  E('  """For `collfuzz import THIS_FILE.py`: the kernel, its arguments and their collfuzz fills."""')
  if x64:
    E("  jax.config.update('jax_enable_x64', True)")
  E(f"  return make_kernel({tuple(grid)!r}), make_inputs(), {fills!r}")
  E("")
  E("")
