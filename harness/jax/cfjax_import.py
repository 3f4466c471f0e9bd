#!/usr/bin/env python3
"""A Pallas Mosaic GPU kernel in a Python file -> a collfuzz case (`collfuzz import`, docs/python.md).

    cfjax_import.py FILE NAME ARCH PROFILE JAX    answers one JSON line on stdout:
        {"case": CASE, "warnings": [...]}  or  {"error": "...", "code": 2|3}

FILE is loaded as a module (not as __main__). NAME (empty: `collfuzz_case`) names a top-level
function of it that takes no arguments and returns `(kernel, args)` or `(kernel, args, fills)`:
`kernel` is what `plgpu.kernel(...)` or `pl.pallas_call(...)` returned (or any function that calls
exactly one such kernel), `args` the arrays (or `jax.ShapeDtypeStruct`s) it is called with, and
`fills` (optional) one collfuzz fill per argument (`{"pattern": "iota"}`, ...; None: inferred). The
scripts `collfuzz repro` writes define `collfuzz_case` this way.

The kernel is traced (`jax.make_jaxpr`, nothing is compiled or run), the kernel call's equation is
found in the jaxpr, and its body's equations are walked: `run_scoped` (its allocations and
`collective_axes`), `copy_gmem_to_smem`, `copy_smem_to_gmem` (with the `commit_smem` right before
it and the `wait_smem_to_gmem(0)` right after it), any other `commit_smem` (an op of its own),
`swap` into an output or an SMEM allocation (`o_ref[...] = value`, `smem.at[0][...] = value`: a
vector_store, its value made of `get` loads of SMEM and inputs, constants, add/sub/mul/min/max
and `convert_element_type` (astype)), `commit_group` (`plgpu.commit_smem_to_gmem_group()`), any
other `wait_smem_to_gmem`, `barrier_arrive`, `barrier_wait`, `barrier_arrive_and_wait` (0.12.0.1),
`try_cluster_cancel` (its result an SMEM allocation, whole or `.at[1]`; `query_cluster_cancel`
is refused), `cond` from `pl.when`, `scan` from a `lax.fori_loop` with a static trip count (an
array it carries besides its index: the loop's `carry`), the `while` of a `plgpu.nd_loop` (an
`nd_loop`; any other `while` is refused), and the scalar
arithmetic of `lax.axis_index(...) * m + a` and comparisons that indices and conditions are made
of. Anything else is refused with the primitive's name and the user's source line (the equation's
source_info), exit code 2.

Fills: an argument gets a fill holding exactly its elements (cfjax_import_kernel.infer_fill):
iota, a constant or an arange where its numbers are one, else an explicit `values` fill of its
numbers; the fill given in `fills` wins; past 65,536 elements (or with NaN or infinities) and no
recipe fill, the case's default (iota) with a warning.

Where it lives: this file is the core (the entry points, the jaxpr walk and its dispatch table
primitive -> handler); each primitive family is a module of its own, a mixin of Importer:

    cfjax_import_values.py    ImportRefused, user_line, the symbolic values (Ref, Axis, Cond,
                              Unknown), ImporterBase (names, literal values, refuse)
    cfjax_import_index.py     scalar arithmetic of indices and conditions; ref indices
    cfjax_import_allocs.py    run_scoped and its allocation types
    cfjax_import_copies.py    copy_gmem_to_smem, copy_smem_to_gmem, commit_smem, commit_group,
                              wait_smem_to_gmem (which commit and wait a store absorbs:
                              pair_store_commits, pair_store_waits)
    cfjax_import_vectors.py   `ref[...] = value` (swap) into an output or SMEM: vector_store,
                              its value's loads (get), constants, add/sub/mul/min/max and
                              convert_element_type (astype: {"convert": ...})
    cfjax_import_barriers.py  barrier_arrive, barrier_wait, try_cluster_cancel, a barrier's
                              use
    cfjax_import_control.py   pl.when (cond), lax.fori_loop (scan; its carried array), warp_map,
                              inlined calls
    cfjax_import_ndloop.py    plgpu.nd_loop (its `while`: grid, collective axes, tiling, index
                              coordinates, local index, carry); any other while refused
    cfjax_import_kernel.py    the kernel call: mesh, target, inputs/outputs, fills -> the case
    cfjax_import_stale.py     the order of the loads and writes emitted: a vector value used
                              after a write of a ref it loads (a case would read the new
                              contents) is refused
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# pylint: disable=wrong-import-position
from cfjax_import_allocs import AllocsMixin  # noqa: E402
from cfjax_import_barriers import BarriersMixin  # noqa: E402
from cfjax_import_control import ControlMixin  # noqa: E402
from cfjax_import_copies import CopiesMixin  # noqa: E402
from cfjax_import_index import IndexMixin  # noqa: E402
from cfjax_import_kernel import build_case, find_kernel_eqns  # noqa: E402,F401
from cfjax_import_ndloop import NdLoopMixin  # noqa: E402
from cfjax_import_stale import StaleMixin  # noqa: E402
from cfjax_import_values import (  # noqa: E402,F401  (ImportRefused and the values: this module's API)
    Axis, Cond, ImportRefused, ImporterBase, Ref, Unknown, user_line)
from cfjax_import_vectors import VectorsMixin  # noqa: E402

DEFAULT_NAME = "collfuzz_case"


class Importer(IndexMixin, AllocsMixin, CopiesMixin, VectorsMixin, BarriersMixin, ControlMixin,
               NdLoopMixin, StaleMixin, ImporterBase):
  """Walks a kernel body's jaxpr into a case's ops; each primitive goes to its family's handler
  (PRIMITIVES below), a vector store's value (loads, constants, arithmetic of rank >= 1) to
  VectorsMixin.vector_eqn, the scalar arithmetic of indices and conditions to
  IndexMixin.scalar_eqn."""

  def walk(self, jaxpr, env: dict) -> list:
    ops = []
    self.pair_store_waits(jaxpr.eqns)
    self.pair_store_commits(jaxpr.eqns)
    for eqn in jaxpr.eqns:
      for o in eqn.outvars:
        self.defs[o] = eqn
      self.eqn(eqn, env, ops)
    return ops

  def eqn(self, eqn, env: dict, ops: list):
    name = eqn.primitive.name
    # The equation before this one (VectorsMixin.iota_cast: a layout cast right after its iota).
    self.previous_eqn, self.current_eqn = self.current_eqn, eqn
    if name not in PRIMITIVES and self.vector_eqn(eqn, env):
      return
    if self.scalar_eqn(eqn, env):
      return
    handler = PRIMITIVES.get(name)
    if handler is None:
      self.refuse(eqn, f"unsupported primitive `{name}` (a case holds run_scoped, "
                  "copy_gmem_to_smem, copy_smem_to_gmem, vector stores (`ref[...] = value`), "
                  "commit_smem, commit_smem_to_gmem_group, "
                  "wait_smem_to_gmem, barrier_arrive, barrier_wait, "
                  "barrier_arrive_and_wait, try_cluster_cancel, "
                  "pl.when, lax.fori_loop with a static trip count, plgpu.nd_loop, "
                  "pl.core_map over "
                  "plgpu.WarpMesh and lax.axis_index arithmetic)")
    handler(self, eqn, env, ops)


def _op(method):
  """A handler that appends the one case op `method` returns."""

  def handle(imp, eqn, env: dict, ops: list):
    ops.append(method(imp, eqn, env))
  return handle


# primitive name -> handler(importer, eqn, env, ops): what a kernel body's equation becomes.
PRIMITIVES = {
    "run_scoped": _op(AllocsMixin.run_scoped),
    "copy_gmem_to_smem": _op(CopiesMixin.copy_gmem_to_smem),
    "copy_smem_to_gmem": _op(CopiesMixin.copy_smem_to_gmem),
    "commit_smem": CopiesMixin.commit_smem,  # a store's, or a commit_smem op
    "commit_group": CopiesMixin.commit_group,  # plgpu.commit_smem_to_gmem_group()
    "swap": VectorsMixin.swap,  # ref[...] = value: a vector_store
    "wait_smem_to_gmem": CopiesMixin.wait_smem_to_gmem,
    "barrier_arrive": _op(BarriersMixin.barrier_op),
    "barrier_wait": _op(BarriersMixin.barrier_op),
    "barrier_arrive_and_wait": _op(BarriersMixin.barrier_op),  # JAX 0.12.0.1
    "try_cluster_cancel": _op(BarriersMixin.try_cluster_cancel),
    "query_cluster_cancel": BarriersMixin.query_cluster_cancel,  # refused: not modelled
    "cond": _op(ControlMixin.when),
    "scan": _op(ControlMixin.loop),
    "mpmd_map": _op(ControlMixin.warp_map),
    "pjit": ControlMixin.inline_call,
    "closed_call": ControlMixin.inline_call,
    "core_call": ControlMixin.inline_call,
    "jit": ControlMixin.inline_call,
    "while": NdLoopMixin.while_loop,  # plgpu.nd_loop's; any other is refused
}


# ---- the entry points

def import_kernel(file: str, name: str, arch: str, profile: str, jax_pin: str):
  """FILE's NAME() traced into a case: (the Importer, with its warnings; the case)."""
  imp = Importer(file)
  spec = importlib.util.spec_from_file_location("collfuzz_imported_kernel", file)
  if spec is None or spec.loader is None:
    raise ImportRefused(f"{file}: not a Python file")
  module = importlib.util.module_from_spec(spec)
  # As `python FILE` would: the file's directory comes first on the import path, so a kernel file
  # may import the helper modules beside it.
  here = os.path.dirname(os.path.abspath(file))
  sys.path.insert(0, here)
  with contextlib.redirect_stdout(sys.stderr):
    try:
      spec.loader.exec_module(module)
    except Exception as e:  # pylint: disable=broad-except
      raise ImportRefused(f"{file}: loading it raised {type(e).__name__}: {e}"
                          f"{_where(e, file)}") from e
    finally:
      sys.path.remove(here)
  fn_name = name or DEFAULT_NAME
  fn = getattr(module, fn_name, None)
  if fn is None or not callable(fn):
    candidates = sorted(n for n, v in vars(module).items()
                        if callable(v) and getattr(v, "__module__", None) == module.__name__
                        and not n.startswith("_"))
    raise ImportRefused(
        f"{file}: no function `{fn_name}` (FILE.py:NAME names a top-level function that takes no "
        f"arguments and returns (kernel, args) or (kernel, args, fills); the file defines: "
        f"{', '.join(candidates) or 'none'})")
  import jax  # pylint: disable=import-outside-toplevel
  with contextlib.redirect_stdout(sys.stderr):
    try:
      got = fn()
    except Exception as e:  # pylint: disable=broad-except
      raise ImportRefused(f"{file}: {fn_name}() raised {type(e).__name__}: {e}"
                          f"{_where(e, file)}") from e
  if not isinstance(got, tuple) or len(got) not in (2, 3) or not callable(got[0]):
    raise ImportRefused(f"{file}: {fn_name}() returned {type(got).__name__}; expected "
                        "(kernel, args) or (kernel, args, fills)")
  kernel, args = got[0], list(got[1])
  fills = list(got[2]) if len(got) == 3 and got[2] is not None else [None] * len(args)
  if len(fills) != len(args):
    raise ImportRefused(f"{file}: {fn_name}() returned {len(fills)} fills for {len(args)} args")
  with contextlib.redirect_stdout(sys.stderr):
    try:
      closed = jax.make_jaxpr(kernel)(*args)
    except Exception as e:  # pylint: disable=broad-except
      raise ImportRefused(f"{file}: tracing the kernel raised {type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}{_where(e, file)}") from e
  calls = find_kernel_eqns(closed.jaxpr, [])
  if len(calls) != 1:
    raise ImportRefused(f"{file}: {fn_name}()'s kernel makes {len(calls)} Pallas kernel calls; "
                        "a case is one plgpu.kernel or pl.pallas_call")
  call = calls[0]
  # An absent operand (`None`, as JAX's shipped matmuls take for a missing bias or scale) is no
  # input of the kernel: it is passed to the call as given and is not a ref of the case.
  present = [k for k, a in enumerate(args) if a is not None]
  for k in present:
    if not (hasattr(args[k], "shape") and hasattr(args[k], "dtype")):
      raise ImportRefused(f"{file}: {fn_name}() argument {k} is a {type(args[k]).__name__}; a "
                          "case's inputs are arrays (or None for an absent operand)")
  args = [args[k] for k in present]
  fills = [fills[k] for k in present]
  return imp, build_case(imp, call, args, fills, name or os.path.splitext(os.path.basename(file))[0],
                         arch, profile, jax_pin)


def _where(e: BaseException, file: str) -> str:
  tb = traceback.extract_tb(e.__traceback__)
  for fr in reversed(tb):
    if os.path.abspath(fr.filename) == os.path.abspath(file):
      return f" (at {fr.filename}:{fr.lineno})"
  return ""


def _answer(req: dict) -> dict:
  try:
    imp, case = import_kernel(req["file"], req.get("name", ""), req.get("arch", ""),
                              req.get("profile", ""), req.get("jax", ""))
    return {"case": case, "warnings": imp.warnings}
  except ImportRefused as e:
    return {"error": str(e), "code": 2}
  except Exception as e:  # pylint: disable=broad-except
    tb = traceback.extract_tb(e.__traceback__)
    at = f" ({tb[-1].filename}:{tb[-1].lineno})" if tb else ""
    return {"error": f"the importer failed: {type(e).__name__}: {e}{at}", "code": 3}


def serve() -> int:
  """--serve: one JSON request {"file", "name", "arch", "profile", "jax"} per line on stdin, one
  answer per line (tools/import_roundtrip.py imports many files in one process this way)."""
  import jax  # pylint: disable=import-outside-toplevel
  real_stdout = sys.stdout
  for line in sys.stdin:
    if not line.strip():
      continue
    jax.config.update("jax_enable_x64", False)  # a file may have turned it on
    with contextlib.redirect_stdout(sys.stderr):
      out = _answer(json.loads(line))
    real_stdout.write(json.dumps(out) + "\n")
    real_stdout.flush()
  return 0


def main(argv) -> int:
  if len(argv) == 2 and argv[1] == "--serve":
    return serve()
  if len(argv) != 6:
    sys.stdout.write(json.dumps({"error": "usage: cfjax_import.py FILE NAME ARCH PROFILE JAX",
                                 "code": 3}) + "\n")
    return 0
  _, file, name, arch, profile, jax_pin = argv
  real_stdout = sys.stdout
  with contextlib.redirect_stdout(sys.stderr):
    out = _answer({"file": file, "name": name, "arch": arch, "profile": profile, "jax": jax_pin})
  real_stdout.write(json.dumps(out) + "\n")
  real_stdout.flush()
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv))
