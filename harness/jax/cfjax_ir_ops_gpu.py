"""jax-ir ops of the `gpu` dialect inside the `gpu.launch` body: thread, block and cluster ids
and dims (grid index 0's cluster), the dynamic SMEM base, and `gpu.barrier` (a block-wide sync
of the CTA's warpgroups, recorded as a `block_sync` wait where it carries a case op's label).
The one `gpu.launch` itself is taken apart by cfjax_ir_eval.evaluate; a nested one is not modelled.
Registers into cfjax_ir_core.OPS: gpu.launch (nested: unsupported), thread_id, block_dim,
cluster_block_id, block_id, cluster_dim_blocks, grid_dim, cluster_id, dynamic_shared_memory,
terminator, barrier.
"""

from __future__ import annotations

from cfjax_ir_core import loc_label, register, static_shape_strides
from cfjax_ir_extract import Unsupported


@register("gpu.launch")
def launch(comp, op, ins, outs):
  raise Unsupported("op gpu.launch (nested)")


def _id(comp, op, outs, f):
  dim = str(op.attributes["dimension"])
  d = "xyz".index(dim.split("<")[-1].rstrip(">").strip()[-1])
  o = outs[0]

  def step(th):
    th.env[o] = f(th, d)
  return comp.simple(step)


@register("gpu.thread_id")
def thread_id(comp, op, ins, outs):
  return _id(comp, op, outs, lambda th, d: th.tid if d == 0 else 0)


@register("gpu.block_dim")
def block_dim(comp, op, ins, outs):
  return _id(comp, op, outs, lambda th, d: th.block[d])


@register("gpu.cluster_block_id")
def cluster_block_id(comp, op, ins, outs):
  return _id(comp, op, outs, lambda th, d: th.cluster_id[d])


@register("gpu.block_id")
def block_id(comp, op, ins, outs):
  return _id(comp, op, outs, lambda th, d: th.cluster_id[d])  # grid index 0's cluster


@register("gpu.cluster_dim_blocks")
def cluster_dim_blocks(comp, op, ins, outs):
  return _id(comp, op, outs, lambda th, d: th.mach.cluster3[d])


@register("gpu.grid_dim")
def grid_dim(comp, op, ins, outs):
  return _id(comp, op, outs, lambda th, d: th.grid[d])


@register("gpu.cluster_id")
def cluster_id(comp, op, ins, outs):
  return _id(comp, op, outs, lambda th, d: 0)


@register("gpu.dynamic_shared_memory")
def dynamic_shared_memory(comp, op, ins, outs):
  _, shape, strides, _ = static_shape_strides(op.results[0].type)
  return comp.const(outs, (0, 0, 0, (1 << 30,), (1,)))


@register("gpu.terminator")
def terminator(comp, op, ins, outs):
  return None


@register("gpu.barrier")
def barrier(comp, op, ins, outs):
  label = loc_label(str(op.location), comp.m.label_re)
  mach = comp.m
  mach.barrier_labels.add(label)

  def step(th):
    cta = th.cta
    rec = None
    if label is not None and label < len(mach.op_paths):
      key = ("sync", cta, th.wg)
      ph = mach.wait_counts.get(key, 0)
      mach.wait_counts[key] = ph + 1
      rec = {"thread": th.wg, "op": mach.op_paths[label], "barrier": "block_sync",
             "phase": ph, "completed": False}
      mach.waits[cta].append(rec)
    gen = mach.sync_gen[cta]
    mach.sync_arrived[cta] += 1
    if mach.sync_arrived[cta] == mach.num_wgs:
      mach.sync_arrived[cta] = 0
      mach.sync_gen[cta] += 1
      if rec is None:
        # The kernel's entry barrier orders nothing in the canonical schedule: the warpgroup
        # that releases it yields, so that the next round starts again from CTA 0.
        yield
    while mach.sync_gen[cta] == gen:
      yield
    if rec is not None:
      rec["completed"] = True
  step.gen = True
  return step
