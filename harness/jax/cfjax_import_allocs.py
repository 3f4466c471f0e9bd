"""Allocations: `run_scoped` and the allocation types it takes (`collfuzz import`, cfjax_import.py).

AllocsMixin.alloc_of reads one allocation's type (SMEM, Barrier, ClusterBarrier, ACC, GMEM, TMEM,
semaphores) into a case's alloc; run_scoped is the scope that allocates them (its
`collective_axes`) and walks its body with them bound. pallas_call's scratch operands and
plgpu.kernel's scratch_types go through alloc_of too (cfjax_import_kernel.build_case).

An SMEM allocation with transforms (`plgpu.SMEM(shape, dtype, transforms=(plgpu.TilingTransform(t),
plgpu.SwizzleTransform(S)))`) is allocated by JAX at its tiled shape; the run_scoped equation's
`ref_transforms` (pallas_call: its grid mapping's scratch_avals) hold what undoes the transforms
(UnswizzleRef, UntilingTransform), which JAX puts first on every use of the ref. alloc_of reads
them back into the case's `"transforms"` (tiling, then swizzle: JAX's order) and the logical
shape, and binds the ref with them as its `layout` (cfjax_import_index strips them from a use).
"""

from __future__ import annotations

from cfjax_import_values import Ref, axis_names_json


class AllocsMixin:
  """Allocations and their scopes, for cfjax_import.Importer."""

  def smem_transforms(self, aval, layout: tuple, eqn) -> tuple[list, tuple]:
    """An SMEM allocation's undo transforms (`layout`, in the order JAX applies them to the
    tiled ref: UnswizzleRef, then UntilingTransform) -> (the case's `transforms`, tiling first,
    then swizzle; the logical shape). Refuses any other transform, and a swizzle that the user
    gave before the tiling (the case format's order is JAX's documented one)."""
    from jax._src.pallas.mosaic_gpu import core as gpu_core  # pylint: disable=import-outside-toplevel
    inner = getattr(aval, "inner_aval", aval)
    shape = tuple(int(d) for d in getattr(inner, "shape", ()))
    user = []
    for t in reversed(tuple(layout)):  # the user's order: the undo transforms reversed
      if isinstance(t, gpu_core.UntilingTransform):
        user.append({"tiling": [int(d) for d in t.tiling]})
      elif isinstance(t, gpu_core.UnswizzleRef):
        user.append({"swizzle": int(t.swizzle)})
      else:
        self.refuse(eqn, f"an SMEM allocation transformed by {type(t).__name__} (undone as {t}); "
                    "a case's SMEM transforms are plgpu.TilingTransform and then "
                    "plgpu.SwizzleTransform")
    kinds = [next(iter(x)) for x in user]
    if kinds not in ([], ["tiling"], ["swizzle"], ["tiling", "swizzle"]):
      self.refuse(eqn, f"an SMEM allocation with the transforms {kinds} in this order; a case's "
                  "SMEM transforms are at most one plgpu.TilingTransform and then one "
                  "plgpu.SwizzleTransform (a swizzle before the tiling is not modelled)")
    for x in user:
      if "tiling" in x:  # UntilingTransform.transform_type: the tiled shape -> the logical one
        k = len(x["tiling"])
        if len(shape) < 2 * k or list(shape[-k:]) != x["tiling"]:
          self.refuse(eqn, f"an SMEM allocation of tiled shape {list(shape)} that the tiling "
                      f"{x['tiling']} does not match")
        blocks = shape[-2 * k:-k]
        shape = shape[:-2 * k] + tuple(b * t for b, t in zip(blocks, x["tiling"]))
    return user, shape

  def alloc_of(self, aval, eqn, wanted: str | None, layout: tuple = ()) -> dict:
    """One allocation type -> a case's alloc; `layout`: the undo transforms of a transformed
    SMEM allocation (run_scoped's `ref_transforms` for it; refused for any other kind)."""
    from jax._src.pallas.mosaic_gpu import core as gpu_core  # pylint: disable=import-outside-toplevel
    inner = getattr(aval, "inner_aval", aval)
    dtype = getattr(inner, "dtype", None)
    shape = tuple(getattr(inner, "shape", ()))
    space = str(getattr(aval, "memory_space", ""))
    is_smem = "smem" in space.lower() and dtype is not None and not hasattr(dtype, "num_arrivals") \
        and not isinstance(dtype, (gpu_core.BarrierType, gpu_core.ClusterBarrierType))
    if layout and not is_smem:
      self.refuse(eqn, f"an allocation of type {aval} with the transforms {tuple(layout)} (a "
                  "case transforms SMEM allocations only: tiling, swizzle)")
    if isinstance(dtype, gpu_core.BarrierType):
      a = {"name": self.fresh("bar", wanted), "kind": "barrier",
           "num_arrivals": int(dtype.num_arrivals)}
    elif isinstance(dtype, gpu_core.ClusterBarrierType):
      a = {"name": self.fresh("cbar", wanted), "kind": "cluster_barrier",
           "collective_axes": axis_names_json(dtype.collective_axes),
           "num_arrivals": int(dtype.num_arrivals)}
      if dtype.leader_tracked:
        a["leader_tracked"] = True
    elif is_smem:
      if not shape:
        self.refuse(eqn, "a shape-() SMEM allocation (a case's SMEM allocations have rank 1 or more)")
      transforms, shape = self.smem_transforms(aval, layout, eqn)
      a = {"name": self.fresh("smem", wanted), "kind": "smem", "shape": list(shape),
           "dtype": str(dtype)}
      if transforms:
        a["transforms"] = transforms
      return a
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
    # One tuple of undo transforms per allocation (empty for an untransformed one).
    ref_transforms = tuple(eqn.params.get("ref_transforms", ()) or ())
    sub = dict(env)
    for cv, ov in zip(inner.constvars, eqn.invars):
      sub[cv] = self.value(env, ov)
    names = list(getattr(getattr(inner, "debug_info", None), "arg_names", None) or [])
    allocs = []
    for k, v in enumerate(inner.invars):
      wanted = names[k] if k < len(names) else None
      layout = tuple(ref_transforms[k] or ()) if k < len(ref_transforms) else ()
      a = self.alloc_of(v.aval, eqn, wanted, layout)
      allocs.append(a)
      sub[v] = Ref("alloc", a["name"], a.get("shape", ()), a, layout)
    op = {"op": "run_scoped"}
    axes = eqn.params.get("collective_axes", ())
    if axes:
      op["collective_axes"] = axis_names_json(axes)
    op["allocs"] = allocs
    op["body"] = self.walk(inner, sub)
    return op
