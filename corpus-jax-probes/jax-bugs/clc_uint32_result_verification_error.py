"""A known JAX bug: plgpu.try_cluster_cancel with a uint32[4] result ref.

Pallas checks only that the result ref holds 128 bits (primitives.py, try_cluster_cancel_lowering:
`bits != 128` raises a TypeError). A uint32[4] ref passes that check, and then the Mosaic GPU
dialect's verifier rejects `mosaic_gpu.try_cluster_cancel`, whose operand must be a 1-D memref of
i8: "Pallas encountered an internal verification error. Please file a bug ... operand #0 must be
1D memref of 8-bit signless integer values, but got 'memref<4xi32, ...>'". A uint8[16] ref of the
same 16 bytes lowers. What JAX should do: accept any 16-byte result ref (bitcast it to i8), or
reject the others with a Pallas error that names the dtype.

collfuzz's case format cannot express cluster launch control yet (issue "Cluster shared memory,
cluster launch control and Blackwell's 2-CTA MMA"), so this script is the bug's reproduction, and
ci/known-jax-bugs.json (`clc_uint32_result_verification_error`) points here. Checked on JAX
0.11.2 and 0.12.0.1, on a CPU machine: it lowers for sm_100a without a GPU.

Run: python THIS_FILE.py -> exits 0 when JAX lowers both result refs (the bug is fixed), else
raises AssertionError naming the ref that failed and JAX's message. `--expect-bug` inverts it for
the test command (tests/jax/test_known_bugs.py): exit 0 while the bug is still there.
"""

import sys

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.mosaic.gpu import utils as mgpu_utils


def make_kernel(result_dtype, result_len):
  """A 2-CTA cluster over a grid of 4: the cluster's leader cancels one pending cluster into a
  16-byte SMEM result, waits on the barrier the result completes, and decodes it
  (test_cluster_launch_control's pattern, Pallas form)."""

  def body(out_ref):
    del out_ref

    def scope(result_ref, barrier_ref):
      plgpu.try_cluster_cancel(result_ref, barrier_ref, collective_axes=("cluster",))
      plgpu.barrier_wait(barrier_ref)
      plgpu.query_cluster_cancel(result_ref, grid_names=("g",))

    pl.run_scoped(scope, plgpu.SMEM((result_len,), result_dtype), plgpu.Barrier(num_arrivals=1))

  return plgpu.kernel(body, out_type=(jax.ShapeDtypeStruct((1,), jnp.float32),), grid=(4,),
                      grid_names=("g",), cluster=(2,), cluster_names=("cluster",))


def lowering_error(result_dtype, result_len):
  """None when the kernel lowers for CUDA, else (exception class, message)."""
  try:
    jax.jit(make_kernel(result_dtype, result_len)).trace().lower(lowering_platforms=("cuda",))
  except Exception as e:  # pylint: disable=broad-except
    return type(e).__name__, str(e)
  return None


def main():
  expect_bug = "--expect-bug" in sys.argv[1:]
  # No GPU to ask: lower for sm_100a (cluster launch control is Blackwell's).
  mgpu_utils._infer_arch = lambda: (10, 0)  # pylint: disable=protected-access
  control = lowering_error(jnp.uint8, 16)
  assert control is None, f"JAX {jax.__version__}: uint8[16] did not lower either: {control}"
  got = lowering_error(jnp.uint32, 4)
  if expect_bug:
    assert got is not None, f"JAX {jax.__version__}: uint32[4] lowers now: the bug is fixed"
    name, message = got
    assert name == "VerificationError" and "operand #0 must be 1D memref of 8-bit" in message, \
        f"JAX {jax.__version__}: uint32[4] fails another way: {name}: {message}"
    print(f"the bug is still there in JAX {jax.__version__}: {name}: {message.splitlines()[0]}")
    return
  assert got is None, f"JAX {jax.__version__}: uint32[4] (16 bytes, as uint8[16]) did not lower: " \
                      f"{got[0]}: {got[1]}"
  print(f"JAX {jax.__version__} lowers both result refs: the bug is fixed")


if __name__ == "__main__":
  main()
