"""PallasCallTest's run of collective_copy_gmem_to_smem (Lane semantics): py/collective_copy_gmem_to_smem.py with its
compiler_params set so. Written by tools/jax_tests_other_class.py.

For `collfuzz import`: the kernel of JAX 0.11.2's
tests/pallas/mosaic_gpu_test.py::PallasCallTest.test_collective_copy_gmem_to_smem.

A cluster of 2 CTAs; each multicasts x (f32[128]) over the cluster axis into a scratch SMEM buffer,
waits on a 0-d barrier, and writes the buffer to its own row of y. The test asserts
y == stack([x, x]); `collfuzz import` keeps the kernel, the hand-written case
(../collective_copy_gmem_to_smem.json) the assertion. The input is the test's jnp.arange(128),
which the import keeps as an arange fill (0..127). Difference from the test: Warpgroup lowering
semantics (plgpu.kernel's default) where the test class sets its own.
"""
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(x_ref, y_ref, smem_ref, barrier_ref):
    plgpu.copy_gmem_to_smem(x_ref, smem_ref, barrier_ref, collective_axes="cluster")
    plgpu.barrier_wait(barrier_ref)
    plgpu.copy_smem_to_gmem(smem_ref, y_ref.at[lax.axis_index("cluster")])
    plgpu.wait_smem_to_gmem(0)

  kernel = plgpu.kernel(
      body,
      out_type=jax.ShapeDtypeStruct((2, 128), jnp.float32),
      scratch_types=[plgpu.SMEM((128,), jnp.float32), plgpu.Barrier()],
      cluster=(2,),
      cluster_names=("cluster",),
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane),
  )
  x = jnp.arange(128, dtype=jnp.float32)
  return kernel, [x]
