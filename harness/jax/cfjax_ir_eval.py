"""jax-ir, part 2: evaluating the lowered Mosaic GPU module for every CTA of the cluster.

The module (cfjax_ir_extract) is walked with the MLIR Python bindings that ship with jaxlib. The
host function runs once (memref descriptors of the kernel arguments, the TMA descriptors it builds
with `mosaic_gpu_init_tma_desc`); the `gpu.launch` body runs once per warpgroup of every CTA of the
modelled cluster, SIMT style: a value is either uniform or one value per lane of the warpgroup, and
`scf.if` / `scf.index_switch` on a lane-dependent condition run each side under a lane mask. Every
warpgroup is a coroutine; the schedule is the reference's canonical one (CTA rank ascending, then
warpgroup, each running until it blocks on a wait; a round without progress is a deadlock). Side
effects of one op happen lane by lane in lane order.

Memory: one flat integer address space. SMEM addresses (`!llvm.ptr<3>`) are offsets into the
executing CTA's dynamic SMEM; `mapa` gives a shared::cluster address, encoded as
(rank + 1) << 24 | offset. GMEM arrays and host allocas live far above. mbarriers live beside SMEM
(keyed by CTA and offset) and follow harness/sim/mbarrier.h exactly.

Anything not modelled raises Unsupported("op NAME") / ("ptx ...") and the case is `unavailable`.

Where the pieces live (docs/ir-executor.md, "Where the evaluator lives"): this module is the entry
point, `evaluate` (kernel arguments, the launch, the canonical schedule, the outcome record); the
machine, the op table and the compiler are cfjax_ir_core's; each op family registers its handlers
into the table from its own module (cfjax_ir_ops_arith, _convert, _llvm, _builtin, _func, _memref,
_gpu, _vector, _nvvm, _scf, _ptx), all imported here; the TMA / bulk copy engine is cfjax_ir_tma.
`Compiler` and `Machine` are re-exported here for the tests (tests/jax/ir_tests.py).
"""

from __future__ import annotations

import math
import re

import cfjax_case
import cfjax_fill
# The op families: importing each registers its handlers into cfjax_ir_core.OPS.
import cfjax_ir_ops_arith  # noqa: F401  pylint: disable=unused-import
import cfjax_ir_ops_builtin  # noqa: F401  pylint: disable=unused-import
import cfjax_ir_ops_convert  # noqa: F401  pylint: disable=unused-import
import cfjax_ir_ops_func  # noqa: F401  pylint: disable=unused-import
import cfjax_ir_ops_gpu  # noqa: F401  pylint: disable=unused-import
import cfjax_ir_ops_llvm  # noqa: F401  pylint: disable=unused-import
import cfjax_ir_ops_memref  # noqa: F401  pylint: disable=unused-import
import cfjax_ir_ops_nvvm  # noqa: F401  pylint: disable=unused-import
import cfjax_ir_ops_ptx  # noqa: F401  pylint: disable=unused-import
import cfjax_ir_ops_scf  # noqa: F401  pylint: disable=unused-import
import cfjax_ir_ops_vector  # noqa: F401  pylint: disable=unused-import
from cfjax_ir_core import (ARGS_BASE, GMEM_BASE, GMEM_STRIDE, LANES, OPS, Compiler, Machine,  # noqa: F401
                           Thread, elem_bytes, memref_type, run_steps, uniform)
from cfjax_ir_extract import Unsupported

__all__ = ["evaluate", "Compiler", "Machine", "OPS"]


def evaluate(module, case, allocs, op_paths) -> dict:
  """The outcome of the module for the case (kind completed / deadlock), or raises Unsupported."""
  mach = Machine(case, allocs, op_paths, re.compile(r"cfop(\d+)"))
  comp = Compiler(mach)
  funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
  entry = None
  for f in funcs:
    if len(f.regions[0].blocks) and "llvm.emit_c_interface" in f.attributes:
      entry = f
  if entry is None:
    raise Unsupported("no kernel entry function")
  block = entry.regions[0].blocks[0]
  ops = list(block.operations)
  launch = [o for o in ops if o.operation.name == "gpu.launch"]
  if len(launch) != 1:
    raise Unsupported("op gpu.launch (not exactly one)")
  launch = launch[0]
  host_steps = []
  for o in ops:
    if o.operation.name == "gpu.launch":
      break
    host_steps.append(comp.op(o))
  # GMEM: one buffer per kernel argument (the memref casts the host function makes carry
  # `mosaic_gpu.from_kernel_arg_idx`), matched in order with the case's inputs, then its outputs;
  # arguments of neither (GMEM semaphores, the keep-alive output) get zeroed buffers of their type.
  # An argument with no such cast is one the kernel never reads: while inputs are pending, the
  # next input (its loads folded away: `0 * x_ref[...]`, or a store of constants only).
  arg_types = {}
  for o in ops:
    if o.operation.name == "builtin.unrealized_conversion_cast" and \
        "mosaic_gpu.from_kernel_arg_idx" in o.operation.attributes:
      k = int(str(o.operation.attributes["mosaic_gpu.from_kernel_arg_idx"]).split(":")[0])
      mt = memref_type(o.operation.results[0].type)
      arg_types[k] = (list(mt.shape), str(mt.element_type))
  pending_in, pending_out = list(case.inputs), list(range(len(case.outputs)))
  arg_ptrs = ARGS_BASE
  mach.output_buffers = {}
  for k in range(max(arg_types, default=-1) + 1):
    shape, et = arg_types.get(k, ([1], "i8"))
    base = GMEM_BASE + k * GMEM_STRIDE
    if pending_in and (k not in arg_types or _same_array(pending_in[0], shape, et)):
      spec = pending_in.pop(0)
      data = bytearray(cfjax_fill.fill_bytes(spec))
    elif not pending_in and pending_out and _same_array(case.outputs[pending_out[0]], shape, et):
      spec = case.outputs[pending_out[0]]
      mach.output_buffers[pending_out.pop(0)] = len(mach.gmem)
      data = bytearray(_nbytes(spec))
    else:
      spec = {}
      data = bytearray(max(1, int(math.prod(shape) * elem_bytes(et))))
    mach.gmem.append((base, data, spec))
    mach.mem[arg_ptrs + 8 * k] = base
  if pending_in or pending_out:
    raise Unsupported("kernel arguments that do not match the case's arrays")
  eargs = list(block.arguments)
  host = Thread(mach, 0, 0, [1, 1, 1], [1, 1, 1])
  host.env = [None] * 0
  # Compile the launch body before sizing the environment.
  lops = launch.operation
  body = lops.regions[0].blocks[0]
  body_steps = comp.block(body)
  # The block-wide barrier at the entry of each thread-collective run_scoped: where canonicalize
  # merged it into the barrier before it, no op is left to attribute its wait to.
  for path, cop, _ in case.walk():
    if (cop["op"] == "run_scoped" and case.mesh.thread_name is not None
        and cop.get("collective_axes") in ([case.mesh.thread_name], case.mesh.thread_name)
        and path in op_paths and op_paths.index(path) not in mach.barrier_labels):
      raise Unsupported(f"block sync of {path} merged into the barrier before it (canonicalize)")
  nslots = len(comp.slots) + 8
  host.env = [None] * (nslots + 64)
  host.env[comp.slot(eargs[0])] = 0
  host.env[comp.slot(eargs[1])] = arg_ptrs
  host.env.extend([None] * (len(comp.slots) + 8 - len(host.env)))
  for s in run_steps(host, host_steps):
    raise Unsupported("a host step blocked")
  # Launch operands, through the op's accessors.
  lv = launch.opview if hasattr(launch, "opview") else launch
  val = lambda v: None if v is None else uniform(host.env[comp.slot(v)], "launch operand")  # noqa: E731
  grid = [val(lv.gridSizeX), val(lv.gridSizeY), val(lv.gridSizeZ)]
  block_sz = [val(lv.blockSizeX), val(lv.blockSizeY), val(lv.blockSizeZ)]
  cluster = [val(lv.clusterSizeX), val(lv.clusterSizeY), val(lv.clusterSizeZ)]
  if cluster[0] is None:
    cluster = [1, 1, 1]
  smem_size = val(lv.dynamicSharedMemorySize) or 0
  if list(cluster) != mach.cluster3:
    raise Unsupported(f"the launch's cluster {cluster} differs from the case's {mach.cluster3}")
  if block_sz[1] != 1 or block_sz[2] != 1 or block_sz[0] % LANES:
    raise Unsupported("block shape")
  mach.num_wgs = block_sz[0] // LANES
  # cuLaunchKernelEx's limits are the driver's: a launch past them is not evaluated.
  if block_sz[0] > 1024 or grid[1] > 65535 or grid[2] > 65535 or math.prod(cluster) > 16:
    raise Unsupported("launch: block, grid or cluster past the driver's limits (cuLaunchKernelEx is "
                      "not run)")
  sentinel = cfjax_fill.SMEM_SENTINEL
  for _ in range(mach.num_ctas):
    mach.smem.append(bytearray([sentinel]) * int(smem_size))
    mach.bars.append({})
    mach.waits.append([])
    mach.sync_gen.append(0)
    mach.sync_arrived.append(0)
  # Block arguments of the launch body.
  bargs = list(body.arguments)
  threads = []
  for cta in range(mach.num_ctas):
    for wg in range(mach.num_wgs):
      th = Thread(mach, cta, wg, block_sz, grid)
      th.env = list(host.env) + [None] * (len(comp.slots) + 8 - len(host.env))
      c = th.cluster_id
      vals_b = [c[0], c[1], c[2], th.tid, 0, 0, grid[0], grid[1], grid[2], block_sz[0], 1, 1,
                0, 0, 0, cluster[0], cluster[1], cluster[2]]
      for a, v in zip(bargs, vals_b):
        th.env[comp.slot(a)] = v
      threads.append((th, run_steps(th, body_steps)))
  # The canonical schedule.
  live = list(threads)
  while live:
    progressed = False
    nxt = []
    for th, gen in live:
      before = mach.steps
      try:
        next(gen)
        nxt.append((th, gen))
      except StopIteration:
        progressed = True
        # A CTA's buffers are read when its last warpgroup finishes: the end of its scopes, as
        # the reference snapshots them (later multicast bytes from other CTAs are not seen).
        mach.finished[th.cta] += 1
        if mach.finished[th.cta] == mach.num_wgs:
          mach.snapshots[th.cta] = bytes(mach.smem[th.cta])
        continue
      if mach.steps != before:
        progressed = True
    live = nxt
    if not progressed and live:
      # A full round without one step: every live warpgroup waits on something nothing will bring.
      break
  deadlock = bool(live)
  return _outcome(mach, case, deadlock)


_IR_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
              "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2", "int4": "i4", "uint4": "i4",
              "int8": "i8", "uint8": "i8", "int16": "i16", "uint16": "i16", "int32": "i32",
              "uint32": "i32", "int64": "i64", "uint64": "i64"}


def _same_array(spec, shape, et) -> bool:
  return [int(d) for d in spec["shape"]] == list(shape) and _IR_DTYPES.get(spec["dtype"]) == et


def _nbytes(spec):
  n = math.prod(int(d) for d in spec["shape"]) if spec["shape"] else 1
  return (n * cfjax_fill.DTYPE_BITS[spec["dtype"]] + 7) // 8


def _outcome(mach: Machine, case, deadlock) -> dict:
  ctas = []
  smem_allocs = [(n, a) for n, a in mach.allocs.items() if a["kind"] == "smem"]
  bar_allocs = [(n, a) for n, a in mach.allocs.items() if a["kind"] != "smem"]
  for rank, coords in enumerate(mach.ctas):
    bars = []
    for name, a in bar_allocs:
      unit = 1
      if a["kind"] == "barrier" and not a["orders_tensor_core"]:
        unit = LANES
      for i in range(a["num_barriers"]):
        b = mach.bars[rank].get(a["offset"] + 8 * i)
        if b is None:
          continue
        pend = b.pending
        pend_u = (pend + unit - 1) // unit if pend >= 0 else -((-pend + unit - 1) // unit)
        bars.append({"alloc": name, "index": i, "count": b.expected // unit,
                     "arrivals": b.arrivals // unit, "armed": b.armed, "received": b.received,
                     "phases": b.phases, "pending": pend_u, "tx": b.tx})
    bufs = []
    for name, a in smem_allocs:
      nb = _nbytes({"shape": a["shape"], "dtype": a["dtype"]})
      if a["offset"] + nb > len(mach.smem[rank]):
        raise Unsupported(f"smem buffer {name} ends past the kernel's dynamic SMEM")
      mem = mach.snapshots.get(rank, mach.smem[rank])
      data = bytes(mem[a["offset"]:a["offset"] + nb])
      bufs.append({"alloc": name, "hex": data.hex(), "digest": cfjax_fill.fnv1a64(data)})
    waits = sorted(mach.waits[rank], key=lambda w: w["thread"])
    ctas.append({"rank": rank, "coords": list(coords), "barriers": bars, "waits": waits,
                 "buffers": bufs})
  out = {"kind": "deadlock" if deadlock else "completed", "ctas": ctas}
  if case.outputs:
    written = cfjax_case.written_ranges(case)
    recs = []
    for k, spec in enumerate(case.outputs):
      data = bytes(mach.gmem[mach.output_buffers[k]][1])
      recs.append({"name": spec["name"], "hex": data.hex(), "digest": cfjax_fill.fnv1a64(data),
                   "written": written.get(spec["name"], [])})
    out["outputs"] = recs
  return out
