"""Allocations: `run_scoped` and the allocation types it takes (`collfuzz import`, cfjax_import.py).

AllocsMixin.alloc_of reads one allocation's type (SMEM, Barrier, ClusterBarrier, ACC, GMEM, TMEM,
semaphores) into a case's alloc; run_scoped is the scope that allocates them (its
`collective_axes`) and walks its body with them bound. pallas_call's scratch operands and
plgpu.kernel's scratch_types go through alloc_of too (cfjax_import_kernel.build_case).
"""

from __future__ import annotations

from cfjax_import_values import Ref, axis_names_json


class AllocsMixin:
  """Allocations and their scopes, for cfjax_import.Importer."""

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
           "collective_axes": axis_names_json(dtype.collective_axes),
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
      op["collective_axes"] = axis_names_json(axes)
    op["allocs"] = allocs
    op["body"] = self.walk(inner, sub)
    return op
