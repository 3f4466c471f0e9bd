"""The kernel call: its mesh, target and refs -> a case (`collfuzz import`, cfjax_import.py).

find_kernel_eqns finds the one `pallas_call` or `mpmd_map` (plgpu.kernel) equation in the traced
jaxpr; build_case reads its params (grid, cluster, threads and their names; lowering_semantics;
interpret mode, the default profile), binds the body's refs (inputs with their fills, inferred by
infer_fill where not given; outputs; pallas_call's scratch operands as a run_scoped), walks the
body with the Importer and drops plgpu.kernel's own empty scope (unwrap_kernel_scope).
"""

from __future__ import annotations

import math

from cfjax_import_values import ImportRefused, Ref, axis_name_json, user_line


_KERNEL_PRIMS = ("pallas_call", "mpmd_map")


def find_kernel_eqns(jaxpr, out: list):
  # jax.extend.core: the public names, on every modelled release (0.12.0.1 no longer has
  # jax._src.core.ClosedJaxpr; its Jaxpr is still in jax._src.core).
  from jax.extend import core  # pylint: disable=import-outside-toplevel
  from jax._src import core as src_core  # pylint: disable=import-outside-toplevel
  jaxpr_type = getattr(core, "Jaxpr", None) or src_core.Jaxpr
  for eqn in jaxpr.eqns:
    if eqn.primitive.name in _KERNEL_PRIMS:
      out.append(eqn)
      continue
    for v in eqn.params.values():
      for j in (v if isinstance(v, (list, tuple)) else [v]):
        if isinstance(j, core.ClosedJaxpr):
          find_kernel_eqns(j.jaxpr, out)
        elif isinstance(j, jaxpr_type):
          find_kernel_eqns(j, out)
  return out


def infer_fill(arr, dtype: str):
  """(fill, None): a collfuzz fill whose elements equal `arr`'s bit for bit, the recipe ones
  first (iota, constant, arange; reshaped arrays too, as fills are row-major), then a jax.random
  draw (cfjax_import_random: `jax_random`), else an explicit
  `values` fill; or (None, why not): an array that cannot be read, of a dtype collfuzz lacks, with
  NaN or infinities (JSON has no numbers for them), or past cfjax_fill.MAX_FILL_VALUES elements."""
  import numpy as np  # pylint: disable=import-outside-toplevel
  import cfjax_fill  # pylint: disable=import-outside-toplevel
  import cfjax_import_random  # pylint: disable=import-outside-toplevel
  if dtype not in cfjax_fill.DTYPE_BITS:
    return None, f"is of dtype {dtype}, which a case cannot hold"
  try:
    a = np.asarray(arr).astype(cfjax_fill.numpy_dtype(dtype), copy=False)
  except Exception:  # pylint: disable=broad-except
    return None, "holds values that cannot be read"
  if a.size == 0:
    return None, "is empty"
  spec = {"shape": list(a.shape), "dtype": dtype}
  have = cfjax_fill.pack(a, dtype)

  def same(fill):
    try:
      return cfjax_fill.pack(cfjax_fill.fill_array(dict(spec, fill=fill)), dtype) == have
    except (ValueError, OverflowError):
      return False

  if same({"pattern": "iota"}):
    return {"pattern": "iota"}, None
  flat = a.reshape(-1)
  is_float = dtype in cfjax_fill._FLOATS  # pylint: disable=protected-access
  if is_float and not np.all(np.isfinite(flat.astype(np.float64))):
    return None, "holds NaN or infinities, which a case's JSON cannot write"
  lo, hi = cfjax_fill.value_range(dtype)

  def small(x):  # the element as a small integer of the fill range, or None
    v = float(x) if is_float else int(x)
    if is_float and not v.is_integer():
      return None
    v = int(v)
    return v if lo <= v <= hi else None

  first = small(flat[0])
  if first is not None:
    if same({"pattern": "constant", "value": first}):
      return {"pattern": "constant", "value": first}, None
    second = small(flat[1]) if flat.size > 1 else None
    if second is not None:
      fill = {"pattern": "arange", "start": first, "step": second - first}
      if small(flat[-1]) is not None and same(fill):
        return fill, None
  drawn = cfjax_import_random.recognise(a, dtype)
  if drawn is not None:
    return drawn, None
  if flat.size > cfjax_fill.MAX_FILL_VALUES:
    return None, (f"has {flat.size} elements, more than the {cfjax_fill.MAX_FILL_VALUES} an "
                  "explicit values fill holds, and is no recipe fill (iota, constant, arange)")
  if is_float:
    values = []
    for x in flat.astype(np.float64).tolist():
      values.append(int(x) if x.is_integer() and not (x == 0 and math.copysign(1, x) < 0) else x)
  else:
    values = [int(x) for x in flat.tolist()]
  fill = {"pattern": "values", "values": values}
  if not same(fill):  # pragma: no cover (every finite value of the dtype is a float64)
    return None, "holds values a values fill does not reproduce"
  return fill, None


def _axis_tuple(names):
  return [axis_name_json(n) for n in names]


def build_case(imp, call, args, fills, name, arch, profile, jax_pin) -> dict:
  """The kernel call's equation `call` and its `args` -> the case; `imp` is the
  cfjax_import.Importer that walks the body."""
  imp.kernel_line = user_line(call, imp.user_file)
  if "JAX recorded no source line" in imp.kernel_line:
    imp.kernel_line = ""
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
    dtype = str(a.dtype)
    nm = imp.fresh("in", _clean_name(arg_names, k))
    spec = {"name": nm, "shape": [int(d) for d in a.shape], "dtype": dtype}
    fill, why = (fills[k], None) if fills[k] is not None else infer_fill(a, dtype)
    if fill is None:
      if not isinstance(a, jax_ShapeDtypeStruct()):
        imp.warnings.append(f"input {k} ({nm}) {why}; the case fills it with iota")
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
  imp.mesh = mesh
  program = []
  if scratch:
    # pallas_call's scratch_shapes: allocated at kernel entry, for the whole kernel, with no
    # collective axes: the same as one run_scoped around the body.
    # A transformed SMEM scratch operand's undo transforms (UnswizzleRef, UntilingTransform) are
    # in the grid mapping's scratch_avals (a TransformedRef); the body's ref is the tiled one.
    scratch_avals = tuple(getattr(gm, "scratch_avals", ()) or ()) if gm is not None else ()
    allocs = []
    for k, v in enumerate(scratch):
      layout = tuple(getattr(scratch_avals[k], "transforms", ()) or ()) \
          if k < len(scratch_avals) else ()
      a = imp.alloc_of(v.aval, call, _clean_name(arg_names, n_in + n_out + k), layout)
      allocs.append(a)
      env[v] = Ref("alloc", a["name"], a.get("shape", ()), a, layout)
    program = [{"op": "run_scoped", "allocs": allocs, "body": imp.walk(body, env)}]
  else:
    program = imp.walk(body, env)
  if entry == "kernel":
    program = unwrap_kernel_scope(program, mesh)
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


def unwrap_kernel_scope(program: list, mesh: dict) -> list:
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

