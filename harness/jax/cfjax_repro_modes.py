"""The modes of a `collfuzz repro` script: what a request asks for, and the script's main().

Request reads one generator request (cfjax_repro.generate): the mode (interpret, gpu, lower), the
predicted outcome as that mode sees it (in lower mode undefined behaviour and a compile or launch
error come after lowering: the script asserts that it lowers), the case's target, mesh, inputs and
outputs and what follows from them (x64, a hidden output, a reduced grid). emit_main writes the
script's main(): the steps each mode runs, one at a time as cfjax_execute.py runs them (mesh,
trace, interpret/lower/launch, run), and the assertion of the outcome at the end.
"""

from __future__ import annotations

import math

import cfjax_fill
from cfjax_case import grid_reducible, without_scratch_shapes
from cfjax_execute import AOT_SMEM_CAPACITY, ARCH_VERSION, SMEM_CAPACITY
from cfjax_repro_body import needs_x64
from cfjax_repro_src import Unsupported

# Seconds a predicted deadlock is given before the script concludes the kernel hangs.
DEADLOCK_SECONDS = 20

# A diagnostic's stage -> the step of the script that raises it.
STEP_OF_STAGE = {
    "mesh": "mesh", "trace": "trace", "interpret": "interpret", "run": "run",
    "estimate": "lower", "module": "lower", "lower": "lower", "verify": "lower",
    "dialect": "lower", "finalize": "lower", "compile": "launch", "launch": "launch",
}


class Request:
  """One request {"case", "mode", "expected", ...}, read: what the script is to show."""

  def __init__(self, req: dict):
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
        STEP_OF_STAGE.get(expected["diagnostic"].get("stage", "")) == "launch":
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
    reduce_grid = mode == "interpret" and points > 4 and grid_reducible(case)
    self.case = case
    self.mode = mode
    self.expected = expected
    self.kind = kind
    self.undefined = undefined
    self.later = later
    self.target = target
    self.entry = entry
    self.semantics = semantics
    self.arch = arch
    self.mesh = mesh
    self.inputs = inputs
    self.outputs = outputs
    self.keep_alive = keep_alive
    self.x64 = x64
    self.grid = grid
    self.points = points
    self.reduce_grid = reduce_grid


def emit_main(E, r: Request):
  """The script's main(): the steps of r.mode, then the assertion of r.kind."""
  mode, kind, x64, arch, grid = r.mode, r.kind, r.x64, r.arch, r.grid
  points, reduce_grid = r.points, r.reduce_grid
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
      # The hung kernel's threads (XLA's, not Python's daemons) would hold the interpreter at exit;
      # cfjax_repro_run.py, which runs many scripts in one process, exits that way itself.
      E(f"{ind}if not os.environ.get('COLLFUZZ_REPRO_IN_PROCESS'):")
      E(f"{ind}  sys.stdout.flush()")
      E(f"{ind}  os._exit(0)")
    else:
      E(f"{ind}check_outputs(jax.tree.leaves(results), inputs)")
  E("")
  E("")
  E('if __name__ == "__main__":')
  E("  main()")
