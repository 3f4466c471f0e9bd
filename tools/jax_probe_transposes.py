#!/usr/bin/env python3
"""What Mosaic GPU makes of TMA copies through a transposed SMEM ref (issue 24, item 5).

    JAX_PLATFORMS=cpu .venv-jax/bin/python tools/jax_probe_transposes.py [lower|interpret]
    JAX_PLATFORMS=cpu .venv-jax-0.12.0.1/bin/python tools/jax_probe_transposes.py [lower|interpret]

For every non-identity permutation of a float32 SMEM scratch of rank 2, 3 and 4, with no transforms,
a 1-D tiling (32,), a 2-D tiling (8, 32), a 128-byte swizzle alone and a tiled swizzle, written
`smem.transpose(p)` and `plgpu.transpose_ref(smem, p)`, on the copy into SMEM (g2s) or the store
out of it (s2g): `lower` lowers the kernel for CUDA on this CPU (nothing runs) under Lane and
Warpgroup semantics and prints "OK" or the exception; `interpret` runs the method spelling in GPU
interpret mode and compares the output with numpy (`x.transpose(argsort(p))` into the scratch,
`x.transpose(p)` out of it). Last, a summary: the outcomes grouped by rank, whether the
permutation keeps the last dim, the transforms, the spelling, the direction and the semantics.
The findings are in docs/case-format.md ("Transposed SMEM refs"): no expectation of a corpus case
is copied from this output. 1,160 lowerings and 290 interpret runs per release (2026-12-07).
"""

import collections
import itertools
import math
import re
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.mosaic.gpu import utils as mgpu_utils
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax._src.pallas.mosaic_gpu import core as mgpu_core
from jax._src.pallas.mosaic_gpu.interpret.params import InterpretGPUParams

warnings.filterwarnings("ignore")
mgpu_utils._infer_arch = lambda: (9, 0)  # pylint: disable=protected-access  (no GPU here)
mgpu_core._SMEM_SIZE_BOUND = 232448  # pylint: disable=protected-access

TRANSFORMS = {
    "none": (),
    "tile1": (plgpu.TilingTransform((32,)),),
    "tile2": (plgpu.TilingTransform((8, 32)),),
    "swz": (plgpu.SwizzleTransform(128),),
    "tswz": (plgpu.TilingTransform((8, 32)), plgpu.SwizzleTransform(128)),
}


def kernel(sshape, perm, kind, api, direction, sem, interpret):
  view = tuple(sshape[p] for p in perm)

  def seen(r):
    return plgpu.transpose_ref(r, perm) if api == "plgpu" else r.transpose(perm)

  def body(x_ref, o_ref, smem, bar):
    plgpu.copy_gmem_to_smem(x_ref, seen(smem) if direction == "g2s" else smem, bar)
    plgpu.barrier_wait(bar)
    plgpu.copy_smem_to_gmem(smem if direction == "g2s" else seen(smem), o_ref)
    plgpu.wait_smem_to_gmem(0)

  xs, os_ = (view, sshape) if direction == "g2s" else (sshape, view)
  k = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(os_, jnp.float32),
                   scratch_types=[plgpu.SMEM(sshape, jnp.float32, transforms=TRANSFORMS[kind]),
                                  plgpu.Barrier()],
                   compiler_params=plgpu.CompilerParams(lowering_semantics=sem),
                   **({"interpret": InterpretGPUParams()} if interpret else {}))
  x = np.arange(math.prod(xs), dtype=np.float32).reshape(xs)
  want = x.transpose(np.argsort(perm)) if direction == "g2s" else x.transpose(perm)
  return k, jnp.asarray(x), want


def outcome(mode, k, x, want):
  try:
    if mode == "interpret":
      return "RAN " + ("match" if np.array_equal(np.asarray(jax.jit(k)(x)), want) else "MISMATCH")
    jax.jit(k).trace(x).lower(lowering_platforms=("cuda",))
    return "OK"
  except Exception as e:  # pylint: disable=broad-exception-caught
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def main():
  mode = sys.argv[1] if len(sys.argv) > 1 else "lower"
  L = plgpu.LoweringSemantics
  groups = collections.defaultdict(collections.Counter)
  for sshape in ((64, 32), (2, 64, 32), (2, 2, 64, 32)):
    for perm in itertools.permutations(range(len(sshape))):
      if perm == tuple(range(len(sshape))):
        continue
      for kind in TRANSFORMS:
        for api in ("method", "plgpu"):
          if mode == "interpret" and api == "plgpu":
            continue
          for direction in ("g2s", "s2g"):
            for sem in ((L.Lane, L.Warpgroup) if mode == "lower" else (L.Lane,)):
              k, x, want = kernel(sshape, perm, kind, api, direction, sem, mode == "interpret")
              r = outcome(mode, k, x, want)
              print(f"{sshape} {perm} {kind} {api} {direction} {sem.name} -> {r}", flush=True)
              short = re.sub(r"it is \d+", "it is N", re.sub(r" shape Ref.*", "", r))[:70]
              keeps = perm[-1] == len(sshape) - 1
              groups[(len(sshape), keeps, kind, api, direction, sem.name)][short] += 1
  print("\nrank, keeps the last dim, transforms, spelling, direction, semantics: outcomes")
  for key in sorted(groups):
    print(key, dict(groups[key]))


if __name__ == "__main__":
  main()
