"""Running one case through JAX and turning what happened into an outcome (docs/outcome-format.md).

Stages are told apart by running JAX's phases one at a time:

  mesh       plgpu.kernel(...) / pl.pallas_call(...)   (plgpu.kernel builds the plgpu.Mesh here)
  trace      jax.jit(kernel).trace(*inputs)            (the body is traced: Python checks, abstract eval)
  interpret  .lower() and .compile() in interpret mode (the interpreter builds its computation)
  run        calling the compiled computation          (interpret-mode callbacks)

In `lower` and `gpu` modes, errors of `.lower()` are split by where they were raised (the
traceback): the resource estimator -> `estimate`, a Pallas lowering rule -> `lower`, the Mosaic GPU
dialect lowering -> `dialect`, MLIR verification -> `verify`, the host-side descriptor setup after the
dialect lowering -> `finalize`, anything else in module construction -> `module` (cfjax_stage, with
`Stage` and `unwrap`). Errors of `.compile()` and of the call are `launch` (the C++ side compiles and
launches the kernel there).

The `ir` mode is cfjax_ir's (`_run_mosaic` hands it the case); cfjax_ir imports only modules below
this one (cfjax_stage, cfjax_ir_*), never this one.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
import traceback
from typing import Any

import numpy as np

import cfjax_case
import cfjax_device_fault
import cfjax_fill
import cfjax_smem_layout
from cfjax_case import Case, CaseError, grid_reducible
from cfjax_stage import Stage, lowering_stage, unwrap  # noqa: F401  (unwrap: re-exported)

# Up to this many grid points are run as given; a larger grid is run as a grid of ones (after the
# full grid was traced), since nothing in a case depends on the grid index.
MAX_GRID_POINTS = 4

# The (major, minor) compute capability Mosaic GPU is told in lower and ir modes.
ARCH_VERSION = {"sm_80": (8, 0), "sm_90a": (9, 0), "sm_100a": (10, 0)}

# What a device of the arch reports as `shared_memory_per_block_optin` (CUDA C++ Programming Guide,
# "Technical Specifications per Compute Capability": 163 KB for 8.0, 227 KB for 9.0 and 10.0).
SMEM_CAPACITY = {"sm_80": 163 * 1024, "sm_90a": 227 * 1024, "sm_100a": 227 * 1024}
AOT_SMEM_CAPACITY = 227 * 1024  # what core._launch assumes when the device does not say

# Buffers larger than this get no digest (the digest is optional; the hex is always there).
MAX_DIGEST_BYTES = 1 << 20


def crash(reason: str) -> dict:
  return {"kind": "crash", "reason": reason}


MAX_TRACEBACK_FRAMES = 20
MAX_TRACEBACK_BYTES = 4096


def trimmed_traceback(exc: BaseException) -> str:
  """The outcome's optional `traceback`: the exception's traceback (its chain's last one first
  raised), its last 20 frames and its last 4 KB (docs/outcome-format.md)."""
  frames = traceback.format_list(traceback.extract_tb(exc.__traceback__)[-MAX_TRACEBACK_FRAMES:])
  text = "".join(frames) + "".join(traceback.format_exception_only(type(exc), exc))
  data = text.encode("utf-8", "replace")
  if len(data) > MAX_TRACEBACK_BYTES:
    text = "...\n" + data[-MAX_TRACEBACK_BYTES:].decode("utf-8", "ignore")
  return text


def unavailable(reason: str) -> dict:
  return {"kind": "unavailable", "reason": reason}


# ---- outcome pieces

def _hexed(data: bytes) -> dict:
  out = {"hex": data.hex()}
  if len(data) <= MAX_DIGEST_BYTES:
    out["digest"] = cfjax_fill.fnv1a64(data)
  return out


def outputs_record(case: Case, values) -> list[dict]:
  written = cfjax_case.written_ranges(case)
  recs = []
  for spec, val in zip(case.outputs, values):
    arr = np.asarray(val).astype(cfjax_fill.numpy_dtype(spec["dtype"]), copy=False)
    rec = {"name": spec["name"]}
    rec.update(_hexed(cfjax_fill.pack(arr, spec["dtype"])))
    rec["written"] = written.get(spec["name"], [])
    recs.append(rec)
  return recs


def diagnostic_outcome(stage: str, exc: BaseException, op: str | None,
                       original: BaseException | None = None) -> dict:
  if original is not None:
    name, msg = type(original).__name__, str(original)
  else:
    name, msg = unwrap(exc)
  diag = {"stage": stage, "exception": name, "message": msg}
  if op:
    diag["op"] = op
  return {"kind": "rejected", "diagnostic": diag}


def smem_buffer_bytes(snap, alloc: dict) -> bytes:
  """An SMEM buffer's `hex`: its physical bytes (docs/outcome-format.md). Interpret mode holds a
  buffer at its logical shape (it drops tiling and swizzle on every access), so a transformed
  allocation's snapshot is laid out as the hardware lays it out (cfjax_smem_layout: tiled order,
  then swizzled); a snapshot already of the tiled shape is only swizzled."""
  pad = cfjax_fill.SMEM_SENTINEL >> 4
  if not cfjax_smem_layout.has_transforms(alloc):
    return cfjax_fill.pack(snap, alloc["dtype"], pad_nibble=pad)
  arr = np.asarray(snap)
  logical = tuple(int(d) for d in alloc["shape"])
  if arr.shape != logical and arr.shape == cfjax_smem_layout.physical_shape(alloc):
    _, swizzle = cfjax_smem_layout.transforms_of(alloc)
    return cfjax_smem_layout.swizzle_bytes(cfjax_fill.pack(arr, alloc["dtype"], pad_nibble=pad),
                                           swizzle)
  return cfjax_smem_layout.physical_bytes(arr, alloc, pad_nibble=pad)


# ---- running

# Interpret mode blocks forever on a wait that never completes. When a kernel thread is blocked on
# a barrier and no interpret-mode callback has run for this long, nothing can wake it: the run is
# reported as a hang (outcome `timeout`) at once instead of after the harness's --timeout (which
# kills and restarts the whole process, JAX's import included).
HANG_SECONDS = float(os.environ.get("CFJAX_HANG_SECONDS", "10"))
# Seconds without progress after which a kernel whose every running thread is blocked in a
# barrier wait is a deadlock (_run_watched, cfjax_hooks.every_kernel_thread_waits): interpret
# mode runs every TMA copy (and its arrival) on the thread that issues it, so when all of them
# wait nothing can arrive.
ALL_BLOCKED_SECONDS = float(os.environ.get("CFJAX_ALL_BLOCKED_SECONDS", "1"))
# Seconds without progress after which threads stuck in an XLA dispatch from inside a host
# callback (or Pallas threads whose computation does not run) are interpret mode's own hang
# (cfjax_hooks.threads_in_stuck_dispatch, docs/jax-divergences.md #18): such a dispatch takes
# milliseconds when it runs.
STUCK_DISPATCH_SECONDS = float(os.environ.get("CFJAX_STUCK_DISPATCH_SECONDS", "3"))


class KernelHang(Exception):
  """Raised by the deadlock detector: the kernel's threads wait on barriers nobody will arrive on.
  `jax_own`: the stall is interpret mode's own (threads stuck in _deallocate_barrier's XLA dispatch,
  docs/jax-divergences.md #18), which says nothing of the kernel: the run is unavailable."""

  def __init__(self, message: str, jax_own: bool = False):
    super().__init__(message)
    self.jax_own = jax_own


class Executor:
  """Runs cases in one mode: interpret, gpu, lower or ir (cfjax_ir)."""

  def __init__(self, mode: str):
    self.mode = mode
    # Set when a hung kernel's thread could not be woken: the process answers, then exits (the
    # harness starts a fresh one for the next case).
    self.exit_after_answer = False
    import jax  # pylint: disable=import-outside-toplevel
    self.jax = jax
    jax.config.update("jax_traceback_filtering", "off")
    import cfjax_translate  # pylint: disable=import-outside-toplevel
    self.tr = cfjax_translate
    if mode == "interpret":
      import cfjax_hooks  # pylint: disable=import-outside-toplevel
      from jax._src.pallas.mosaic_gpu.interpret.params import InterpretGPUParams  # pylint: disable=import-outside-toplevel
      self.hooks = cfjax_hooks
      self.params = InterpretGPUParams()
      cfjax_hooks.install()
    else:
      self.hooks = None
      self.params = None
    self.info = {"jax_version": jax.__version__}
    try:
      import jaxlib  # pylint: disable=import-outside-toplevel
      self.info["jaxlib_version"] = jaxlib.__version__
    except Exception:  # pylint: disable=broad-except
      pass

  # -- helpers

  @contextlib.contextmanager
  def _x64(self, case: Case):
    """64-bit types for a case that needs them. `jax.enable_x64` is a thread-local context, and
    interpret mode runs the CTAs of a cluster on other Python threads, which saw 32-bit values
    (an empty AssertionError in store_buffer_content: f32 value, f64 buffer). The global flag,
    set for this case only (the executor runs one case at a time), reaches every thread."""
    if not self.tr.needs_x64(case):
      yield
      return
    before = bool(self.jax.config.jax_enable_x64)
    self.jax.config.update("jax_enable_x64", True)
    try:
      yield
    finally:
      self.jax.config.update("jax_enable_x64", before)

  @contextlib.contextmanager
  def _arch(self, case: Case):
    """In lower mode, make Mosaic GPU lower for the case's arch (there is no device to ask).

    Two things Mosaic GPU asks the device: the arch (`utils._infer_arch`) and, in `core._launch`,
    the SMEM capacity (`shared_memory_per_block_optin`, 227 KiB when the device has none, as a CPU
    device). A device of the case's arch reports SMEM_CAPACITY[arch]; JAX's own test hook
    `core.artificial_shared_memory_limit` caps the capacity at that value for the call."""
    if self.mode not in ("lower", "ir"):
      yield
      return
    from jax.experimental.mosaic.gpu import core as mgpu_core  # pylint: disable=import-outside-toplevel
    from jax.experimental.mosaic.gpu import utils as mgpu_utils  # pylint: disable=import-outside-toplevel
    arch = ARCH_VERSION[case.target["arch"]]
    capacity = SMEM_CAPACITY[case.target["arch"]]
    limit = getattr(mgpu_core, "artificial_shared_memory_limit", None)
    if limit is None and capacity < AOT_SMEM_CAPACITY:
      raise CaseError("this JAX has no mosaic.gpu.core.artificial_shared_memory_limit: lower mode "
                      f"cannot give Mosaic GPU the SMEM capacity of {case.target['arch']}")
    orig = mgpu_utils._infer_arch  # pylint: disable=protected-access
    mgpu_utils._infer_arch = lambda: arch  # pylint: disable=protected-access
    try:
      with limit(capacity) if limit is not None else contextlib.nullcontext():
        yield
    finally:
      mgpu_utils._infer_arch = orig  # pylint: disable=protected-access

  def _inputs(self, case: Case):
    jnp = self.jax.numpy
    return [jnp.asarray(cfjax_fill.fill_array(spec)) for spec in case.inputs]

  def _trace(self, case: Case, params):
    """(translation, traced) for a case; raises Stage for mesh and trace errors."""
    t = self.tr.Translation(case, params, keep_alive=self.mode != "interpret")
    try:
      kernel = t.make_kernel()
    except CaseError:
      raise
    except Exception as e:  # pylint: disable=broad-except
      raise Stage("mesh", e) from e
    args = self._inputs(case)
    try:
      traced = self.jax.jit(kernel).trace(*args)
    except CaseError:
      raise
    except Exception as e:  # pylint: disable=broad-except
      raise Stage("trace", e, getattr(e, "_cfjax_op", None)) from e
    return t, traced, args

  # -- per mode

  def _device_arch(self) -> str | None:
    """The arch of the GPU that gpu mode compiles for ("sm_90a" on an H200), None if unknown."""
    if not hasattr(self, "_device_arch_cache"):
      arch = None
      try:
        cc = str(self.jax.devices("cuda")[0].compute_capability)
        major, minor = (int(v) for v in cc.split(".")[:2])
        arch = next((a for a, v in ARCH_VERSION.items() if v == (major, minor)), f"sm_{major}{minor}")
      except Exception:  # pylint: disable=broad-except
        pass
      self._device_arch_cache = arch
    return self._device_arch_cache

  def run(self, case_json: Any) -> dict:
    start = time.monotonic()
    try:
      case = Case.from_json(case_json)
      # gpu mode compiles for the device it has: a case for another arch is not run there (as the
      # cuda executor does), or an sm_80 case would be held against the sm_80 reference while
      # the H200 compiles it for sm_90a (the first GPU run's campaign reported such false findings).
      device_arch = self._device_arch() if self.mode == "gpu" else None
      if device_arch is not None and case.target["arch"] != device_arch:
        return {"kind": "unavailable",
                "reason": f"the case targets {case.target['arch']}; this device is {device_arch} "
                          "(jax-gpu compiles for the device it has)",
                "info": dict(self.info)}
      with self._x64(case), self._arch(case):
        if self.mode == "interpret":
          out = self._run_interpret(case)
        else:
          out = self._run_mosaic(case)
    except Stage as s:
      if os.environ.get("CFJAX_DEBUG"):
        traceback.print_exception(s.exc, file=sys.stderr)
      out = diagnostic_outcome(s.stage, s.exc, s.op, getattr(s, "original", None))
      original = getattr(s, "original", None)
      has_frames = original is not None and original.__traceback__ is not None
      out["traceback"] = trimmed_traceback(original if has_frames else s.exc)
    except CaseError as e:
      out = crash(f"the adapter cannot translate the case: {e}")
    except Exception as e:  # pylint: disable=broad-except
      out = crash(f"adapter error: {type(e).__name__}: {e}\n{traceback.format_exc()}")
      out["traceback"] = trimmed_traceback(e)
    info = dict(self.info)
    info.update(out.pop("_info", {}))
    info["elapsed_ms"] = str(int((time.monotonic() - start) * 1000))
    out["info"] = info
    return out

  def _run_interpret(self, case: Case) -> dict:
    hooks = self.hooks
    notes = []
    t, traced, args = self._trace(case, self.params)
    points = math.prod(case.mesh.grid) if case.mesh.grid else 1
    full = None  # the kernel with the case's grid, built (not run) for its interpret-stage errors
    if points > MAX_GRID_POINTS and grid_reducible(case.raw):
      notes.append(f"grid {list(case.mesh.grid)} traced and built as given, run as a grid of ones")
      full = (t, traced)
      t, traced, args = self._trace(self.tr.reduced_grid_case(case), self.params)
    rec = hooks.Recorder(t.op_paths, t.run_scoped_allocs)
    hooks.reset_interpret_state()
    try:
      with hooks.active(rec):
        built = t
        try:
          if full is not None:
            # Errors of building the interpreter name the grid (a mesh's repeated axis names:
            # "Invalid grid (2, 3, 2) ..."): build the case's own grid first, then run the ones.
            built = full[0]
            full[1].lower().compile()
            built = t
          compiled = traced.lower().compile()
        except CaseError:
          raise
        except Exception as e:  # pylint: disable=broad-except
          ns = getattr(e, "_cfjax_name_stack", None)
          label = hooks.label_of_name_stack(ns) if ns else None
          op = (built.op_paths[label] if label is not None and label < len(built.op_paths)
                else None)
          raise Stage("interpret", e, op) from e
        try:
          results = self._run_watched(
              lambda: [np.asarray(r) for r in self.jax.tree.leaves(compiled(*args))])
        except KernelHang as h:
          if h.jax_own:
            # JAX's own hang (a bug of interpret mode, corpus-jax-probes/jax-bugs/): the kernel
            # did not run to an outcome, so nothing is compared (counted per reason).
            return {"kind": "unavailable", "reason": "interpret mode hung itself: " + str(h)}
          return {"kind": "timeout", "reason": str(h)}
        except Exception as e:  # pylint: disable=broad-except
          s = Stage("run", e, rec.failure_op)
          s.original = rec.failure  # type: ignore[attr-defined]
          raise s from e
    finally:
      hooks.reset_interpret_state()
    out = {"kind": "completed", "ctas": self._ctas(case, rec), "outputs": outputs_record(case, results)}
    if notes:
      out["_info"] = {"note": "; ".join(notes)}
    return out

  def _run_watched(self, fn):
    """fn() on a thread of its own, watched by the deadlock detector (HANG_SECONDS; and
    ALL_BLOCKED_SECONDS once every running kernel thread is blocked in a barrier wait)."""
    box: dict[str, Any] = {}

    def target():
      try:
        box["value"] = fn()
      except BaseException as e:  # pylint: disable=broad-except
        box["error"] = e

    runner = threading.Thread(target=target, name="cfjax-kernel", daemon=True)
    runner.start()
    hooks = self.hooks
    last, since = hooks.progress(), time.monotonic()
    while True:
      runner.join(0.1)
      if not runner.is_alive():
        break
      now, moved = time.monotonic(), hooks.progress()
      if moved != last:
        last, since = moved, now
        continue
      waiting = hooks.blocked_waiters()
      stalled = now - since
      if (waiting and stalled >= HANG_SECONDS) or stalled >= 2 * HANG_SECONDS or \
          (waiting and stalled >= ALL_BLOCKED_SECONDS and hooks.every_kernel_thread_waits()) or \
          (stalled >= STUCK_DISPATCH_SECONDS and
           (hooks.threads_in_deallocation_dispatch() or any(hooks.threads_in_stuck_dispatch()))):
        elsewhere = hooks.threads_stuck_elsewhere()
        dispatching = hooks.threads_in_deallocation_dispatch()  # before the abort changes them
        in_callback, starved = hooks.threads_in_stuck_dispatch()
        if not waiting and not elsewhere:
          continue  # no kernel thread in interpret-mode code: not a stall of the kernel
        hooks.abort_blocked()
        runner.join(5.0)
        if runner.is_alive():
          # Threads stuck outside a barrier wait cannot be woken: answer, then exit (the harness
          # starts a fresh process for the next case).
          self.exit_after_answer = True
        what = ("the kernel hangs" if not elsewhere else
                f"interpret mode stalls ({elsewhere} thread(s) stuck in interpret-mode callbacks "
                f"outside a barrier wait, {dispatching} of them in _deallocate_barrier's XLA "
                "dispatch: JAX's own hang, docs/jax-divergences.md #18)" if dispatching else
                f"interpret mode stalls ({elsewhere} thread(s) stuck in interpret-mode callbacks "
                f"outside a barrier wait; {in_callback} thread(s) dispatching an XLA computation "
                f"from inside a host callback and {starved} Pallas-thread computation(s) that do "
                "not run: JAX's own hang, docs/jax-divergences.md #18)" if in_callback or starved
                else
                f"interpret mode stalls ({elsewhere} thread(s) stuck in interpret-mode callbacks "
                "outside a barrier wait: JAX's own hang, docs/jax-divergences.md #18, or a kernel "
                "deadlock)")
        raise KernelHang(
            f"{what}: {waiting} thread(s) blocked on barrier waits and no progress for "
            f"{stalled:.0f} s (collfuzz's interpret-mode deadlock detector, CFJAX_HANG_SECONDS="
            f"{HANG_SECONDS:g}; twice that when no thread waits on a barrier; "
            f"CFJAX_ALL_BLOCKED_SECONDS={ALL_BLOCKED_SECONDS:g} when all of them do, "
            f"CFJAX_STUCK_DISPATCH_SECONDS={STUCK_DISPATCH_SECONDS:g} when threads are stuck in "
            "a dispatch)",
            jax_own=bool(elsewhere and (dispatching or in_callback or starved)))
    if "error" in box:
      raise box["error"]
    return box["value"]

  def _ctas(self, case: Case, rec) -> list[dict]:
    barriers = self.hooks.barrier_summary(rec)
    smem = [a for a in case.allocs() if a.get("kind") == "smem"]
    ctas = []
    for rank, coords in enumerate(case.mesh.cta_coords()):
      buffers = []
      for a in smem:
        snap = rec.snapshots.get((a["name"], rank))
        if snap is None:
          continue
        b = {"alloc": a["name"]}
        b.update(_hexed(smem_buffer_bytes(snap, a)))
        buffers.append(b)
      # Per thread in program order; threads in index order (threads run concurrently, so the
      # global order of their waits is not deterministic).
      waits = sorted(({k: w[k] for k in ("thread", "op", "barrier", "phase", "completed")}
                      for w in rec.waits if w["block"] == rank), key=lambda w: w["thread"])
      bars = sorted(barriers.get(rank, []), key=lambda b: (self._alloc_order(case, b["alloc"]), b["index"]))
      ctas.append({"rank": rank, "coords": list(coords), "barriers": bars, "waits": waits,
                   "buffers": buffers})
    return ctas

  @staticmethod
  def _alloc_order(case: Case, name: str) -> int:
    for i, a in enumerate(case.allocs()):
      if a.get("name") == name:
        return i
    return 1 << 30

  def _run_mosaic(self, case: Case) -> dict:
    if self.mode == "ir":
      import cfjax_ir  # pylint: disable=import-outside-toplevel
      return cfjax_ir.run(self, case)
    t, traced, args = self._trace(case, None)
    try:
      if self.mode == "lower":
        lowered = traced.lower(lowering_platforms=("cuda",))
      else:
        lowered = traced.lower()
    except CaseError:
      raise
    except Exception as e:  # pylint: disable=broad-except
      raise Stage(lowering_stage(e), e) from e
    if self.mode == "lower":
      return {"kind": "unavailable",
              "reason": "lowered for CUDA without an error; lower mode does not compile or run"}
    try:
      compiled = lowered.compile()
      results = compiled(*args)
      results = [np.asarray(r) for r in self.jax.tree.leaves(results)][:len(case.outputs)]
    except Exception as e:  # pylint: disable=broad-except
      # A device fault loses the process's CUDA context (cfjax_device_fault): a crash of this
      # case, and a fresh process for the next, instead of 50 cases failing after it.
      if cfjax_device_fault.is_sticky(str(e)) or not cfjax_device_fault.context_alive(self.jax):
        self.exit_after_answer = True
        if cfjax_device_fault.is_sticky(str(e)):
          return cfjax_device_fault.fault_outcome(e)
      raise Stage("launch", e) from e
    ctas = []
    for rank, coords in enumerate(case.mesh.cta_coords()):
      bufs = [{"alloc": a["name"], "observed": False} for a in case.allocs() if a.get("kind") == "smem"]
      ctas.append({"rank": rank, "coords": list(coords), "buffers": bufs})
    _ = t
    return {"kind": "completed", "ctas": ctas, "outputs": outputs_record(case, results),
            "_info": {"note": "gpu mode reads outputs only; SMEM buffers are not observed"}}
