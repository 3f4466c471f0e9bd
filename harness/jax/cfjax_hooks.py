"""Instrumentation of JAX's GPU interpret mode (jax/_src/pallas/mosaic_gpu/interpret, 0.11.2).

What it adds, without changing what the interpreter computes or when it synchronises:

* SMEM sentinel. Scoped SMEM buffers start as the byte 0xA5 instead of NaN: the interpreter asks
  `jaxpr_interpret.get_uninitialized_array(shape, dtype, memory_space, ...)` for the initial value
  of each scoped allocation while it builds its computation; for MemorySpace.SMEM we return the
  sentinel array. No op is added to the kernel, so barrier accounting is untouched.
* Buffer snapshots. Each scoped buffer allocation (callback `_allocate_buffer`) is mapped to the
  case allocation it belongs to: the run_scoped equation carries the name scope of its case op
  (cfjax_translate emits every op inside `jax.named_scope("cfop<k>")`), and within one run_scoped
  a thread allocates its non-barrier buffers in declaration order. When a buffer is deallocated
  (`GPUSharedMemory.deallocate_buffer`, once per sharing thread) its contents are copied; the last
  deallocation, i.e. the end of the scope for every thread, wins.
* Barrier statistics. Barrier objects created by `_allocate_barriers` / `_allocate_cluster_barriers`
  are mapped to (allocation, index, CTA); `Barrier.arrive` is counted; `_barrier_wait` records
  each wait (thread, op, phase, completed).
* Failures. The first exception handed to `GPUSharedMemory.set_failed` (the original exception a
  callback raised, before XLA wraps it) is kept, with the case op whose callback raised it.
* Deadlock detection. Every hooked callback counts as progress, and the threads blocked inside
  `Barrier._wait` are known: when some are blocked and nothing has moved for a while (the
  executor's CFJAX_HANG_SECONDS), no thread of the kernel can ever wake them, and `abort_blocked()`
  fails their waits with JAX's own `Barrier.abort()` (cfjax_execute reports a hang).

The patches are installed once and do nothing unless a Recorder is active.
"""

from __future__ import annotations

import collections
import re
import threading
from typing import Any

import numpy as np

import cfjax_fill

_LABEL_RE = re.compile(r"cfop(\d+)")

_installed = False
_active: "Recorder | None" = None

# The deadlock detector's state: a progress counter (bumped by every hooked callback; a lost
# increment between threads only delays a detection) and the barriers with threads blocked in
# their wait (id -> [barrier, number of waiting threads]).
_progress = [0]
_blocked: dict[int, list] = {}
_blocked_lock = threading.Lock()


def _tick():
  _progress[0] += 1


def progress() -> int:
  """A counter that moves whenever a hooked interpret-mode callback runs."""
  return _progress[0]


def blocked_waiters() -> int:
  """How many kernel threads are blocked waiting on a barrier now."""
  with _blocked_lock:
    return sum(n for _, n in _blocked.values())


def _threads_outside_waits(in_place) -> int:
  """Threads with a frame for which in_place(code) holds and none in a barrier wait."""
  import sys  # pylint: disable=import-outside-toplevel
  stuck = 0
  for frame in sys._current_frames().values():  # pylint: disable=protected-access
    found, in_wait = False, False
    f = frame
    while f is not None:
      code = f.f_code
      if code.co_name == "_blocking_wait" and code.co_filename == __file__:
        in_wait = True
        break
      found = found or in_place(code)
      f = f.f_back
    stuck += found and not in_wait
  return stuck


def every_kernel_thread_waits() -> bool:
  """Whether every running kernel thread is blocked in a barrier wait, or waits for the threads
  it started (a warp_map's warps), and at least one waits on a barrier. A kernel thread is one
  that runs a Pallas thread's computation (a `_run_jaxpr` frame of interpret mode's thread_map);
  interpret mode runs its callbacks, TMA copies and their arrivals included, on that same thread.
  A thread blocked in a barrier wait counts as a kernel thread whether thread_map started it or
  not (a kernel of one Pallas thread in one CTA runs without thread_map).
  A thread that finished has no such frame; one that computes or compiles has one and is in no
  wait. So when this holds and nothing moves, nothing can ever arrive: a deadlock."""
  import sys  # pylint: disable=import-outside-toplevel
  kernel, blocked = 0, 0
  for frame in sys._current_frames().values():  # pylint: disable=protected-access
    innermost = None  # the innermost thread_map frame: _run_jaxpr or _thread_map_callback
    in_wait = False
    f = frame
    while f is not None:
      code = f.f_code
      if code.co_name == "_blocking_wait" and code.co_filename == __file__:
        in_wait = True
      elif innermost is None and code.co_name in ("_run_jaxpr", "_thread_map_callback") and \
          code.co_filename.replace("\\", "/").endswith("interpret/thread_map.py"):
        innermost = code.co_name
      f = f.f_back
    if in_wait:  # a kernel thread, whether thread_map started it or not (one Pallas thread)
      kernel += 1
      blocked += 1
    elif innermost == "_run_jaxpr":
      return False  # a kernel thread that runs, compiles or is stuck outside a wait
  return blocked > 0 and blocked == kernel


def _in_interpret(code) -> bool:
  path = code.co_filename.replace("\\", "/")
  # Interpret mode's own code, and the thread_map it shares with TPU interpret mode.
  return "mosaic_gpu/interpret" in path or path.endswith("pallas/mosaic/interpret/thread_map.py")


def threads_in_stuck_dispatch() -> tuple[int, int]:
  """(in callbacks, starved): threads outside a barrier wait stuck in an XLA dispatch (a frame of
  jax's dispatch.py `apply_primitive` or pxla.py `__call__`) that is newer than a host callback's
  frame (callback.py), and those whose dispatch is the Pallas thread's own computation
  (thread_map's `_run_jaxpr`) with no callback inside it, i.e. a computation that does not run.
  With many Pallas threads interpret mode starves itself: the XLA CPU client does not run those
  computations while the other threads' callbacks block (docs/jax-divergences.md #18). Seen in
  `_deallocate_barrier` (indexing a jax.Array), in thread_map's nested `_thread_map_callback`
  (`jnp.int32(i)` for each warp of a warp_map, JAX 0.11.2), and as warp threads whose
  computations never start (0.12.0.1). A kernel thread that computes is inside its computation
  for microseconds between callbacks, never for the detector's seconds."""
  import sys  # pylint: disable=import-outside-toplevel
  in_callback, starved = 0, 0
  for frame in sys._current_frames().values():  # pylint: disable=protected-access
    dispatch = False
    f = frame
    while f is not None:
      code = f.f_code
      path = code.co_filename.replace("\\", "/")
      if code.co_name == "_blocking_wait" and code.co_filename == __file__:
        break
      if path.endswith("/dispatch.py") and code.co_name == "apply_primitive" or \
          path.endswith("/pxla.py") and code.co_name == "__call__":
        dispatch = True
      elif path.endswith("/callback.py") and code.co_name in ("io_callback_impl",
                                                              "_wrapped_callback"):
        in_callback += dispatch
        break
      elif code.co_name == "_run_jaxpr" and path.endswith("interpret/thread_map.py"):
        starved += dispatch
        break
      f = f.f_back
  return in_callback, starved


def threads_stuck_elsewhere() -> int:
  """Threads inside interpret-mode code that are not blocked in a barrier wait (a stall of the
  interpreter itself, docs/jax-divergences.md #18, rather than of the kernel)."""
  return _threads_outside_waits(_in_interpret)


def threads_in_deallocation_dispatch() -> int:
  """Threads stuck in interpret mode's `_deallocate_barrier` callback outside a barrier wait: it
  indexes a jax.Array (interpret/gpu_callbacks.py, `flat_allocation_keys[i, :]` in JAX 0.11.2),
  which dispatches an XLA computation from inside a host callback; with ~32 Pallas threads that
  computation never runs (docs/jax-divergences.md #18, corpus-jax-probes/jax-bugs/)."""
  return _threads_outside_waits(
      lambda code: code.co_name == "_deallocate_barrier" and _in_interpret(code))


def abort_blocked() -> int:
  """Fails every blocked barrier wait (JAX's Barrier.abort); returns how many threads it woke."""
  with _blocked_lock:
    entries = [(b, n) for b, n in _blocked.values()]
  for barrier, _ in entries:
    try:
      barrier.abort()
    except Exception:  # pylint: disable=broad-except
      pass
  return sum(n for _, n in entries)


def _thread_key(thread) -> tuple[int, int]:
  return int(np.asarray(thread.block_id)), int(np.asarray(thread.warpgroup_id))


def _key_tuple(key) -> tuple[int, ...]:
  return tuple(int(x) for x in np.asarray(key).reshape(-1).tolist())


def _is_first_cluster(mesh_location) -> bool:
  """Whether a callback runs for the cluster at grid index 0 (the modelled one)."""
  try:
    return all(int(np.asarray(c)) == 0 for c in mesh_location.cluster_coords)
  except Exception:  # pylint: disable=broad-except
    return True


def label_of(source_info) -> int | None:
  """The innermost case-op label in a source_info's name stack."""
  if source_info is None:
    return None
  found = _LABEL_RE.findall(str(getattr(source_info, "name_stack", "")))
  return int(found[-1]) if found else None


def label_of_name_stack(name_stack) -> int | None:
  found = _LABEL_RE.findall(str(name_stack))
  return int(found[-1]) if found else None


class Recorder:
  """What one interpret-mode run of a case showed."""

  def __init__(self, op_paths: list, run_scoped_allocs: dict):
    self.op_paths = op_paths  # label -> JSON path (filled while tracing)
    self.run_scoped_allocs = run_scoped_allocs  # run_scoped path -> allocs
    self.lock = threading.Lock()
    self.counters: dict = collections.defaultdict(int)
    self.buffer_keys: dict = {}  # key tuple -> (alloc name, block id)
    self.snapshots: dict = {}  # (alloc name, block id) -> np.ndarray
    self.barriers: dict = {}  # id(Barrier) -> [Barrier, alloc name, index, block id]
    self.arrivals: dict = collections.Counter()  # id(Barrier) -> arrivals
    self.waits: list = []  # dicts, in the order they started
    self.failure: BaseException | None = None
    self.failure_op: str | None = None

  def path_of(self, label: int | None) -> str | None:
    if label is None or label >= len(self.op_paths):
      return None
    return self.op_paths[label]

  def _next_alloc(self, thread, source_info, barrier_like: bool) -> dict | None:
    path = self.path_of(label_of(source_info))
    allocs = self.run_scoped_allocs.get(path)
    if allocs is None:
      return None
    kinds = [a for a in allocs
             if (a.get("kind") in ("barrier", "cluster_barrier")) == barrier_like]
    with self.lock:
      k = (_thread_key(thread), path, barrier_like)
      i = self.counters[k]
      self.counters[k] = i + 1
    return kinds[i] if i < len(kinds) else None

  def note_failure_op(self, exc: BaseException, source_info):
    with self.lock:
      if self.failure is exc and self.failure_op is None:
        self.failure_op = self.path_of(label_of(source_info))


def _with_failure_op(fn):
  """Wraps a runtime callback so the failing case op is recorded with the failure."""
  def wrapper(*args, **kwargs):
    _tick()
    try:
      return fn(*args, **kwargs)
    except Exception as e:
      rec = _active
      if rec is not None:
        rec.note_failure_op(e, kwargs.get("source_info"))
      raise
  wrapper.__wrapped__ = fn
  wrapper.__name__ = getattr(fn, "__name__", "wrapper")
  return wrapper


def install():
  """Installs the patches (idempotent). Imports the interpret-mode modules."""
  global _installed
  if _installed:
    return
  from jax._src.pallas.mosaic_gpu import core as mgpu_core  # pylint: disable=g-import-not-at-top
  from jax._src.pallas.mosaic_gpu.interpret import gpu_callbacks as gc
  from jax._src.pallas.mosaic_gpu.interpret import jaxpr_interpret as ji
  from jax._src.pallas.mosaic_gpu.interpret import shared_memory as sm
  import jax.numpy as jnp

  # -- SMEM sentinel
  orig_uninit = ji.get_uninitialized_array

  def get_uninitialized_array(shape, dtype, memory_space, uninitialized_memory):
    if _active is not None and memory_space == mgpu_core.MemorySpace.SMEM:
      name = str(jnp.dtype(dtype))
      if name in cfjax_fill.DTYPE_BITS:
        return jnp.asarray(cfjax_fill.sentinel_array(shape, name))
    return orig_uninit(shape, dtype, memory_space, uninitialized_memory)

  ji.get_uninitialized_array = get_uninitialized_array

  # -- buffer allocation -> case allocation
  orig_alloc_buffer = gc._allocate_buffer  # pylint: disable=protected-access

  def _allocate_buffer(token, mesh_location, thread, allocation_request_as_array, value,
                       source_info=None):
    token, key = orig_alloc_buffer(token, mesh_location, thread, allocation_request_as_array,
                                   value, source_info=source_info)
    rec = _active
    try:
      if rec is not None and _is_first_cluster(mesh_location):
        a = rec._next_alloc(thread, source_info, barrier_like=False)  # pylint: disable=protected-access
        if a is not None and a.get("kind") == "smem":
          with rec.lock:
            rec.buffer_keys[_key_tuple(key)] = (a["name"], _thread_key(thread)[0])
    except Exception:  # pylint: disable=broad-except
      pass  # observation must never change what the interpreter does
    return token, key

  gc._allocate_buffer = _with_failure_op(_allocate_buffer)  # pylint: disable=protected-access

  orig_dealloc = sm.GPUSharedMemory.deallocate_buffer

  def deallocate_buffer(self, key, logging_info=None):
    rec = _active
    try:
      if rec is not None:
        where = rec.buffer_keys.get(_key_tuple(key.as_np_array))
        if where is not None:
          with self.lock:
            buff = self.mem.get(key)
            content = None if buff is None else np.array(buff.content, copy=True)
          if content is not None:
            with rec.lock:
              rec.snapshots[where] = content
    except Exception:  # pylint: disable=broad-except
      pass
    return orig_dealloc(self, key, logging_info=logging_info)

  sm.GPUSharedMemory.deallocate_buffer = deallocate_buffer

  # -- barriers
  def _register_barriers(rec, keys, alloc, cluster):
    shared = gc._get_shared_memory()  # pylint: disable=protected-access
    for i, k in enumerate(np.asarray(keys).reshape(-1, np.asarray(keys).shape[-1])):
      obj = shared.mem.get(sm.HostAllocationKey.from_array(np.asarray(k)))
      if obj is None:
        continue
      with rec.lock:
        if cluster and isinstance(obj, sm.ClusterBarrier):
          for block, sub in enumerate(obj.barriers):
            rec.barriers.setdefault(id(sub), [sub, alloc["name"], i, block])
        elif isinstance(obj, sm.Barrier):
          rec.barriers.setdefault(id(obj), [obj, alloc["name"], i, int(k[2])])

  orig_alloc_barriers = gc._allocate_barriers  # pylint: disable=protected-access

  def _allocate_barriers(*, token, mesh_location, thread, source_info=None, **kwargs):
    token, keys = orig_alloc_barriers(token=token, mesh_location=mesh_location, thread=thread,
                                      source_info=source_info, **kwargs)
    rec = _active
    try:
      if rec is not None and _is_first_cluster(mesh_location):
        a = rec._next_alloc(thread, source_info, barrier_like=True)  # pylint: disable=protected-access
        if a is not None:
          _register_barriers(rec, keys, a, cluster=False)
    except Exception:  # pylint: disable=broad-except
      pass
    return token, keys

  gc._allocate_barriers = _with_failure_op(_allocate_barriers)  # pylint: disable=protected-access

  orig_alloc_cluster = gc._allocate_cluster_barriers  # pylint: disable=protected-access

  def _allocate_cluster_barriers(*, token, mesh_location, thread, source_info=None, **kwargs):
    token, keys = orig_alloc_cluster(token=token, mesh_location=mesh_location, thread=thread,
                                     source_info=source_info, **kwargs)
    rec = _active
    try:
      if rec is not None and _is_first_cluster(mesh_location):
        a = rec._next_alloc(thread, source_info, barrier_like=True)  # pylint: disable=protected-access
        if a is not None:
          _register_barriers(rec, keys, a, cluster=True)
    except Exception:  # pylint: disable=broad-except
      pass
    return token, keys

  gc._allocate_cluster_barriers = _with_failure_op(_allocate_cluster_barriers)  # pylint: disable=protected-access

  orig_arrive = sm.Barrier.arrive

  def arrive(self, *args, **kwargs):
    _tick()
    rec = _active
    if rec is not None and id(self) in rec.barriers:
      with rec.lock:
        rec.arrivals[id(self)] += 1
    return orig_arrive(self, *args, **kwargs)

  sm.Barrier.arrive = arrive

  orig_blocking_wait = sm.Barrier._wait  # pylint: disable=protected-access

  def _blocking_wait(self, *args, **kwargs):
    with _blocked_lock:
      entry = _blocked.setdefault(id(self), [self, 0])
      entry[1] += 1
    _tick()
    try:
      return orig_blocking_wait(self, *args, **kwargs)
    finally:
      with _blocked_lock:
        entry[1] -= 1
        if entry[1] == 0 and _blocked.get(id(self)) is entry:
          del _blocked[id(self)]
      _tick()

  sm.Barrier._wait = _blocking_wait  # pylint: disable=protected-access

  orig_wait = gc._barrier_wait  # pylint: disable=protected-access

  def _barrier_wait(token, mesh_location, thread, allocation_key_as_array, source_info=None):
    rec = _active
    entry = None
    if rec is not None:
      try:
        shared = gc._get_shared_memory()  # pylint: disable=protected-access
        obj = shared.mem.get(sm.HostAllocationKey.from_array(np.asarray(allocation_key_as_array)))
        if isinstance(obj, sm.ClusterBarrier):
          obj = obj.barriers[int(np.asarray(thread.block_id))]
        info = rec.barriers.get(id(obj))
        if info is not None:
          with obj.cv:
            phase = obj.last_observed_phase_by_thread.get(thread, 0)
          block, wg = _thread_key(thread)
          entry = {"block": block, "thread": wg, "op": rec.path_of(label_of(source_info)) or "",
                   "barrier": f"{info[1]}[{info[2]}]", "phase": int(phase), "completed": False}
          with rec.lock:
            rec.waits.append(entry)
      except Exception:  # pylint: disable=broad-except
        entry = None  # observation must never change what the interpreter does
    out = orig_wait(token, mesh_location, thread, allocation_key_as_array, source_info=source_info)
    if entry is not None:
      entry["completed"] = True
    return out

  gc._barrier_wait = _with_failure_op(_barrier_wait)  # pylint: disable=protected-access

  # -- the failing op of other runtime callbacks
  for name in ("_barrier_arrive", "_deallocate_barrier", "_deallocate_buffer", "copy_gmem_to_smem",
               "copy_smem_to_gmem", "wait_smem_to_gmem", "commit_smem", "_get", "_swap"):
    if hasattr(gc, name):
      setattr(gc, name, _with_failure_op(getattr(gc, name)))

  # -- the original exception of a failed run
  orig_set_failed = sm.GPUSharedMemory.set_failed

  def set_failed(self, exception, failed_thread=None, top_level=True):
    rec = _active
    if rec is not None:
      with rec.lock:
        if rec.failure is None:
          rec.failure = exception
    return orig_set_failed(self, exception, failed_thread, top_level)

  sm.GPUSharedMemory.set_failed = set_failed

  # -- the failing op of interpreter-construction errors ("interpret" stage)
  for name in dir(ji.JaxprInterpreter):
    if not (name.startswith("_interpret_") and name.endswith("_p")):
      continue
    orig = getattr(ji.JaxprInterpreter, name)

    def make(orig):
      def method(self, eqn, *args, **kwargs):
        try:
          return orig(self, eqn, *args, **kwargs)
        except Exception as e:
          if not hasattr(e, "_cfjax_name_stack"):
            try:
              e._cfjax_name_stack = str(eqn.source_info.name_stack)  # pylint: disable=protected-access
            except Exception:  # pylint: disable=broad-except
              pass
          raise
      method.__name__ = orig.__name__
      return method

    setattr(ji.JaxprInterpreter, name, make(orig))

  _installed = True


class active:
  """Context manager: record into `rec` while the block runs."""

  def __init__(self, rec: Recorder):
    self.rec = rec

  def __enter__(self):
    global _active
    _active = self.rec
    return self.rec

  def __exit__(self, *exc):
    global _active
    _active = None
    return False


def reset_interpret_state():
  """Clears JAX's global interpret-mode state (needed after a failed or interrupted run)."""
  from jax._src.pallas.mosaic_gpu.interpret import gpu_callbacks as gc  # pylint: disable=g-import-not-at-top
  try:
    gc.reset_gpu_interpret_mode_state()
  except Exception:  # pylint: disable=broad-except
    pass


def barrier_summary(rec: Recorder) -> dict[int, list[dict]]:
  """Block id -> barrier records (docs/outcome-format.md), without byte fields."""
  out: dict[int, list[dict]] = collections.defaultdict(list)
  for bid, (obj, alloc, index, block) in rec.barriers.items():
    count = int(obj.num_arrivals)
    out[block].append({
        "alloc": alloc, "index": int(index), "count": count,
        "arrivals": int(rec.arrivals.get(bid, 0)), "phases": int(obj.phase),
        "pending": count - int(obj.arrivals_count),
    })
  return out


__all__ = ["Recorder", "install", "active", "reset_interpret_state", "barrier_summary",
           "label_of", "label_of_name_stack", "progress", "blocked_waiters", "abort_blocked",
           "threads_stuck_elsewhere", "threads_in_deallocation_dispatch",
           "every_kernel_thread_waits", "threads_in_stuck_dispatch"]
_ = Any
